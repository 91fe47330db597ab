// UiServer: routing, the replies' security headers, login, logout and
// sessions. The pages themselves: page_data.cc.
#include "server/ui/ui_server.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/secure_random.h"
#include "common/sha256.h"
#include "report/html.h"
#include "report/report.h"
#include "server/ui/ui_rules.h"

namespace npuperf::server::ui {
namespace {

constexpr char kHtml[] = "text/html; charset=utf-8";
// The session id: 32 bytes (256 bits) from the CSPRNG, as 64 hex digits.
constexpr size_t kSessionIdBytes = 32;

// What every /ui reply carries: pages are self-contained (no script, no
// network), never cached, never framed, never content-sniffed.
void AddSecurityHeaders(HttpReply& r) {
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "same-origin");
}

HttpReply HtmlReply(int status, std::string body) {
  return HttpReply{status, kHtml, std::move(body), {}};
}

HttpReply ErrorPage(int status, absl::string_view message) {
  return HtmlReply(status, report::Page("error", absl::StrCat("npuperf: ", status),
                                        std::string(message), report::Link("/ui/", "start page")));
}

HttpReply Redirect(std::string location) {
  HttpReply r = HtmlReply(303, "");
  r.headers.emplace_back("Location", std::move(location));
  return r;
}

// The HTTP status of a failed page (NOT_FOUND also for another team's
// objects: their existence is not revealed). Internal errors are logged,
// not shown.
HttpReply StatusPage(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument: return ErrorPage(400, s.message());
    case absl::StatusCode::kNotFound: return ErrorPage(404, s.message());
    case absl::StatusCode::kFailedPrecondition: return ErrorPage(409, s.message());
    case absl::StatusCode::kResourceExhausted: return ErrorPage(429, s.message());
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted: return ErrorPage(503, "the store is unavailable; try again");
    default:
      LogError("ui", absl::StrCat("page failed: ", s.ToString()));
      return ErrorPage(500, "internal error (logged)");
  }
}

// Where the login form returns to after a login for this request.
std::string NextOf(const HttpRequest& req) {
  const std::string target = req.query.empty() ? req.path : req.path + "?" + req.query;
  return IsLocalUiPath(target) ? target : "/ui/";
}

}  // namespace

UiServer::UiServer(Store& store, Authenticator& auth, ReadQueries& reads,
                   ComparisonQueries& comparisons, Clock& clock, UiOptions options)
    : store_(store),
      auth_(auth),
      reads_(reads),
      comparisons_(comparisons),
      clock_(clock),
      options_(options),
      throttle_(clock) {}

HttpReply UiServer::Handle(const HttpRequest& req) {
  HttpReply r = Route(req);
  AddSecurityHeaders(r);
  return r;
}

HttpReply UiServer::Route(const HttpRequest& req) {
  for (const auto& [key, value] : req.params) {
    if (absl::EqualsIgnoreCase(key, "token")) {
      return ErrorPage(400, "token: tokens never go in URLs; log in with the form at /ui/login");
    }
  }
  const bool post = req.method == "POST";
  if (req.path == "/ui/login") return post ? Login(req) : LoginForm(req);
  if (req.path == "/ui/logout") {
    if (post) return Logout(req);
    HttpReply r = ErrorPage(405, "log out with POST (the button on every page)");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  if (post) {
    HttpReply r = ErrorPage(405, "pages are read-only: GET or HEAD");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  return SessionPage(req);
}

bool UiServer::SecureCookie(const HttpRequest& req) const {
  return options_.secure_cookie || req.tls;
}

HttpReply UiServer::LoginForm(const HttpRequest& req) {
  const std::string* next = req.Param("next");
  if (next != nullptr && !IsLocalUiPath(*next)) {
    return ErrorPage(400, "next: not a local /ui path");
  }
  return HtmlReply(200, report::RenderLoginPage(next != nullptr ? *next : "/ui/", ""));
}

HttpReply UiServer::Login(const HttpRequest& req) {
  if (!SameOrigin(req.Header("origin"), req.Header("referer"), req.Header("host"))) {
    return ErrorPage(403, "cross-site POST refused (Origin or Referer must match Host)");
  }
  if (!throttle_.Allowed(req.peer)) {
    HttpReply r =
        ErrorPage(429, absl::StrCat("too many failed logins from ", req.peer, "; try again later"));
    r.headers.emplace_back(
        "Retry-After",
        absl::StrCat(
            std::chrono::duration_cast<std::chrono::seconds>(LoginThrottle::kWindow).count()));
    return r;
  }
  auto form = ParseUrlEncoded(req.body);
  if (!form.ok()) return ErrorPage(400, absl::StrCat("malformed form: ", form.status().message()));
  std::string token, next = "/ui/";
  for (const auto& [key, value] : *form) {
    if (key == "token") token = std::string(absl::StripAsciiWhitespace(value));
    if (key == "next") next = value;
  }
  if (!IsLocalUiPath(next)) return ErrorPage(400, "next: not a local /ui path");
  if (token.empty()) return ErrorPage(400, "token: missing");
  auto who = auth_.Authenticate("Bearer " + token);
  if (!who.ok() || who->kind != PrincipalKind::kTeam) {
    throttle_.RecordFailure(req.peer);
    LogWarning("ui", absl::StrCat("failed login from ", req.peer));
    return HtmlReply(401, report::RenderLoginPage(next, "unknown team token"));
  }
  throttle_.RecordSuccess(req.peer);
  const int64_t now_ms = ToUnixMillis(clock_.SystemNow());
  if (auto swept = store_.DeleteExpiredUiSessions(now_ms); !swept.ok()) {
    return StatusPage(swept.status());
  }
  auto id = SecureRandomHex(kSessionIdBytes);
  if (!id.ok()) return StatusPage(id.status());
  const int64_t ttl_ms = options_.session_ttl.count();
  if (auto s = store_.InsertUiSession(Sha256Hex(*id), who->name, now_ms, now_ms + ttl_ms);
      !s.ok()) {
    return StatusPage(s);
  }
  LogInfo("ui", absl::StrCat("login of team ", who->name, " from ", req.peer));
  HttpReply r = Redirect(next);
  r.headers.emplace_back("Set-Cookie", SessionCookieValue(*id, ttl_ms / 1000, SecureCookie(req)));
  return r;
}

HttpReply UiServer::Logout(const HttpRequest& req) {
  if (!SameOrigin(req.Header("origin"), req.Header("referer"), req.Header("host"))) {
    return ErrorPage(403, "cross-site POST refused (Origin or Referer must match Host)");
  }
  const std::string id = SessionIdFromCookies(req.Header("cookie"));
  if (!id.empty()) {
    if (auto s = store_.DeleteUiSession(Sha256Hex(id)); !s.ok()) return StatusPage(s);
  }
  HttpReply r = Redirect("/ui/login");
  r.headers.emplace_back("Set-Cookie", ClearedCookieValue(SecureCookie(req)));
  return r;
}

absl::StatusOr<std::string> UiServer::SessionTeam(const HttpRequest& req) {
  const std::string id = SessionIdFromCookies(req.Header("cookie"));
  if (id.empty()) return absl::NotFoundError("no session");
  return store_.LookupUiSession(Sha256Hex(id), ToUnixMillis(clock_.SystemNow()));
}

HttpReply UiServer::SessionPage(const HttpRequest& req) {
  auto team = SessionTeam(req);
  if (absl::IsNotFound(team.status())) {
    return Redirect("/ui/login?next=" + UrlEncode(NextOf(req)));
  }
  if (!team.ok()) return StatusPage(team.status());
  auto page = RenderPage(*team, req);
  if (!page.ok()) return StatusPage(page.status());
  return HtmlReply(200, *std::move(page));
}

}  // namespace npuperf::server::ui
