#pragma once

#include "evidence/evidence.h"

namespace npuperf::v1 {
class Evidence;
}  // namespace npuperf::v1

namespace npuperf::evidence {

// Fills the npuperf.v1.Evidence message from library evidence (the only file
// of evidence/ that includes generated protobuf code; no gRPC). Overwrites
// `out`. Fields without a library counterpart (operator_name, case_id,
// fingerprint, golden if not joined) are left for the caller to set.
// evidence_json carries ToJson(ev) verbatim.
void ToProto(const Evidence& ev, npuperf::v1::Evidence* out);

}  // namespace npuperf::evidence
