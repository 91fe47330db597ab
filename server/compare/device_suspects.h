// Rounds a sick device produced (issue 33; docs/operations.md "Device
// health"): when a device's canaries quarantine it, every round it produced
// from its last passing canary (QuarantineRecord::suspect_since_ms) until its
// release is suspect, and a comparison resting on one says so, with the flag
// "device_suspect:baseline" or "device_suspect:candidate" in
// RoundComparison.flags. The verdict stands as measured: the flag tells a
// person or a bot to confirm it on another device (npuperf confirm), which
// never picks a quarantined one.
//
// Nothing is written: a round is suspect by its fingerprint's device and
// creation time against the device's canary quarantines, read once per
// device per call.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "npuperf/v1/comparison.pb.h"
#include "server/store/store.h"

namespace npuperf::server {

inline constexpr char kDeviceSuspectFlag[] = "device_suspect";

class DeviceSuspects {
 public:
  explicit DeviceSuspects(Store& store) : store_(store) {}

  // Why r is suspect ("quarantined by its canaries: ..."), or "" when it is
  // not (no canary quarantine of its device covers its creation).
  absl::StatusOr<std::string> Why(const v1::Round& r);

  // Adds "device_suspect:baseline" / ":candidate" to each comparison whose
  // round (by id, among rounds) is suspect.
  absl::Status Flag(const std::vector<const v1::Round*>& rounds,
                    google::protobuf::RepeatedPtrField<v1::RoundComparison>* comparisons);

 private:
  Store& store_;
  std::map<std::pair<std::string, int32_t>, std::vector<QuarantineRecord>> quarantines_;
};

// DeviceSuspects::Flag over every round of the sides (collections).
absl::Status FlagSuspectRounds(
    Store& store, const std::vector<const std::vector<v1::Round>*>& sides,
    google::protobuf::RepeatedPtrField<v1::RoundComparison>* comparisons);

}  // namespace npuperf::server
