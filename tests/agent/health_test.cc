#include "agent/health.h"

#include "gtest/gtest.h"

namespace npuperf::agent {
namespace {

using std::chrono::milliseconds;
using Time = Clock::MonotonicTime;

HealthInputs Registered(Time contact) {
  HealthInputs in;
  in.registered = true;
  in.agent_id = "a-1";
  in.last_contact = contact;
  in.heartbeat = milliseconds(1000);
  in.devices = 8;
  in.running_jobs = 2;
  in.spool_depth = 1;
  return in;
}

TEST(HealthTest, RegisteredAndRecentContactIsOk) {
  const Time now{};
  HealthReport r = DecideHealth(Registered(now - milliseconds(2500)), now + milliseconds(0));
  EXPECT_TRUE(r.healthy);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.json,
            R"({"status":"ok","registered":true,"agent_id":"a-1","devices":8,"running_jobs":2,)"
            R"("spool_depth":1,"last_contact_ms":2500})");
}

// Table: the session must have heard from the server within 3 heartbeats.
TEST(HealthTest, DegradedCases) {
  const Time now = Time{} + std::chrono::hours(1);
  struct Case {
    const char* name;
    HealthInputs in;
    bool healthy;
    const char* reason;
  };
  HealthInputs unregistered = Registered(now);
  unregistered.registered = false;
  HealthInputs never = Registered(now);
  never.last_contact.reset();
  HealthInputs fast = Registered(now - milliseconds(301));
  fast.heartbeat = milliseconds(100);
  const Case cases[] = {
      {"at the limit", Registered(now - milliseconds(3000)), true, ""},
      {"just past the limit", Registered(now - milliseconds(3001)), false,
       "no session contact for 3001 ms (limit 3000 ms = 3 heartbeats)"},
      {"not registered", unregistered, false, "not registered with the server"},
      {"no contact yet", never, false, "no contact with the server yet"},
      {"limit follows the heartbeat", fast, false,
       "no session contact for 301 ms (limit 300 ms = 3 heartbeats)"},
  };
  for (const Case& c : cases) {
    HealthReport r = DecideHealth(c.in, now);
    EXPECT_EQ(r.healthy, c.healthy) << c.name;
    EXPECT_EQ(r.http_status, c.healthy ? 200 : 503) << c.name;
    if (c.healthy) continue;
    EXPECT_NE(r.json.find(R"("status":"degraded")"), std::string::npos) << c.name << r.json;
    EXPECT_NE(r.json.find(std::string(R"("reason":")") + c.reason + "\""), std::string::npos)
        << c.name << ": " << r.json;
  }
}

TEST(HealthTest, NeverContactedReportsNullAndQuotesIds) {
  HealthInputs in;
  in.agent_id = "we\"ird";
  HealthReport r = DecideHealth(in, Time{});
  EXPECT_NE(r.json.find(R"("agent_id":"we\"ird")"), std::string::npos) << r.json;
  EXPECT_NE(r.json.find(R"("last_contact_ms":null)"), std::string::npos) << r.json;
  EXPECT_NE(r.json.find(R"("registered":false)"), std::string::npos) << r.json;
}

}  // namespace
}  // namespace npuperf::agent
