// The decisions of the web pages (server/ui/), pure so each is tested alone:
// where a login may send the browser back to, whether a POST comes from the
// pages themselves (CSRF), and the session cookie. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuperf::server::ui {

// The session cookie's name.
inline constexpr char kSessionCookie[] = "npuperf_session";

// Whether a login may redirect to `next`: only a local path, /ui or below
// it. Refused: anything not starting with "/ui" + end, '/' or '?'; a
// scheme or host ("//host", "http://"), a backslash (browsers read "/\\host"
// as "//host"), "//" anywhere, control characters and spaces. An open
// redirect would let a link to our login page send a freshly logged-in user
// to a look-alike site.
bool IsLocalUiPath(absl::string_view next);

// CSRF check of a POST: the Origin header (else the Referer) must name the
// host of the Host header (scheme://HOST[/...], HOST compared exactly, case
// aside). Neither present, "null", or another host: false. SameSite=Strict
// cookies already keep other sites' POSTs out of a session; this also
// covers the login form (no session yet) and older browsers.
bool SameOrigin(absl::string_view origin, absl::string_view referer, absl::string_view host);

// The value of the session cookie in a Cookie header ("a=1; npuperf_session=X"),
// or "" when it is absent or not 64 lowercase hex digits.
std::string SessionIdFromCookies(absl::string_view cookie_header);

// The Set-Cookie value of a new session: HttpOnly, SameSite=Strict,
// Path=/ui, Max-Age (seconds), and Secure when `secure`.
std::string SessionCookieValue(absl::string_view id, int64_t max_age_s, bool secure);
// The Set-Cookie value that removes it (Max-Age=0).
std::string ClearedCookieValue(bool secure);

// A round id parameter: a positive decimal number; INVALID_ARGUMENT naming
// `field` otherwise.
absl::StatusOr<int64_t> ParseRoundId(absl::string_view field, absl::string_view text);

}  // namespace npuperf::server::ui
