#include "common/chip_health.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace npuperf {
namespace {

// Below this share of the rated clock the AI Core counts as down-clocked.
constexpr double kLowClockShare = 0.95;

}  // namespace

ChipHealth ClassifyHealth(std::string_view status) {
  const std::string s = absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(absl::string_view(status.data(), status.size())));
  if (s == "ok") return ChipHealth::kOk;
  if (s == "warning") return ChipHealth::kWarning;
  if (s == "alarm" || s == "critical") return ChipHealth::kCritical;
  return ChipHealth::kUnknown;
}

std::string CriticalReason(const v1::DeviceReading& reading) {
  if (ClassifyHealth(reading.health()) != ChipHealth::kCritical) return "";
  return absl::StrCat("npu-smi: Health Status ", reading.health(), " (error code ",
                      reading.error_code().empty() ? "none" : reading.error_code(), ")");
}

bool ClockLow(const v1::DeviceReading& reading) {
  if (reading.aicore_rated_mhz() <= 0 || reading.aicore_current_mhz() <= 0) return false;
  return reading.aicore_current_mhz() < kLowClockShare * reading.aicore_rated_mhz();
}

}  // namespace npuperf
