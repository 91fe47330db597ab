#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

// Internal string helpers of evidence/. Debian 12's Abseil has its own
// absl::string_view (not std::string_view), so absl::StrCat does not take
// std::string_view; these adapters bridge the two.
namespace npuperf::evidence::internal {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

template <typename T>
decltype(auto) AdaptArg(const T& v) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return ToAbsl(std::string_view(v));
  } else {
    return (v);
  }
}

// absl::StrCat accepting std::string_view too.
template <typename... Args>
std::string Cat(const Args&... args) {
  return absl::StrCat(AdaptArg(args)...);
}

// The message of a status as a std::string.
inline std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// `s` with `prefix: ` added to the message, code kept (style.md R2).
inline absl::Status Annotate(const absl::Status& s, std::string_view prefix) {
  return absl::Status(s.code(), Cat(prefix, ": ", ToStd(s.message())));
}

inline bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
inline bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
inline bool ConsumePrefix(std::string_view* s, std::string_view p) {
  if (!StartsWith(*s, p)) return false;
  s->remove_prefix(p.size());
  return true;
}

}  // namespace npuperf::evidence::internal
