#include "common/log.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace npuperf {

void Log(LogLevel level, std::string_view component, std::string_view message) {
  const char* name = level == LogLevel::kInfo ? "INFO" : level == LogLevel::kWarning ? "WARN" : "ERROR";
  // Logging is the one place besides RealClock that reads the wall clock: log
  // lines are for people, never for logic.
  std::string line = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  line.append(" ").append(name).append(" ").append(component).append(": ").append(message);
  line.push_back('\n');
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace npuperf
