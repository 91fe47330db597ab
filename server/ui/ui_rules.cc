#include "server/ui/ui_rules.h"

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/sha256.h"

namespace npuperf::server::ui {
namespace {

// HOST of "scheme://HOST/..."; "" when text has no scheme.
absl::string_view HostOfUrl(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos || scheme == 0) return "";
  absl::string_view rest = url.substr(scheme + 3);
  const size_t end = rest.find_first_of("/?#");
  return end == absl::string_view::npos ? rest : rest.substr(0, end);
}

}  // namespace

bool IsLocalUiPath(absl::string_view next) {
  if (!absl::StartsWith(next, "/ui")) return false;
  if (next.size() > 3 && next[3] != '/' && next[3] != '?') return false;
  if (absl::StrContains(next, "//") || absl::StrContains(next, "\\")) return false;
  for (const char c : next) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool SameOrigin(absl::string_view origin, absl::string_view referer, absl::string_view host) {
  if (host.empty()) return false;
  const absl::string_view source = !origin.empty() ? origin : referer;
  const absl::string_view named = HostOfUrl(source);
  return !named.empty() && absl::EqualsIgnoreCase(named, host);
}

std::string SessionIdFromCookies(absl::string_view cookie_header) {
  for (absl::string_view part : absl::StrSplit(cookie_header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos || part.substr(0, eq) != kSessionCookie) continue;
    const absl::string_view value = part.substr(eq + 1);
    return IsSha256Hex(std::string_view(value.data(), value.size())) ? std::string(value)
                                                                     : std::string();
  }
  return "";
}

std::string SessionCookieValue(absl::string_view id, int64_t max_age_s, bool secure) {
  return absl::StrCat(kSessionCookie, "=", id,
                      "; HttpOnly; SameSite=Strict; Path=/ui; Max-Age=", max_age_s,
                      secure ? "; Secure" : "");
}

std::string ClearedCookieValue(bool secure) {
  return absl::StrCat(kSessionCookie, "=; HttpOnly; SameSite=Strict; Path=/ui; Max-Age=0",
                      secure ? "; Secure" : "");
}

absl::StatusOr<int64_t> ParseRoundId(absl::string_view field, absl::string_view text) {
  int64_t id = 0;
  if (text.empty() || !absl::c_all_of(text, absl::ascii_isdigit) || !absl::SimpleAtoi(text, &id) ||
      id <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": not a round id"));
  }
  return id;
}

}  // namespace npuperf::server::ui
