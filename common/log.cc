#include "common/log.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace npuperf {
namespace {

// Length of the valid UTF-8 sequence at s[i] (2..4), or 0 when there is none
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8Length(std::string_view s, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return n;
}

}  // namespace

std::string EscapeLogText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      uint32_t cp = 0;
      const size_t n = Utf8Length(text, i, &cp);
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
