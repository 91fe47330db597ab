// Rounds a sick device produced (issue 33; docs/operations.md "Canaries"):
// when a device's canaries quarantine it, every round it produced from its
// last passing canary (QuarantineRecord::suspect_since_ms) until its release
// is suspect, and a comparison resting on one says so, with the flag
// "device_suspect:baseline" or "device_suspect:candidate" in
// RoundComparison.flags. The verdict stands as measured: the flag tells a
// person or a bot to confirm it on another device (npuperf confirm), which
// never picks a quarantined one.
//
// Nothing is written: a round is suspect by its fingerprint's device and
// creation time against the device's canary quarantines, read once per
// device per call.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "npuperf/v1/comparison.pb.h"
#include "server/store/store.h"

namespace npuperf::server {

inline constexpr char kDeviceSuspectFlag[] = "device_suspect";

// Adds "device_suspect:baseline" / ":candidate" to each comparison whose
// round (by id, among every round of the sides) is suspect.
absl::Status FlagSuspectRounds(
    Store& store, const std::vector<const std::vector<v1::Round>*>& sides,
    google::protobuf::RepeatedPtrField<v1::RoundComparison>* comparisons);

// The same for the one comparison of two rounds.
absl::Status FlagSuspectRounds(Store& store, const v1::Round& baseline, const v1::Round& candidate,
                               v1::RoundComparison* comparison);

}  // namespace npuperf::server
