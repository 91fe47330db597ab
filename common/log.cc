#include "common/log.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace npuperf {

void Log(LogLevel level, std::string_view component, std::string_view message) {
  const char* name = level == LogLevel::kInfo      ? "INFO"
                     : level == LogLevel::kWarning ? "WARN"
                                                   : "ERROR";
  // Log lines carry real time even under a fake clock: they are for people,
  // never for logic.
  RealClock clock;
  std::string line = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromChrono(clock.SystemNow()),
                                      absl::UTCTimeZone());
  line.append(" ").append(name).append(" ").append(component).append(": ").append(message);
  line.push_back('\n');
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace npuperf
