// The agent's GET /healthz on its metrics port: ok while the session with the
// server is live, degraded (503) within a few heartbeats of losing it.
#include <thread>

#include "gtest/gtest.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using std::chrono::seconds;

// Polls /healthz until its status code is `want`; returns the last response.
HttpResponse HealthWhen(const std::string& address, int want, seconds timeout) {
  const auto deadline = WallClock().MonotonicNow() + timeout;
  HttpResponse last;
  while (WallClock().MonotonicNow() < deadline) {
    auto r = HttpGetResponse(address, "/healthz");
    if (r.ok()) {
      last = *r;
      if (last.status == want) return last;
    }
    WallClock().SleepFor(std::chrono::milliseconds(50));
  }
  return last;
}

TEST(AgentHealthTest, OkWhileTheSessionIsLiveDegradedWhenTheServerIsGone) {
  Cluster c;
  c.Start("0-3", {"--heartbeat-ms", "200"});
  ASSERT_NE(c.agent, nullptr);
  auto line = c.agent->WaitForLine("metrics on", seconds(1));
  ASSERT_TRUE(line.ok()) << line.status();
  const std::string address = AddressAfter(*line, "metrics on");

  HttpResponse ok = HealthWhen(address, 200, seconds(10));
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_NE(ok.body.find(R"("status":"ok")"), std::string::npos) << ok.body;
  EXPECT_NE(ok.body.find(R"("registered":true)"), std::string::npos) << ok.body;
  EXPECT_NE(ok.body.find(R"("devices":4)"), std::string::npos) << ok.body;
  EXPECT_NE(ok.body.find(R"("running_jobs":0)"), std::string::npos) << ok.body;
  EXPECT_NE(ok.body.find(R"("spool_depth":0)"), std::string::npos) << ok.body;
  // /metrics is still served on the same port.
  auto metrics = HttpGet(address, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->find("npuperf_agent_devices"), std::string::npos);

  // Without a server the session goes quiet: degraded within 3 heartbeats
  // (600 ms here) plus the time the agent needs to notice.
  EXPECT_EQ(c.server->Stop(), 0);
  HttpResponse degraded = HealthWhen(address, 503, seconds(10));
  EXPECT_EQ(degraded.status, 503) << degraded.body;
  EXPECT_NE(degraded.body.find(R"("status":"degraded")"), std::string::npos) << degraded.body;
  EXPECT_NE(degraded.body.find(R"("reason":)"), std::string::npos) << degraded.body;

  // Back to ok once a server is there again and the agent re-registered.
  c.RestartServer({"--heartbeat-ms", "200"});
  HttpResponse again = HealthWhen(address, 200, seconds(60));
  EXPECT_EQ(again.status, 200) << again.body << "\nagent log:\n" << c.agent->Log();
  EXPECT_EQ(c.agent->Stop(), 0);
  EXPECT_EQ(c.server->Stop(), 0);
}

}  // namespace
}  // namespace npuperf::testing
