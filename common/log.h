#pragma once

#include <string>
#include <string_view>

namespace npuperf {

// Minimal structured logging to stderr: "<RFC3339 UTC> <LEVEL> <component>: msg".
// Thread-safe (one write(2) per line). Debian 12's Abseil predates absl/log.
//
// One call is always exactly one line: the component and the message are
// escaped (EscapeLogText), so runner output, operator names and other
// user-supplied text inside a message cannot end the line, forge another one
// or send terminal control sequences.
enum class LogLevel { kInfo, kWarning, kError };

void Log(LogLevel level, std::string_view component, std::string_view message);

inline void LogInfo(std::string_view component, std::string_view message) {
  Log(LogLevel::kInfo, component, message);
}
inline void LogWarning(std::string_view component, std::string_view message) {
  Log(LogLevel::kWarning, component, message);
}
inline void LogError(std::string_view component, std::string_view message) {
  Log(LogLevel::kError, component, message);
}

// The text as one printable line, reversibly: `\` becomes `\\`; newline, carriage
// return and tab become `\n`, `\r`, `\t`; every other ASCII control character,
// DEL and every byte that is not part of valid UTF-8 become `\xHH`; the C1
// controls U+0080..U+009F and the line/paragraph separators U+2028/U+2029
// become `\uHHHH`. Valid UTF-8 text (names such as 说明.md) stays as it is.
std::string EscapeLogText(std::string_view text);

}  // namespace npuperf
