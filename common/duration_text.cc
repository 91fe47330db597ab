#include "common/duration_text.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace npuperf {

absl::StatusOr<std::chrono::milliseconds> ParseDurationText(absl::string_view text) {
  // "ms" before "m" and "s".
  static constexpr std::pair<absl::string_view, int64_t> kUnits[] = {
      {"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
  for (const auto& [unit, ms] : kUnits) {
    if (!absl::EndsWith(text, unit)) continue;
    int64_t n = 0;
    const absl::string_view number = text.substr(0, text.size() - unit.size());
    // Digits only: SimpleAtoi would also take a sign and surrounding blanks.
    const bool digits = !number.empty() && number.find_first_not_of("0123456789") == number.npos;
    if (digits && absl::SimpleAtoi(number, &n) && n > 0 &&
        n <= std::numeric_limits<int64_t>::max() / ms) {
      return std::chrono::milliseconds(n * ms);
    }
    break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", text, "': want a positive duration <n>ms|s|m|h|d, e.g. 7d"));
}

}  // namespace npuperf
