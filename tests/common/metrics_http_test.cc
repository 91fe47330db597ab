// The HTTP layer of the metrics port (common/metrics_http.h): what a route
// sees of a request, the headers a reply sets, and the limits every request
// is held to before any route runs.
#include "common/metrics_http.h"

#include <string>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/fakes/http_client.h"

namespace npuperf {
namespace {

using testing::HttpRequestText;
using testing::SendHttp;

class MetricsHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::map<std::string, HttpRoute> routes;
    routes["/echo"] = HttpRoute{[this](const HttpRequest& req) {
                                  absl::MutexLock lock(&mu_);
                                  seen_ = req;
                                  HttpReply r{200, "text/plain", "body:" + req.body, {}};
                                  r.headers.emplace_back("X-Test", "yes");
                                  return r;
                                },
                                /*accepts_post=*/true};
    routes["/get-only"].handler = [](const HttpRequest&) {
      return HttpReply{200, "text/plain", "ok", {}};
    };
    routes["/bad-header"].handler = [](const HttpRequest&) {
      return HttpReply{200, "text/plain", "", {{"X-Evil", "a\r\nSet-Cookie: x=1"}}};
    };
    auto server = MetricsHttpServer::Start("127.0.0.1:0", {}, std::move(routes));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    port_ = server_->port();
  }

  HttpRequest Seen() {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

  std::unique_ptr<MetricsHttpServer> server_;
  int port_ = 0;
  absl::Mutex mu_;
  HttpRequest seen_;
};

TEST_F(MetricsHttpTest, RouteSeesMethodPathQueryHeadersBodyAndPeer) {
  auto got = SendHttp(port_, HttpRequestText("POST", "/echo/sub?a=1&b=x%20y+z&a=2", port_,
                                             "Cookie: c=1\r\nOrigin: http://h\r\n", "k=v"));
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "body:k=v");
  EXPECT_EQ(got.Header("x-test"), "yes");
  const HttpRequest req = Seen();
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, "/echo/sub");
  EXPECT_EQ(req.query, "a=1&b=x%20y+z&a=2");
  ASSERT_NE(req.Param("a"), nullptr);
  EXPECT_EQ(*req.Param("a"), "1");
  EXPECT_EQ(*req.Param("b"), "x y z");
  EXPECT_EQ(req.params.size(), 3u);
  EXPECT_EQ(req.Header("cookie"), "c=1");
  EXPECT_EQ(req.Header("origin"), "http://h");
  EXPECT_EQ(req.Header("host"), "127.0.0.1:" + std::to_string(port_));
  EXPECT_EQ(req.peer, "127.0.0.1");
  EXPECT_FALSE(req.tls);
}

TEST_F(MetricsHttpTest, HeadAnswersTheHeadersWithoutTheBody) {
  auto got = SendHttp(port_, HttpRequestText("HEAD", "/get-only", port_));
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.Header("content-length"), "2");
  EXPECT_EQ(got.body, "");
}

TEST_F(MetricsHttpTest, MethodsOtherThanGetHeadAndAcceptedPostAre405) {
  for (const char* method : {"PUT", "DELETE", "PATCH", "OPTIONS"}) {
    auto got = SendHttp(port_, HttpRequestText(method, "/echo", port_));
    EXPECT_EQ(got.status, 405) << method;
    EXPECT_EQ(got.Header("allow"), "GET, HEAD, POST") << method;
  }
  auto post = SendHttp(port_, HttpRequestText("POST", "/get-only", port_, "", "x"));
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.Header("allow"), "GET, HEAD");
  EXPECT_EQ(SendHttp(port_, HttpRequestText("POST", "/metrics", port_, "", "x")).status, 405);
}

TEST_F(MetricsHttpTest, BodyOverTheLimitIs413) {
  const std::string at_limit(kMaxHttpBodyBytes, 'a');
  EXPECT_EQ(SendHttp(port_, HttpRequestText("POST", "/echo", port_, "", at_limit)).status, 200);
  const std::string over(kMaxHttpBodyBytes + 1, 'a');
  EXPECT_EQ(SendHttp(port_, HttpRequestText("POST", "/echo", port_, "", over)).status, 413);
}

TEST_F(MetricsHttpTest, PathAndQueryOverTheLimitIs414) {
  const std::string query(kMaxHttpTargetBytes, 'q');
  EXPECT_EQ(SendHttp(port_, HttpRequestText("GET", "/echo?" + query, port_)).status, 414);
  EXPECT_EQ(SendHttp(port_, HttpRequestText("GET", "/echo?" + query.substr(0, 100), port_)).status,
            200);
}

TEST_F(MetricsHttpTest, MalformedQueryIs400) {
  auto got = SendHttp(port_, HttpRequestText("GET", "/echo?a=%zz", port_));
  EXPECT_EQ(got.status, 400);
  EXPECT_NE(got.body.find("malformed query"), std::string::npos);
  EXPECT_EQ(SendHttp(port_, HttpRequestText("GET", "/echo?a=%4", port_)).status, 400);
}

TEST_F(MetricsHttpTest, ReplyHeaderWithALineBreakIsRefused) {
  auto got = SendHttp(port_, HttpRequestText("GET", "/bad-header", port_));
  EXPECT_EQ(got.status, 500);
  EXPECT_EQ(got.Header("set-cookie"), "");
}

TEST_F(MetricsHttpTest, MetricsStillAnswersTheTextFormat) {
  auto got = SendHttp(port_, HttpRequestText("GET", "/metrics", port_));
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
}

TEST(UrlEncodingTest, RoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  auto back = ParseUrlEncoded("k=" + UrlEncode(all));
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].second, all);
  EXPECT_EQ(UrlEncode("/ui/x?a=b"), "%2Fui%2Fx%3Fa%3Db");
}

}  // namespace
}  // namespace npuperf
