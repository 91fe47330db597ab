// ServerMetrics as the scheduler drives it: state gauges from the store,
// queue-wait and submit-to-lease histograms, ingest counters; read from the
// registry directly and from its text exposition (what Prometheus scrapes).
#include "server/core/metrics.h"

#include <cmath>

#include "common/sha256.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/scheduler.h"
#include "server/core/state_gauges.h"
#include "server/core/triage_rules.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {
namespace {

using std::chrono::milliseconds;

class MetricsTest : public ::testing::Test {
 protected:
  MetricsTest()
      : store_(*SqliteStore::Open(":memory:")),
        metrics_(registry_),
        scheduler_(*store_, clock_, metrics_, SchedulerOptions()) {}

  void Submit(int jobs, const std::string& soc = "") {
    const std::string sha = Sha256Hex("tar");
    ASSERT_TRUE(store_->PutBundle("team", "op", sha, "tar", 0).ok());
    v1::SubmitCollectionRequest req;
    auto* spec = req.mutable_spec();
    spec->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
    spec->mutable_case_selector()->set_case_arg("--case-id");
    auto* op = spec->add_operators();
    op->set_name("op");
    op->set_bundle_sha256(sha);
    op->set_op_name("kernel");
    for (int i = 0; i < jobs; ++i) op->add_case_ids("c" + std::to_string(i));
    if (!soc.empty()) spec->mutable_constraints()->add_socs(soc);
    ASSERT_TRUE(scheduler_.Submit("team", req).ok());
  }

  std::string Register() {
    v1::RegisterAgentRequest req;
    req.set_host("h1");
    req.set_boot_id("boot");
    req.set_instance_id("i-h1");
    for (int d = 0; d < 2; ++d) {
      auto* dev = req.add_devices();
      dev->set_device_id(d);
      dev->set_soc("Ascend910B2");
      dev->set_state(v1::DEVICE_STATE_IDLE);
    }
    auto resp = scheduler_.RegisterAgent(AgentIdentity::ForHost("h1"), req);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp.ok() ? resp->agent_id() : "";
  }

  std::optional<v1::JobAssignment> Lease(const std::string& agent, int device) {
    v1::LeaseJobRequest req;
    req.set_agent_id(agent);
    auto* d = req.add_free_devices();
    d->set_device_id(device);
    d->set_soc("Ascend910B2");
    auto got = scheduler_.LeaseJob(AgentIdentity::ForHost("h1"), req, [] { return false; });
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::nullopt;
  }

  double Gauge(prometheus::Family<prometheus::Gauge>& family, const std::string& state) {
    return family.Add({{"state", state}}).Value();
  }

  std::string Scrape() { return prometheus::TextSerializer().Serialize(registry_.Collect()); }

  testing::FakeClock clock_;
  prometheus::Registry registry_;
  std::unique_ptr<SqliteStore> store_;
  ServerMetrics metrics_;
  Scheduler scheduler_;
};

TEST_F(MetricsTest, StateGaugesFollowTheStore) {
  Submit(3);
  const std::string agent = Register();
  ASSERT_TRUE(Lease(agent, 0));
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  EXPECT_EQ(Gauge(metrics_.jobs, "queued"), 2);
  EXPECT_EQ(Gauge(metrics_.jobs, "leased"), 1);
  EXPECT_EQ(Gauge(metrics_.jobs, "succeeded"), 0);
  EXPECT_EQ(Gauge(metrics_.agents, "online"), 1);
  EXPECT_EQ(Gauge(metrics_.agents, "lost"), 0);
  EXPECT_EQ(Gauge(metrics_.devices, "busy"), 1);  // device 0 holds the lease
  EXPECT_EQ(Gauge(metrics_.devices, "idle"), 1);
  const std::string text = Scrape();
  EXPECT_NE(text.find("npuperf_server_jobs{state=\"queued\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("npuperf_server_agents{state=\"online\"} 1"), std::string::npos);
  EXPECT_NE(text.find("npuperf_server_devices{state=\"offline\"} 0"), std::string::npos);

  // A new instance of the same host + boot replaces the agent: the old one is
  // lost and its devices offline.
  v1::RegisterAgentRequest again;
  again.set_host("h1");
  again.set_boot_id("boot");
  again.set_instance_id("i-h1-restarted");
  auto* device = again.add_devices();
  device->set_device_id(0);
  device->set_soc("Ascend910B2");
  ASSERT_TRUE(scheduler_.RegisterAgent(AgentIdentity::ForHost("h1"), again).ok());
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  EXPECT_EQ(Gauge(metrics_.agents, "lost"), 1);
  EXPECT_EQ(Gauge(metrics_.agents, "online"), 1);
  EXPECT_EQ(Gauge(metrics_.devices, "offline"), 2);
}

TEST_F(MetricsTest, QueueWaitAndSubmitToLeaseHistograms) {
  Submit(2);
  const std::string agent = Register();
  clock_.Advance(milliseconds(3'000));  // the jobs wait 3 s for a device
  auto first = Lease(agent, 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMilliseconds(first->queued_at()) + 3'000,
            ToUnixMillis(clock_.SystemNow()));
  auto wait = metrics_.queue_wait.Collect().histogram;
  EXPECT_EQ(wait.sample_count, 1u);
  EXPECT_DOUBLE_EQ(wait.sample_sum, 3.0);
  // The agent asked after the submission: no scheduler latency on top.
  auto latency = metrics_.submit_to_lease.Collect().histogram;
  EXPECT_EQ(latency.sample_count, 1u);
  EXPECT_DOUBLE_EQ(latency.sample_sum, 0.0);
  ASSERT_TRUE(Lease(agent, 1));
  EXPECT_EQ(metrics_.queue_wait.Collect().histogram.sample_count, 2u);
  const std::string text = Scrape();
  EXPECT_NE(text.find("npuperf_server_job_queue_wait_seconds_count 2"), std::string::npos) << text;
  EXPECT_NE(text.find("npuperf_server_job_queue_wait_seconds_bucket{le=\"1\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("npuperf_server_job_queue_wait_seconds_bucket{le=\"5\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("npuperf_server_submit_to_lease_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("npuperf_server_jobs_leased_total 2"), std::string::npos);
}

TEST_F(MetricsTest, IngestCountersAndLeaseExpirations) {
  Submit(2);
  const std::string agent = Register();
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  v1::ReportResultRequest r;
  r.set_agent_id(agent);
  r.set_job_id(a->job_id());
  r.set_attempt(a->attempt());
  r.set_fencing_token(a->fencing_token());
  r.set_lease_secret(a->lease_secret());
  r.set_update_uuid("u1");
  r.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
  r.mutable_evidence()->mutable_duration()->add_samples_us(10);
  r.mutable_evidence()->mutable_duration()->set_aggregate_us(10);
  ASSERT_TRUE(scheduler_.ReportResult(AgentIdentity::ForHost("h1"), r).ok());
  ASSERT_TRUE(scheduler_.ReportResult(AgentIdentity::ForHost("h1"), r).ok());  // resend
  r.set_update_uuid("u2");
  r.set_fencing_token(a->fencing_token() - 1);  // stale
  EXPECT_FALSE(scheduler_.ReportResult(AgentIdentity::ForHost("h1"), r).ok());
  ASSERT_TRUE(Lease(agent, 1));
  clock_.Advance(SchedulerOptions().lease_ttl + milliseconds(1));
  ASSERT_TRUE(scheduler_.ExpireLeases().ok());
  EXPECT_EQ(metrics_.results_stored.Value(), 1);
  EXPECT_EQ(metrics_.results_duplicate.Value(), 1);
  EXPECT_EQ(metrics_.results_stale.Value(), 1);
  EXPECT_EQ(metrics_.lease_expirations.Value(), 1);
  // Every ReportResult is timed, the refused one too.
  EXPECT_EQ(metrics_.ingest_seconds.Collect().histogram.sample_count, 3u);
  EXPECT_EQ(
      metrics_.agent_calls_refused.Add({{"method", "ReportResult"}, {"reason", "stale_lease"}})
          .Value(),
      1);
  const std::string text = Scrape();
  for (const char* line :
       {"npuperf_server_ingest_rounds_stored_total 1", "npuperf_server_ingest_duplicates_total 1",
        "npuperf_server_ingest_stale_total 1", "npuperf_server_lease_expirations_total 1"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST_F(MetricsTest, PerDeviceStatesQueueDepthAndAge) {
  Submit(3);
  clock_.Advance(milliseconds(1'000));
  Submit(1, "Ascend910B2");
  Submit(2, "Ascend310P");  // no device has it: "other", not a label of its own
  const std::string agent = Register();
  ASSERT_TRUE(Lease(agent, 0));
  clock_.Advance(milliseconds(6'000));
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  auto device = [&](const std::string& d, const std::string& state) {
    return metrics_.device_state
        .Add({{"host", "h1"}, {"device", d}, {"soc", "Ascend910B2"}, {"state", state}})
        .Value();
  };
  EXPECT_EQ(device("0", "busy"), 1);
  EXPECT_EQ(device("0", "idle"), 0);
  EXPECT_EQ(device("1", "idle"), 1);
  auto queue = [&](const std::string& soc) {
    return metrics_.queue_depth.Add({{"team", "team"}, {"soc", soc}, {"priority", "0"}}).Value();
  };
  EXPECT_EQ(queue("any"), 2);  // one of the three is leased
  EXPECT_EQ(queue("Ascend910B2"), 1);
  EXPECT_EQ(queue("other"), 2);
  EXPECT_DOUBLE_EQ(metrics_.queue_oldest_age.Value(), 7.0);
  EXPECT_EQ(metrics_.unplaceable.Add({{"reason", "soc"}}).Value(), 2);

  // The agent restarts with device 0 only: device 1 is offline (the lost
  // agent's), device 0 idle; a team whose jobs are gone has no series left.
  v1::RegisterAgentRequest again;
  again.set_host("h1");
  again.set_boot_id("boot");
  again.set_instance_id("i-h1-restarted");
  auto* d0 = again.add_devices();
  d0->set_device_id(0);
  d0->set_soc("Ascend910B2");
  ASSERT_TRUE(scheduler_.RegisterAgent(AgentIdentity::ForHost("h1"), again).ok());
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  EXPECT_EQ(device("1", "offline"), 1);
  EXPECT_EQ(device("0", "offline"), 0);
  const std::string text = Scrape();
  EXPECT_NE(text.find("npuperf_server_queue_depth{priority=\"0\",soc=\"other\",team=\"team\"} 2"),
            std::string::npos)
      << text;
}

TEST(QueueSocLabelTest, BoundedByTheFleet) {
  v1::DeviceConstraints c;
  EXPECT_EQ(QueueSocLabel(c, {"Ascend910B2"}), "any");
  c.add_socs("Ascend910B2");
  EXPECT_EQ(QueueSocLabel(c, {"Ascend910B2"}), "Ascend910B2");
  EXPECT_EQ(QueueSocLabel(c, {}), "other");
  c.add_socs("Ascend310P");
  EXPECT_EQ(QueueSocLabel(c, {"Ascend910B2", "Ascend310P"}), "other");
}

TEST_F(MetricsTest, VerdictsStartAtZeroAndCountByQuery) {
  EXPECT_NE(
      Scrape().find(
          "npuperf_server_verdicts_total{query=\"regressions_pinned\",verdict=\"regressed\"} 0"),
      std::string::npos);
  v1::ComparisonCounts counts;
  counts.set_regressed(2);
  counts.set_stable(5);
  metrics_.CountVerdicts("regressions_pinned", counts);
  metrics_.CountVerdict("compare_rounds", v1::VERDICT_IMPROVED);
  metrics_.CountVerdict("compare_rounds", v1::VERDICT_UNSPECIFIED);  // no label: not counted
  auto v = [&](const std::string& q, const std::string& verdict) {
    return metrics_.verdicts.Add({{"query", q}, {"verdict", verdict}}).Value();
  };
  EXPECT_EQ(v("regressions_pinned", "regressed"), 2);
  EXPECT_EQ(v("regressions_pinned", "stable"), 5);
  EXPECT_EQ(v("regressions_pinned", "improved"), 0);
  EXPECT_EQ(v("compare_rounds", "improved"), 1);
}

TEST_F(MetricsTest, RegressionGaugesAndPrecisionFollowTheStore) {
  // Before any regression: every state reads 0 and the precision is unknown (NaN).
  EXPECT_NE(Scrape().find("npuperf_server_regressions{rule=\"duration\",state=\"detected\"} 0"),
            std::string::npos);
  EXPECT_NE(Scrape().find("npuperf_server_regression_precision{rule=\"duration\"} "),
            std::string::npos);
  EXPECT_TRUE(std::isnan(metrics_.regression_precision.Add({{"rule", kDurationRule}}).Value()));
  std::vector<RegressionObservation> seen;
  for (const char* op : {"a", "b", "c"}) {
    seen.push_back({{"team", op, "p0", "branch=main", kDurationRule}, true, 10});
  }
  auto opened = store_->ObserveRegressions(seen, 1000);
  ASSERT_TRUE(opened.ok()) << opened.status();
  auto move = [&](int i, v1::RegressionState to) {
    RegressionTriage t;
    t.team = "team";
    t.id = (*opened)[i].id;
    t.expected = v1::REGRESSION_STATE_DETECTED;
    t.next = to;
    t.now_ms = 2000;
    ASSERT_TRUE(store_->TriageRegression(t).ok());
  };
  move(0, v1::REGRESSION_STATE_ACKNOWLEDGED);
  move(1, v1::REGRESSION_STATE_FALSE_POSITIVE);
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  auto regressions = [&](const std::string& state) {
    return metrics_.regressions.Add({{"rule", kDurationRule}, {"state", state}}).Value();
  };
  EXPECT_EQ(regressions("detected"), 1);
  EXPECT_EQ(regressions("acknowledged"), 1);
  EXPECT_EQ(regressions("false_positive"), 1);
  EXPECT_EQ(regressions("wont_fix"), 0);
  EXPECT_EQ(regressions("fixed"), 0);
  EXPECT_DOUBLE_EQ(metrics_.regression_precision.Add({{"rule", kDurationRule}}).Value(), 0.5);
}

TEST_F(MetricsTest, HandlingTimePerMethod) {
  metrics_.ObserveHandling("GetRound", 0.002);
  metrics_.ObserveHandling("GetRound", 0.004);
  auto h = metrics_.grpc_handling
               .Add({{"method", "GetRound"}}, prometheus::Histogram::BucketBoundaries{})
               .Collect()
               .histogram;
  EXPECT_EQ(h.sample_count, 2u);
  EXPECT_DOUBLE_EQ(h.sample_sum, 0.006);
}

TEST_F(MetricsTest, RequestsByMethodAndCode) {
  metrics_.CountRequest("LeaseJob", "OK");
  metrics_.CountRequest("LeaseJob", "OK");
  metrics_.CountRequest("ReportResult", "FAILED_PRECONDITION");
  EXPECT_EQ(metrics_.requests.Add({{"method", "LeaseJob"}, {"code", "OK"}}).Value(), 2);
  EXPECT_NE(Scrape().find("npuperf_server_grpc_requests_total{code=\"FAILED_PRECONDITION\","
                          "method=\"ReportResult\"} 1"),
            std::string::npos);
}

}  // namespace
}  // namespace npuperf::server
