#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuperf {

// Parses a device list such as "0-3,6" into sorted unique ids. Ids are
// 0..1023; empty items, reversed ranges and non-numbers are errors that quote
// the offending item.
absl::StatusOr<std::vector<int>> ParseDeviceRange(absl::string_view text);

// Formats sorted ids back into the shortest range form ("0-3,6").
std::string FormatDeviceRange(const std::vector<int>& ids);

// Parses a per-device map such as "0-3=Ascend910B2,4-7=Ascend950PR_9589".
// A device named twice is an error.
absl::StatusOr<std::map<int, std::string>> ParseDeviceMap(absl::string_view text);

}  // namespace npuperf
