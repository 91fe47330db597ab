#pragma once

#include <string_view>

namespace npuperf {

// Minimal structured logging to stderr: "<RFC3339 UTC> <LEVEL> <component>: msg".
// Thread-safe (one write(2) per line). Debian 12's Abseil predates absl/log.
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

}  // namespace npuperf
