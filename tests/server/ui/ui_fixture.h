// A real /ui over HTTP for the web-page tests: the scheduler fixture's
// SQLite store and FakeClock, an Authenticator with two team tokens and an
// agent token, and MetricsHttpServer on port 0 serving UiServer.
#pragma once

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/metrics_http.h"
#include "common/sha256.h"
#include "server/compare/comparison_queries.h"
#include "server/core/auth.h"
#include "server/core/read_queries.h"
#include "server/ui/ui_rules.h"
#include "server/ui/ui_server.h"
#include "tests/fakes/http_client.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server::ui {

class UiFixture : public SchedulerFixture {
 protected:
  void SetUp() override {
    auto server = MetricsHttpServer::Start(
        "127.0.0.1:0", {},
        {{"/ui", HttpRoute{[this](const HttpRequest& r) { return ui_.Handle(r); }, true}}});
    ASSERT_TRUE(server.ok()) << server.status();
    http_ = *std::move(server);
    port_ = http_->port();
  }

  std::string Origin() const { return absl::StrCat("http://127.0.0.1:", port_); }

  testing::HttpAnswer Get(const std::string& target, const std::string& cookie = "") {
    return testing::SendHttp(
        port_, testing::HttpRequestText("GET", target, port_,
                                        cookie.empty() ? "" : "Cookie: " + cookie + "\r\n"));
  }
  // A POST from the pages themselves (Origin matches Host) unless headers say otherwise.
  testing::HttpAnswer Post(const std::string& target, const std::string& body,
                           const std::string& cookie = "", const std::string* headers = nullptr) {
    std::string h = headers != nullptr ? *headers : "Origin: " + Origin() + "\r\n";
    if (!cookie.empty()) h += "Cookie: " + cookie + "\r\n";
    h += "Content-Type: application/x-www-form-urlencoded\r\n";
    return testing::SendHttp(port_, testing::HttpRequestText("POST", target, port_, h, body));
  }
  // Logs in with `token`; the "npuperf_session=<id>" cookie, "" on failure.
  std::string LogIn(const std::string& token = "tok-team") {
    auto got = Post("/ui/login", "token=" + token + "&next=%2Fui%2F");
    if (got.status != 303) return "";
    const std::string set = got.Header("set-cookie");
    return set.substr(0, set.find(';'));
  }

  // One finished round of "team" (collection c, operator op, case c0).
  int64_t Round() {
    Submit();
    auto a = Lease(Register("h" + std::to_string(++hosts_)), 0);
    EXPECT_TRUE(a);
    if (!a) return 0;
    auto stored = Succeed(*a, "u" + std::to_string(hosts_), 12.5);
    EXPECT_TRUE(stored.ok()) << stored.status();
    return stored.ok() ? stored->round_id() : 0;
  }

  Authenticator auth_{*store_,
                      {{Sha256Hex("tok-team"), Principal{PrincipalKind::kTeam, "team"}},
                       {Sha256Hex("tok-other"), Principal{PrincipalKind::kTeam, "other"}},
                       {Sha256Hex("tok-agent"), Principal{PrincipalKind::kAgent, "h1"}}},
                      /*required=*/true};
  ReadQueries reads_{*store_};
  ComparisonQueries comparisons_{*store_, clock_};
  // "team" is a device admin (sees hosts on /ui/devices), "other" is not.
  UiServer ui_{*store_,      auth_,  reads_,
               comparisons_, clock_, UiOptions{std::chrono::hours(12), false, {"team"}}};
  std::unique_ptr<MetricsHttpServer> http_;
  int port_ = 0;
  int hosts_ = 0;
};

}  // namespace npuperf::server::ui
