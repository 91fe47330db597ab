// Device quarantine (issue 33, core/device_health.h) through the Scheduler over a real SQLite
// store and a FakeClock: a chip npu-smi rates critical is quarantined from its agent's heartbeat,
// never leased again, shown "quarantined" with its reason, released after a healthy streak or by
// a device admin (audited), and a team that is not an admin may not release it.
#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "server/core/read_queries.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

class DeviceHealthTest : public SchedulerFixture {
 protected:
  DeviceHealthTest() : SchedulerFixture(WithAdmins()) {}
  static SchedulerOptions WithAdmins() {
    SchedulerOptions o = Options();
    o.device_admins = {"infra"};
    return o;
  }

  // A heartbeat of agent with device 0 reading `health` (device 1 OK).
  void Heartbeat(const std::string& agent, const std::string& health) {
    v1::Heartbeat hb = IdleHeartbeat(agent);
    for (int d = 0; d < 2; ++d) {
      auto* dev = hb.mutable_devices(d);
      if (d == 0 && health != "OK") dev->set_state(v1::DEVICE_STATE_UNHEALTHY);
      dev->mutable_reading()->set_health(d == 0 ? health : "OK");
      dev->mutable_reading()->set_error_code(d == 0 && health != "OK" ? "80CB8002" : "NA");
    }
    auto got = scheduler_.Heartbeat(As(agent), hb);
    ASSERT_TRUE(got.ok()) << got.status();
  }

  std::vector<QuarantineRecord> Current() {
    return store_->ListQuarantines(false, 100).value_or(std::vector<QuarantineRecord>());
  }

  std::string DeviceState(int device) {
    ReadQueries reads(*store_);
    auto agents = reads.ListAgents(AgentsViewer{AgentsViewer::Scope::kEverything, ""});
    EXPECT_TRUE(agents.ok()) << agents.status();
    for (const auto& a : agents->agents()) {
      for (const auto& d : a.devices()) {
        if (d.device_id() == device) return d.state() + "|" + d.quarantine_reason();
      }
    }
    return "";
  }

  absl::StatusOr<v1::ReleaseDeviceResponse> Release(const Principal& p, const std::string& note) {
    v1::ReleaseDeviceRequest req;
    req.set_host("h1");
    req.set_device_id(0);
    req.set_note(note);
    return scheduler_.device_health().Release(p, /*auth_required=*/true, req);
  }
};

TEST_F(DeviceHealthTest, ACriticalChipIsQuarantinedOnceAndNeverLeasedAgain) {
  const std::string agent = Register("h1");
  Submit(Request(4));
  Heartbeat(agent, "Critical");
  Heartbeat(agent, "Critical");
  ASSERT_EQ(Current().size(), 1u) << "one quarantine however often it is reported";
  EXPECT_EQ(Current()[0].source, "npu_smi");
  EXPECT_EQ(Current()[0].reason, "npu-smi: Health Status Critical (error code 80CB8002)");
  EXPECT_FALSE(Lease(agent, 0).has_value()) << "a quarantined device takes no lease";
  EXPECT_TRUE(Lease(agent, 1).has_value()) << "its healthy neighbour does";
  EXPECT_EQ(DeviceState(0), "quarantined|npu-smi: Health Status Critical (error code 80CB8002)");
  EXPECT_FALSE(absl::StartsWith(DeviceState(1), "quarantined"));
}

// CI saw a user's job on a device quarantined while the agent's long-poll offering it was waiting:
// the poll had read the quarantines once, when it began.
TEST_F(DeviceHealthTest, ALongPollWaitingSinceBeforeAQuarantineDoesNotLeaseTheDeviceAfterIt) {
  const std::string agent = Register("h1");
  int stop_calls = 0;
  auto quarantine_then_submit = [&] {
    if (++stop_calls > 1) return true;  // the poll's next look ends it
    // The first empty claim is done and the poll is about to wait: quarantine device 0, queue a
    // job.
    Heartbeat(agent, "Critical");
    Submit(Request(1));
    return false;
  };
  auto got = scheduler_.LeaseJob(As(agent), LeaseRequest(agent, 0, /*wait_ms=*/30000),
                                 quarantine_then_submit);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(stop_calls, 2) << "the poll woke on the submission and looked again";
  ASSERT_EQ(Current().size(), 1u);
  EXPECT_FALSE(got->has_value()) << "leased job " << (*got)->job_id()
                                 << " on the device quarantined";
  EXPECT_TRUE(Lease(agent, 1).has_value()) << "its healthy neighbour takes the job";
}

TEST_F(DeviceHealthTest, AWarningIsNotQuarantined) {
  const std::string agent = Register("h1");
  Heartbeat(agent, "Warning");
  EXPECT_TRUE(Current().empty());
}

TEST_F(DeviceHealthTest, AChipThatReadsHealthyLongEnoughIsReleasedAndAFlapStartsOver) {
  const std::string agent = Register("h1");
  Heartbeat(agent, "Alarm");
  ASSERT_EQ(Current().size(), 1u);
  Heartbeat(agent, "OK");
  clock_.Advance(kHealthyStreakToRelease - std::chrono::seconds(1));
  Heartbeat(agent, "Critical");  // flaps: the streak starts over
  Heartbeat(agent, "OK");
  clock_.Advance(kHealthyStreakToRelease - std::chrono::seconds(1));
  Heartbeat(agent, "OK");
  EXPECT_EQ(Current().size(), 1u) << "not yet: the streak began after the flap";
  clock_.Advance(std::chrono::seconds(2));
  Heartbeat(agent, "OK");
  EXPECT_TRUE(Current().empty());
  auto history = store_->ListQuarantines(true, 10);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].released_by, "npuperf");
  EXPECT_FALSE(absl::StartsWith(DeviceState(0), "quarantined"));
}

TEST_F(DeviceHealthTest, OnlyADeviceAdminMayReleaseAndTheReleaseIsAudited) {
  const std::string agent = Register("h1");
  Heartbeat(agent, "Critical");
  const auto refused = Release({PrincipalKind::kTeam, "alpha"}, "looks fine");
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "--device-admin"));
  EXPECT_TRUE(absl::IsPermissionDenied(Release({PrincipalKind::kAgent, "h1"}, "").status()));
  const auto bad = Release({PrincipalKind::kTeam, "infra"}, std::string("\x01", 1));
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  const auto released = Release({PrincipalKind::kTeam, "infra"}, "chip reseated");
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(released->quarantine().released_by(), "infra");
  EXPECT_EQ(released->quarantine().release_note(), "chip reseated");
  EXPECT_TRUE(released->quarantine().has_released_at());
  EXPECT_TRUE(Current().empty());
  EXPECT_TRUE(absl::IsFailedPrecondition(Release({PrincipalKind::kTeam, "infra"}, "").status()));
  Submit(Request(1));
  EXPECT_TRUE(Lease(agent, 0).has_value()) << "released: it takes leases again";
}

TEST_F(DeviceHealthTest, ListingHidesHostsFromTeamsThatAreNotAdminsAndChecksTheLimit) {
  const std::string agent = Register("h1");
  Heartbeat(agent, "Critical");
  v1::ListQuarantinesRequest req;
  auto seen = scheduler_.device_health().List({PrincipalKind::kTeam, "alpha"}, true, req);
  ASSERT_TRUE(seen.ok()) << seen.status();
  ASSERT_EQ(seen->quarantines_size(), 1);
  EXPECT_EQ(seen->quarantines(0).host(), "");
  EXPECT_EQ(seen->quarantines(0).device_id(), 0);
  auto admin = scheduler_.device_health().List({PrincipalKind::kTeam, "infra"}, true, req);
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(admin->quarantines(0).host(), "h1");
  req.set_limit(kMaxQuarantinesPage + 1);
  EXPECT_TRUE(absl::IsInvalidArgument(
      scheduler_.device_health().List({PrincipalKind::kTeam, "infra"}, true, req).status()));
}

TEST_F(DeviceHealthTest, AReadingWithImplausibleFiguresIsRefusedNamingTheField) {
  const std::string agent = Register("h1");
  v1::Heartbeat hb;
  hb.set_agent_id(agent);
  auto* dev = hb.add_devices();
  dev->set_device_id(0);
  dev->set_soc("Ascend910B2");
  dev->set_state(v1::DEVICE_STATE_IDLE);
  dev->mutable_reading()->set_health(std::string(300, 'x'));
  dev->mutable_reading()->set_aicore_current_mhz(-5);
  dev->mutable_reading()->set_temperature_c(1e9);
  const auto got = scheduler_.Heartbeat(As(agent), hb);
  ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  const std::vector<std::string> fields = Fields(got.status());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "heartbeat.devices[0].reading.health"),
            fields.end());
  EXPECT_NE(
      std::find(fields.begin(), fields.end(), "heartbeat.devices[0].reading.aicore_current_mhz"),
      fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "heartbeat.devices[0].reading.temperature_c"),
            fields.end());
}

}  // namespace
}  // namespace npuperf::server
