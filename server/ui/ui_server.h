// The server's read-only web pages (docs/reports.md, "In the browser"): the
// report pages of report/ served at /ui on the metrics/HTTP port, for the
// team whose token was entered once in the login form. Data comes through
// ReadQueries and ComparisonQueries, scoped to the session's team exactly as
// the gRPC API scopes a token (another team's objects are 404). Security
// (docs/security.md, "In the browser"): sessions are stored as the sha256
// of a 256-bit random id with team and expiry; the cookie is HttpOnly,
// SameSite=Strict, Path=/ui (Secure on request); POSTs need a same-origin
// Origin or Referer (else 403); failed logins are throttled per peer
// (login_throttle.h, 429); a token= query parameter is 400 and tokens are
// never logged; logins return only to local /ui paths (ui_rules.h); every
// reply carries a Content-Security-Policy and no-store.
//
// Dependencies come in through the constructor and must outlive it. No
// gRPC. Thread-safe: Handle runs on the HTTP listener threads.
#pragma once

#include <chrono>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/metrics_http.h"
#include "server/compare/comparison_queries.h"
#include "server/core/auth.h"
#include "server/core/read_queries.h"
#include "server/store/store.h"
#include "server/ui/login_throttle.h"

namespace npuperf::server::ui {

struct UiOptions {
  // How long a login lasts (--ui-session-ttl). Default: 12 h.
  std::chrono::milliseconds session_ttl = std::chrono::hours(12);
  // Marks the cookie Secure (--ui-secure-cookie, or TLS configured).
  // Default: off.
  bool secure_cookie = false;
  // The teams that see device hosts on /ui/devices (--device-admin); with
  // authentication off, everyone.
  std::set<std::string> device_admins;
};

// The most rounds a page reads (pages of kMaxRoundsPage), and the verdicts
// the history page computes (each one comparison).
inline constexpr int kMaxUiRoundPages = 10;
inline constexpr int kMaxHistoryVerdicts = 100;

class UiServer {
 public:
  UiServer(Store& store, Authenticator& auth, ReadQueries& reads, ComparisonQueries& comparisons,
           Clock& clock, UiOptions options);

  // Answers one request below /ui (the route of MetricsHttpServer).
  HttpReply Handle(const HttpRequest& req);

 private:
  HttpReply Route(const HttpRequest& req);
  HttpReply LoginForm(const HttpRequest& req);
  HttpReply Login(const HttpRequest& req);
  HttpReply Logout(const HttpRequest& req);
  // A page for the session's team, or a redirect to the login form.
  HttpReply SessionPage(const HttpRequest& req);
  absl::StatusOr<std::string> RenderPage(const std::string& team, const HttpRequest& req);
  // The team of the request's live session; NOT_FOUND when it has none.
  absl::StatusOr<std::string> SessionTeam(const HttpRequest& req);

  absl::StatusOr<std::string> IndexPage(const std::string& team);
  absl::StatusOr<std::string> RoundPage(const std::string& team, const std::string& id);
  absl::StatusOr<std::string> CollectionPage(const std::string& team, const std::string& id);
  absl::StatusOr<std::string> ComparePage(const std::string& team, const HttpRequest& req);
  absl::StatusOr<std::string> HistoryPage(const std::string& team, const HttpRequest& req);
  // /ui/bisections (id empty: the list) and /ui/bisections/ID, as stored
  // (the reaper and GetBisection advance them).
  absl::StatusOr<std::string> BisectionsPage(const std::string& team, const std::string& id);
  // /ui/devices: the quarantines and the newest canaries (hosts for device
  // admins only).
  absl::StatusOr<std::string> DevicesPage(const std::string& team);
  // Every round a ListRounds query names (at most kMaxUiRoundPages pages).
  absl::StatusOr<std::vector<v1::Round>> AllRounds(const std::string& team,
                                                   v1::ListRoundsRequest req);
  bool SecureCookie(const HttpRequest& req) const;

  Store& store_;
  Authenticator& auth_;
  ReadQueries& reads_;
  ComparisonQueries& comparisons_;
  Clock& clock_;
  const UiOptions options_;
  LoginThrottle throttle_;
};

}  // namespace npuperf::server::ui
