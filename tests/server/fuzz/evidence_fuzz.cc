// libFuzzer target: the evidence validator on arbitrary Evidence messages (the bytes are parsed
// as a serialized npuperf.v1.Evidence; seeds in corpus/evidence). Beyond "no crash", it checks
// that accepted evidence holds only finite durations and in-range bound ratios, that at most 100
// violations come back, and that the rejection reason stays short.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "npuperf/v1/evidence.pb.h"
#include "server/core/evidence_validator.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void CheckAccepted(const npuperf::v1::Evidence& e) {
  Require(std::isfinite(e.duration().aggregate_us()) && e.duration().aggregate_us() >= 0);
  for (double s : e.duration().samples_us()) Require(std::isfinite(s) && s >= 0);
  for (const auto& [name, ratio] : e.bound().ratios()) Require(ratio >= 0 && ratio <= 1);
  for (const auto& g : e.metrics()) {
    for (const auto& [name, value] : g.fields()) Require(std::isfinite(value));
  }
  Require(e.warnings_size() <= 64);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npuperf::v1::Evidence e;
  if (!e.ParseFromArray(data, static_cast<int>(size))) return 0;
  const auto violations = npuperf::server::ValidateEvidence(e);
  Require(violations.size() <= 100);
  if (violations.empty()) {
    CheckAccepted(e);
    return 0;
  }
  Require(npuperf::server::EvidenceRejection(violations).size() < 4096);
  return 0;
}
