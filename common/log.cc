#include "common/log.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/input_rules.h"

namespace npuperf {

std::string EscapeLogText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      uint32_t cp = 0;
      const size_t n = Utf8SequenceLength(text, i, &cp);
      if (n == 0) {
        absl::StrAppendFormat(&out, "\\x%02X", c);
        ++i;
      } else {
        if ((cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029) {
          absl::StrAppendFormat(&out, "\\u%04X", cp);
        } else {
          out.append(text.substr(i, n));
        }
        i += n;
      }
      continue;
    }
    switch (c) {
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        if (c < 0x20 || c == 0x7F) {
          absl::StrAppendFormat(&out, "\\x%02X", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  return out;
}

void Log(LogLevel level, std::string_view component, std::string_view message) {
  const char* name = level == LogLevel::kInfo      ? "INFO"
                     : level == LogLevel::kWarning ? "WARN"
                                                   : "ERROR";
  // Log lines carry real time even under a fake clock: they are for people,
  // never for logic.
  RealClock clock;
  std::string line = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromChrono(clock.SystemNow()),
                                      absl::UTCTimeZone());
  line.append(" ").append(name).append(" ").append(EscapeLogText(component)).append(": ");
  line.append(EscapeLogText(message));
  line.push_back('\n');
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace npuperf
