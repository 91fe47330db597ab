#pragma once

#include <chrono>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuperf {

// A positive duration written "<n><unit>" with unit ms, s, m, h or d
// ("90s", "36h", "7d"), as flags and commands take them. INVALID_ARGUMENT
// for anything else (no sign, no fraction, no overflow).
absl::StatusOr<std::chrono::milliseconds> ParseDurationText(absl::string_view text);

}  // namespace npuperf
