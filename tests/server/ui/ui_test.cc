// The web pages (server/ui/) over a real socket: login and its cookie, CSRF,
// the login throttle, tokens never in URLs, team scoping, redirects, session
// expiry and logout, every page, and the HTTP limits.
#include <string>

#include "absl/strings/match.h"
#include "server/core/limits.h"
#include "server/ui/ui_server.h"
#include "tests/server/ui/ui_fixture.h"

namespace npuperf::server::ui {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

bool Has(const std::string& text, const std::string& part) { return absl::StrContains(text, part); }

class UiTest : public UiFixture {};

TEST_F(UiTest, LoginSetsAHardenedSessionCookieAndReturnsToNext) {
  auto got = Post("/ui/login", "token=tok-team&next=%2Fui%2Frounds%2F7");
  ASSERT_EQ(got.status, 303) << got.body;
  EXPECT_EQ(got.Header("location"), "/ui/rounds/7");
  const std::string cookie = got.Header("set-cookie");
  EXPECT_TRUE(Has(cookie, "; HttpOnly")) << cookie;
  EXPECT_TRUE(Has(cookie, "; SameSite=Strict")) << cookie;
  EXPECT_TRUE(Has(cookie, "; Path=/ui")) << cookie;
  EXPECT_TRUE(Has(cookie, "; Max-Age=43200")) << cookie;  // the 12 h default
  EXPECT_FALSE(Has(cookie, "Secure")) << cookie;
  const std::string id = SessionIdFromCookies(cookie.substr(0, cookie.find(';')));
  ASSERT_EQ(id.size(), 64u) << "256 random bits as hex";
  // Only the hash of the id is stored.
  EXPECT_EQ(store_->LookupUiSession(Sha256Hex(id), ToUnixMillis(clock_.SystemNow())).value_or(""),
            "team");
  EXPECT_TRUE(
      absl::IsNotFound(store_->LookupUiSession(id, ToUnixMillis(clock_.SystemNow())).status()));
}

TEST_F(UiTest, SecureCookieWhenConfigured) {
  UiServer secure(*store_, auth_, reads_, comparisons_, clock_, UiOptions{hours(1), true, {}});
  HttpRequest req;
  req.method = "POST";
  req.path = "/ui/login";
  req.headers = {{"host", "h:1"}, {"origin", "https://h:1"}};
  req.body = "token=tok-team";
  req.peer = "10.0.0.1";
  HttpReply r = secure.Handle(req);
  ASSERT_EQ(r.status, 303);
  std::string cookie;
  for (const auto& [k, v] : r.headers) {
    if (k == "Set-Cookie") cookie = v;
  }
  EXPECT_TRUE(absl::EndsWith(cookie, "; Max-Age=3600; Secure")) << cookie;
}

TEST_F(UiTest, WrongOrAgentTokenIsRefusedWithTheForm) {
  auto bad = Post("/ui/login", "token=nope");
  EXPECT_EQ(bad.status, 401);
  EXPECT_TRUE(Has(bad.body, "unknown team token"));
  EXPECT_TRUE(Has(bad.body, "name=\"token\""));
  EXPECT_EQ(bad.Header("set-cookie"), "");
  EXPECT_EQ(Post("/ui/login", "token=tok-agent").status, 401) << "agent tokens open no pages";
  EXPECT_EQ(Post("/ui/login", "next=%2Fui%2F").status, 400);
}

TEST_F(UiTest, PostsWithoutASameOriginOriginOrRefererAre403) {
  const std::string none = "";
  EXPECT_EQ(Post("/ui/login", "token=tok-team", "", &none).status, 403);
  const std::string evil = "Origin: http://evil.example\r\n";
  EXPECT_EQ(Post("/ui/login", "token=tok-team", "", &evil).status, 403);
  const std::string null_origin = "Origin: null\r\n";
  EXPECT_EQ(Post("/ui/login", "token=tok-team", "", &null_origin).status, 403);
  const std::string evil_referer = "Referer: http://evil.example/ui/login\r\n";
  EXPECT_EQ(Post("/ui/login", "token=tok-team", "", &evil_referer).status, 403);
  const std::string referer = "Referer: " + Origin() + "/ui/login?next=%2Fui%2F\r\n";
  EXPECT_EQ(Post("/ui/login", "token=tok-team", "", &referer).status, 303);
  const std::string cookie = LogIn();
  EXPECT_EQ(Post("/ui/logout", "", cookie, &evil).status, 403);
  EXPECT_EQ(Get("/ui/", cookie).status, 200) << "a refused logout keeps the session";
}

TEST_F(UiTest, FiveFailedLoginsPerPeerThen429UntilTheWindowPasses) {
  for (int i = 0; i < LoginThrottle::kMaxFailures; ++i) {
    EXPECT_EQ(Post("/ui/login", "token=wrong").status, 401) << i;
  }
  auto limited = Post("/ui/login", "token=tok-team");
  EXPECT_EQ(limited.status, 429) << "even a good token, once the peer is throttled";
  EXPECT_EQ(limited.Header("retry-after"), "900");
  clock_.Advance(minutes(14));
  EXPECT_EQ(Post("/ui/login", "token=tok-team").status, 429);
  clock_.Advance(minutes(1));
  EXPECT_EQ(Post("/ui/login", "token=tok-team").status, 303);
}

TEST_F(UiTest, TokenInAnyUrlIs400) {
  for (const char* target : {"/ui/?token=tok-team", "/ui/rounds/1?token=x", "/ui/login?TOKEN=x",
                             "/ui/history?op=op&token="}) {
    auto got = Get(target);
    EXPECT_EQ(got.status, 400) << target;
    EXPECT_TRUE(Has(got.body, "token: tokens never go in URLs")) << target;
  }
  EXPECT_EQ(Post("/ui/login?token=tok-team", "").status, 400);
}

TEST_F(UiTest, AnotherTeamsObjectsAre404) {
  const int64_t round = Round();
  ASSERT_GT(round, 0);
  const std::string mine = LogIn("tok-team"), theirs = LogIn("tok-other");
  const std::string path = "/ui/rounds/" + std::to_string(round);
  EXPECT_EQ(Get(path, mine).status, 200);
  EXPECT_EQ(Get(path, theirs).status, 404);
  v1::GetRoundRequest req;
  req.set_round_id(round);
  const std::string collection = reads_.GetRound("team", req)->round().collection_id();
  EXPECT_EQ(Get("/ui/collections/" + collection, theirs).status, 404);
  const std::string pair = std::to_string(round);
  EXPECT_EQ(Get("/ui/compare?a=" + pair + "&b=" + pair, theirs).status, 404);
  EXPECT_EQ(Get("/ui/rounds/999999", mine).status, 404);
}

TEST_F(UiTest, LoginReturnsOnlyToLocalUiPaths) {
  for (const char* next : {"%2F%2Fevil.example", "%2F%5Cevil.example", "http%3A%2F%2Fevil.example",
                           "%2Fuiz", "%2Fui%2F%2Fevil.example", "%2Fmetrics", "javascript%3Ax",
                           "%2Fui%2F%0D%0ASet-Cookie%3A+x"}) {
    auto got = Post("/ui/login", std::string("token=tok-team&next=") + next);
    EXPECT_EQ(got.status, 400) << next;
    EXPECT_TRUE(Has(got.body, "next: not a local /ui path")) << next;
    EXPECT_EQ(Get(std::string("/ui/login?next=") + next).status, 400) << next;
  }
  EXPECT_EQ(Post("/ui/login", "token=tok-team&next=%2Fui").Header("location"), "/ui");
  EXPECT_EQ(Post("/ui/login", "token=tok-team&next=%2Fui%3Fx%3D1").Header("location"), "/ui?x=1");
  EXPECT_EQ(Post("/ui/login", "token=tok-team").Header("location"), "/ui/");
}

TEST_F(UiTest, WithoutASessionPagesRedirectToTheLoginForm) {
  auto got = Get("/ui/history?op=op");
  EXPECT_EQ(got.status, 303);
  EXPECT_EQ(got.Header("location"), "/ui/login?next=%2Fui%2Fhistory%3Fop%3Dop");
  auto form = Get("/ui/login?next=%2Fui%2Fhistory%3Fop%3Dop");
  EXPECT_EQ(form.status, 200);
  EXPECT_TRUE(Has(form.body, "data-page=\"login\""));
  EXPECT_TRUE(Has(form.body, "<form method=\"post\" action=\"/ui/login\""));
  EXPECT_TRUE(Has(form.body, "value=\"/ui/history?op=op\""));
  EXPECT_EQ(Get("/ui/", "npuperf_session=" + std::string(64, 'a')).status, 303) << "unknown id";
  EXPECT_EQ(Get("/ui/", "npuperf_session=short").status, 303);
}

TEST_F(UiTest, LoginFormEscapesItsNext) {
  auto form = Get("/ui/login?next=%2Fui%2F%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E");
  EXPECT_EQ(form.status, 200);
  EXPECT_FALSE(Has(form.body, "<script>"));
  EXPECT_TRUE(Has(form.body, "value=\"/ui/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""))
      << form.body;
}

TEST_F(UiTest, ExpiredSessionRedirectsToLogin) {
  const std::string cookie = LogIn();
  ASSERT_FALSE(cookie.empty());
  clock_.Advance(hours(12) - seconds(1));
  EXPECT_EQ(Get("/ui/", cookie).status, 200);
  clock_.Advance(seconds(1));
  auto got = Get("/ui/", cookie);
  EXPECT_EQ(got.status, 303);
  EXPECT_EQ(got.Header("location"), "/ui/login?next=%2Fui%2F");
}

TEST_F(UiTest, LogoutDeletesTheSessionInTheStore) {
  const std::string cookie = LogIn();
  const std::string id = SessionIdFromCookies(cookie);
  ASSERT_FALSE(id.empty());
  auto got = Post("/ui/logout", "", cookie);
  EXPECT_EQ(got.status, 303);
  EXPECT_EQ(got.Header("location"), "/ui/login");
  EXPECT_TRUE(Has(got.Header("set-cookie"),
                  "npuperf_session=; HttpOnly; SameSite=Strict; Path=/ui; Max-Age=0"));
  EXPECT_TRUE(absl::IsNotFound(
      store_->LookupUiSession(Sha256Hex(id), ToUnixMillis(clock_.SystemNow())).status()));
  EXPECT_EQ(Get("/ui/", cookie).status, 303) << "the old cookie is dead";
  EXPECT_EQ(Get("/ui/logout", cookie).status, 405);
}

TEST_F(UiTest, EveryPageAnswers200WithItsElements) {
  const int64_t first = Round();
  clock_.Advance(seconds(1));
  const int64_t second = Round();
  ASSERT_GT(second, first);
  const std::string cookie = LogIn();
  v1::GetRoundRequest req;
  req.set_round_id(second);
  const std::string collection = reads_.GetRound("team", req)->round().collection_id();
  v1::GetRoundRequest req1;
  req1.set_round_id(first);
  const std::string collection1 = reads_.GetRound("team", req1)->round().collection_id();

  auto index = Get("/ui/", cookie);
  EXPECT_EQ(index.status, 200);
  EXPECT_TRUE(Has(index.body, "data-page=\"index\""));
  EXPECT_TRUE(Has(index.body, "href=\"/ui/collections/" + collection + "\""));
  EXPECT_TRUE(Has(index.body, "href=\"/ui/rounds/" + std::to_string(second) + "\""));
  EXPECT_TRUE(Has(index.body, "action=\"/ui/logout\""));

  auto round = Get("/ui/rounds/" + std::to_string(second), cookie);
  EXPECT_EQ(round.status, 200);
  EXPECT_TRUE(Has(round.body, "data-page=\"round\""));
  EXPECT_TRUE(Has(round.body, "href=\"/ui/collections/" + collection + "\""));
  EXPECT_TRUE(Has(round.body, "href=\"/ui/history?op=op&amp;case=c0\""));

  auto col = Get("/ui/collections/" + collection, cookie);
  EXPECT_EQ(col.status, 200);
  EXPECT_TRUE(Has(col.body, "data-page=\"collection\""));
  EXPECT_TRUE(Has(col.body, "<svg")) << "the sparkline of the case's history";

  auto cmp = Get("/ui/compare?a=" + std::to_string(first) + "&b=" + std::to_string(second), cookie);
  EXPECT_EQ(cmp.status, 200) << cmp.body;
  EXPECT_TRUE(Has(cmp.body, "data-page=\"comparison\""));
  auto cmp_collections = Get("/ui/compare?a=" + collection1 + "&b=" + collection, cookie);
  EXPECT_EQ(cmp_collections.status, 200) << cmp_collections.body;

  auto history = Get("/ui/history?op=op&case=c0", cookie);
  EXPECT_EQ(history.status, 200);
  EXPECT_TRUE(Has(history.body, "data-page=\"history\""));
  EXPECT_EQ(Get("/ui", cookie).status, 200);
  EXPECT_EQ(Get("/ui/nothing-here", cookie).status, 404);
}

TEST_F(UiTest, BadParametersAre400NamingThem) {
  const std::string cookie = LogIn();
  auto round = Get("/ui/rounds/abc", cookie);
  EXPECT_EQ(round.status, 400);
  EXPECT_TRUE(Has(round.body, "round id: not a round id"));
  EXPECT_TRUE(Has(Get("/ui/compare?a=1", cookie).body, "b: missing"));
  EXPECT_TRUE(Has(Get("/ui/compare?b=1", cookie).body, "a: missing"));
  auto mixed = Get("/ui/compare?a=1&b=c-x", cookie);
  EXPECT_EQ(mixed.status, 400);
  EXPECT_TRUE(Has(mixed.body, "b: compare two round ids or two collection ids"));
  auto history = Get("/ui/history", cookie);
  EXPECT_EQ(history.status, 400);
  EXPECT_TRUE(Has(history.body, "op: missing"));
  auto long_op = Get("/ui/history?op=" + std::string(kMaxOperatorNameBytes + 1, 'o'), cookie);
  EXPECT_EQ(long_op.status, 400);
  EXPECT_TRUE(Has(long_op.body, "op: longer than"));
  auto long_case = Get("/ui/history?op=op&case=" + std::string(kMaxCaseIdBytes + 1, 'c'), cookie);
  EXPECT_EQ(long_case.status, 400);
  EXPECT_TRUE(Has(long_case.body, "case: longer than"));
}

TEST_F(UiTest, EveryReplyCarriesTheSecurityHeaders) {
  const std::string cookie = LogIn();
  for (const auto& got : {Get("/ui/", cookie), Get("/ui/login"), Get("/ui/rounds/x", cookie),
                          Get("/ui/"), Post("/ui/login", "token=wrong")}) {
    EXPECT_EQ(got.Header("content-security-policy"),
              "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    EXPECT_EQ(got.Header("x-content-type-options"), "nosniff");
    EXPECT_EQ(got.Header("cache-control"), "no-store");
    EXPECT_EQ(got.Header("x-frame-options"), "DENY");
  }
}

TEST_F(UiTest, HttpLimitsHoldOnTheUiRoutes) {
  const std::string cookie = LogIn();
  EXPECT_EQ(testing::SendHttp(port_, testing::HttpRequestText("PUT", "/ui/", port_)).status, 405);
  EXPECT_EQ(testing::SendHttp(port_, testing::HttpRequestText("DELETE", "/ui/login", port_)).status,
            405);
  EXPECT_EQ(Post("/ui/", "x=1", cookie).status, 405) << "pages are read-only";
  EXPECT_EQ(Post("/ui/login", "token=" + std::string(kMaxHttpBodyBytes, 'x')).status, 413);
  EXPECT_EQ(Get("/ui/history?op=" + std::string(kMaxHttpTargetBytes, 'o'), cookie).status, 414);
  EXPECT_EQ(Get("/ui/history?op=%G1", cookie).status, 400);
}

TEST_F(UiTest, BisectionPagesShowTheCulpritEscapedAndOnlyToItsTeam) {
  BisectionRecord rec;
  rec.team = "team";
  rec.idempotency_key = "k";
  v1::Bisection& b = rec.bisection;
  b.set_operator_name("apply_adam");
  b.set_state(v1::BISECTION_STATE_DONE);
  b.set_reason("1 culprit(s) named and explained");
  for (int i = 0; i < 3; ++i) {
    v1::BisectionRevision* r = b.add_revisions();
    r->set_commit(std::string(39, 'a') + std::to_string(i));
    r->set_subject(i == 2 ? "<script>alert(1)</script>" : "step");
  }
  v1::BisectionCulprit* c = b.add_culprits();
  c->set_revision(2);
  c->set_commit(b.revisions(2).commit());
  c->set_subject(b.revisions(2).subject());
  c->set_parent_revision(1);
  c->set_parent_commit(b.revisions(1).commit());
  c->add_changed_files("kernel.cpp");
  auto made = store_->InsertBisection(rec, 1000);
  ASSERT_TRUE(made.ok()) << made.status();
  const std::string id = std::to_string(made->first.bisection.id());
  const std::string mine = LogIn("tok-team"), theirs = LogIn("tok-other");
  auto list = Get("/ui/bisections", mine);
  EXPECT_EQ(list.status, 200);
  EXPECT_TRUE(Has(list.body, "/ui/bisections/" + id)) << list.body;
  auto page = Get("/ui/bisections/" + id, mine);
  EXPECT_EQ(page.status, 200);
  EXPECT_TRUE(Has(page.body, "aaaaaaaaaaaa")) << page.body;
  EXPECT_TRUE(Has(page.body, "kernel.cpp"));
  EXPECT_FALSE(Has(page.body, "<script>alert(1)")) << "the subject is escaped";
  EXPECT_EQ(Get("/ui/bisections/" + id, theirs).status, 404);
  EXPECT_FALSE(Has(Get("/ui/bisections", theirs).body, "/ui/bisections/" + id));
  EXPECT_EQ(Get("/ui/bisections/x1", mine).status, 400);
}

TEST_F(UiTest, DevicesPageShowsQuarantinesAndCanariesWithHostsForDeviceAdminsOnly) {
  QuarantineRecord q;
  q.host = "npu-host-3";
  q.device_id = 5;
  q.soc = "Ascend910B2";
  q.source = "canary";
  q.reason = "canary 15.2 % slower than the median of 15 other Ascend910B2 devices <b>";
  q.since_ms = 1'800'000'000'000;
  q.suspect_since_ms = 1'799'990'000'000;
  ASSERT_TRUE(store_->QuarantineDevice(q).ok());
  CanaryRecord c;
  c.host = "npu-host-3";
  c.device_id = 5;
  c.soc = "Ascend910B2";
  c.slot = 1;
  c.created_ms = 1'800'000'000'000;
  auto made = store_->InsertCanary(c);
  ASSERT_TRUE(made.ok()) << made.status();
  CanaryRecord judged = made->first;
  judged.state = "slow";
  judged.kernel_us = 55.3;
  judged.reference = "peers";
  judged.reference_us = 48;
  judged.excess_pct = 15.2;
  judged.threshold_pct = 5;
  judged.reason = "canary 15.2 % slower";
  judged.finished_ms = 1'800'000'001'000;
  ASSERT_TRUE(store_->UpdateCanary(judged).ok());

  auto admin = Get("/ui/devices", LogIn("tok-team"));
  EXPECT_EQ(admin.status, 200);
  EXPECT_TRUE(Has(admin.body, "npu-host-3:5")) << admin.body;
  EXPECT_TRUE(Has(admin.body, "quarantined"));
  EXPECT_TRUE(Has(admin.body, "55.30"));
  EXPECT_TRUE(Has(admin.body, "peers 48.00"));
  EXPECT_FALSE(Has(admin.body, "devices <b>")) << "the reason is escaped";
  auto team = Get("/ui/devices", LogIn("tok-other"));
  EXPECT_EQ(team.status, 200);
  EXPECT_FALSE(Has(team.body, "npu-host-3")) << "hosts are for device admins";
  EXPECT_TRUE(Has(team.body, "device 5"));
  EXPECT_EQ(Get("/ui/devices").status, 303) << "a session is needed";
}

}  // namespace
}  // namespace npuperf::server::ui
