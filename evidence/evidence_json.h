#pragma once

#include <string>
#include <string_view>

#include "evidence/evidence.h"

namespace npuperf::evidence {

// Pure functions; thread-safe.
//
// evidence.json: the stable contract for bots (every key documented in
// docs/evidence.md). Pretty-printed (indent 2), keys in a fixed order, with a
// trailing newline. Bumps `schema_version` on incompatible changes.
inline constexpr int kEvidenceSchemaVersion = 1;
std::string ToJson(const Evidence& ev);

// evidence_status.json (reference §8.10 shape): target, seven_metric_status,
// per_core_status, per_core_claim_allowed (always false: process-scoped) and
// the reference-format bound_diagnosis object.
std::string ToStatusJson(const Evidence& ev);

}  // namespace npuperf::evidence
