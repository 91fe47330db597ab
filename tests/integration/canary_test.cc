// Canaries end to end (issue 33): a real server with --canary-interval, an agent with four
// msprof-sim devices of which device 1 runs 15 % slow (MSPROF_SIM_FAULT=slow:1.15@dev=1). The
// built-in canary runs on every idle device; device 1 is quarantined by its canaries and takes
// no user job from then on, while the others keep working.
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using std::chrono::seconds;

nlohmann::json Json(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j.is_discarded() ? nlohmann::json::object() : j;
}

// The current quarantines, polled until one appears or timeout passes.
nlohmann::json QuarantinesWithin(Cluster& c, seconds timeout) {
  const auto deadline = WallClock().MonotonicNow() + timeout;
  nlohmann::json q;
  while (WallClock().MonotonicNow() < deadline) {
    q = Json(c.Cli({"--format", "json", "devices", "list"}));
    if (q.contains("quarantines") && !q["quarantines"].empty()) return q["quarantines"];
    WallClock().SleepFor(std::chrono::milliseconds(500));
  }
  return nlohmann::json::array();
}

TEST(CanaryTest, ASlowDeviceIsQuarantinedByItsCanariesAndTakesNoUserJob) {
  Cluster c;
  c.Start("", {"--canary-interval", "2s"});
  c.agent = c.StartAgent("0-3", "agent", {{"MSPROF_SIM_FAULT", "slow:1.15@dev=1"}});
  const nlohmann::json q = QuarantinesWithin(c, seconds(240));
  ASSERT_EQ(q.size(), 1u) << "server log:\n"
                          << c.server->Log() << "\nagent log:\n"
                          << c.agent->Log();
  EXPECT_EQ(q[0].value("device_id", -1), 1) << q.dump(2);
  EXPECT_EQ(q[0]["source"], "canary");
  EXPECT_NE(q[0]["reason"].get<std::string>().find("slower than the median of 3 other"),
            std::string::npos)
      << q.dump(2);
  EXPECT_TRUE(q[0].contains("suspect_since")) << q.dump(2);

  // The canaries say why: device 1's newest judged canary is slow by about 15 %, the others pass.
  nlohmann::json canaries =
      Json(c.Cli({"--format", "json", "devices", "canaries", "--limit", "200"}))["canaries"];
  ASSERT_FALSE(canaries.empty());
  bool slow_seen = false;
  for (const nlohmann::json& k : canaries) {
    const int device = k.value("device_id", 0);
    const std::string state = k.value("state", "");
    if (device == 1 && state == "slow") {
      slow_seen = true;
      EXPECT_GT(k.value("excess_pct", 0.0), 8) << k.dump(2);
      EXPECT_EQ(k.value("reference", ""), "peers") << k.dump(2);
    }
    if (device != 1) {
      EXPECT_NE(state, "slow") << k.dump(2);
    }
  }
  EXPECT_TRUE(slow_seen) << canaries.dump(2);

  // `agents` shows it quarantined, and user jobs go to the other devices only.
  auto agents = c.Cli({"agents"});
  EXPECT_NE(agents.out.find("quarantined"), std::string::npos) << agents.out;
  auto r = c.Cli({"--format", "json", "submit", "--quick", "--repeats", "3", "--warm-up", "0",
                  (SourceDir() / "examples/ops/apply_adam").string(), "--op-name-map",
                  (SourceDir() / "deploy/demo-op-names.json").string(), "--case-arg=--case-id",
                  "--case-id", "p0", "--case-id", "p1", "--case-id", "p2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json col = Json(r);
  ASSERT_EQ(col["jobs"].size(), 3u) << r.out;
  for (const nlohmann::json& job : col["jobs"]) {
    EXPECT_NE(job["placement"].value("device_id", 0), 1) << job.dump(2);
  }
  // A person releases it (authentication is off: anyone may), audited.
  auto released =
      c.Cli({"devices", "release", q[0].value("host", "") + ":1", "--note", "reseated"});
  EXPECT_EQ(released.exit_code, 0) << released.out << released.err;
  // The device is still slow, so its canaries may quarantine it again by now (a new entry, newest
  // first): the released one is the entry with a release time.
  auto history = Json(c.Cli({"--format", "json", "devices", "list", "--all"}));
  ASSERT_FALSE(history["quarantines"].empty());
  nlohmann::json released_entry;
  for (const nlohmann::json& e : history["quarantines"]) {
    if (e.contains("released_at")) {
      released_entry = e;
      break;
    }
  }
  ASSERT_FALSE(released_entry.is_null()) << history.dump(2);
  EXPECT_EQ(released_entry["release_note"], "reseated") << history.dump(2);
  EXPECT_EQ(released_entry.value("device_id", -1), 1) << history.dump(2);
}

}  // namespace
}  // namespace npuperf::testing
