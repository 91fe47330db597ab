// Discovery jobs at the scheduler (issue 15): a discovery collection takes no
// op name, its jobs are leased like any other, and the candidate table an
// agent reports is validated before the store sees it (bounds, lease).
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "common/input_rules.h"
#include "common/status_util.h"
#include "gtest/gtest.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

class DiscoveryIngestTest : public SchedulerFixture {
 protected:
  v1::SubmitCollectionRequest DiscoveryRequest() {
    v1::SubmitCollectionRequest req = Request(1);
    req.mutable_spec()->mutable_params()->set_mode(v1::PROFILE_MODE_DISCOVER);
    req.mutable_spec()->mutable_operators(0)->clear_op_name();
    return req;
  }
  static v1::DiscoveryResult Table(int candidates = 2) {
    v1::DiscoveryResult d;
    for (int i = 0; i < candidates; ++i) {
      auto* k = d.add_candidates();
      k->set_op_name("kernel_" + std::to_string(i));
      k->set_task_type("AI_CORE");
      k->set_count(1);
      k->set_total_duration_us(10.0 + i);
      auto* l = k->add_launches();
      l->set_index(1);
      l->set_stream_id(-1);
      l->set_task_id(3);
      l->set_start_us(-1);
      l->set_duration_us(10.0 + i);
    }
    d.set_source("discovery/PROF_1 (task_time)");
    return d;
  }
  v1::ReportResultRequest Found(const v1::JobAssignment& a, const std::string& uuid,
                                v1::DiscoveryResult d) {
    v1::ReportResultRequest req = ResultOf(a, uuid, v1::ATTEMPT_OUTCOME_SUCCEEDED);
    *req.mutable_discovery() = std::move(d);
    return req;
  }
  v1::Job TheJob(const std::string& collection_id) {
    return store_->GetCollection("team", collection_id)->jobs(0);
  }
};

TEST_F(DiscoveryIngestTest, ADiscoveryCollectionTakesNoOpNameOrLaunch) {
  v1::SubmitCollectionRequest named = DiscoveryRequest();
  named.mutable_spec()->mutable_operators(0)->set_op_name("kernel");
  named.mutable_spec()->mutable_operators(0)->set_launch("all");
  auto refused = scheduler_.Submit("team", named);
  ASSERT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_EQ(Fields(refused.status()),
            (std::vector<std::string>{"spec.operators[0].op_name", "spec.operators[0].launch"}));
  // Any other mode still needs a name.
  v1::SubmitCollectionRequest unnamed = Request(1);
  unnamed.mutable_spec()->mutable_operators(0)->clear_op_name();
  EXPECT_TRUE(absl::IsInvalidArgument(scheduler_.Submit("team", unnamed).status()));
  const std::string id = Submit(DiscoveryRequest());
  ASSERT_FALSE(id.empty());
  auto a = Lease(Register("h1"), 0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->params().mode(), v1::PROFILE_MODE_DISCOVER);
  EXPECT_EQ(a->op_name(), "");
  EXPECT_EQ(a->params().repeats(), 1);
}

TEST_F(DiscoveryIngestTest, TheCandidateTableIsStoredAndReadBackWithTheJob) {
  const std::string id = Submit(DiscoveryRequest());
  auto a = Lease(Register("h1"), 0);
  ASSERT_TRUE(a);
  auto resp = scheduler_.ReportResult(Holder(*a), Found(*a, "u1", Table()));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->round_id(), 0);
  v1::Job job = TheJob(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.discovery().SerializeAsString(), Table().SerializeAsString());
  EXPECT_EQ(metrics_.results_stored.Value(), 1);
}

TEST_F(DiscoveryIngestTest, AnOversizeTableIsRefusedNamingTheFieldAndFailsTheJob) {
  struct Case {
    const char* name;
    std::function<void(v1::DiscoveryResult*)> spoil;
    std::string field;
  };
  const Case cases[] = {
      {"too many candidates",
       [](v1::DiscoveryResult* d) { *d = Table(kMaxDiscoveryCandidates + 1); },
       "discovery.candidates"},
      {"long name",
       [](v1::DiscoveryResult* d) {
         d->mutable_candidates(0)->set_op_name(std::string(kMaxDiscoveryOpNameBytes + 1, 'k'));
       },
       "discovery.candidates[0].op_name"},
      {"too many launches",
       [](v1::DiscoveryResult* d) {
         auto* k = d->mutable_candidates(1);
         k->set_count(100);
         for (int i = 0; i < kMaxDiscoveryLaunches; ++i) *k->add_launches() = k->launches(0);
       },
       "discovery.candidates[1].launches"},
      {"control bytes", [](v1::DiscoveryResult* d) { d->set_source("a\x1b[2Jb"); },
       "discovery.source"},
      {"nan",
       [](v1::DiscoveryResult* d) {
         d->mutable_candidates(0)->set_total_duration_us(std::numeric_limits<double>::quiet_NaN());
       },
       "discovery.candidates[0].total_duration_us"},
      {"too many notes",
       [](v1::DiscoveryResult* d) {
         for (int i = 0; i <= kMaxDiscoveryNotes; ++i) d->add_notes("n");
       },
       "discovery.notes"},
      {"empty", [](v1::DiscoveryResult* d) { d->clear_candidates(); }, "discovery.candidates"},
  };
  int host = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string id = Submit(DiscoveryRequest());
    auto a = Lease(Register("h" + std::to_string(++host)), 0);
    ASSERT_TRUE(a);
    v1::DiscoveryResult d = Table();
    c.spoil(&d);
    auto got = scheduler_.ReportResult(Holder(*a), Found(*a, "u" + std::to_string(host), d));
    ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
    EXPECT_EQ(Fields(got.status()).at(0), c.field);
    v1::Job job = TheJob(id);
    EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
    EXPECT_FALSE(job.has_discovery());
    EXPECT_TRUE(absl::StrContains(job.reason(), "rejected: " + c.field)) << job.reason();
  }
}

TEST_F(DiscoveryIngestTest, EvidenceBesideATableIsRefused) {
  const std::string id = Submit(DiscoveryRequest());
  auto a = Lease(Register("h1"), 0);
  v1::ReportResultRequest req = Found(*a, "u1", Table());
  req.mutable_evidence()->mutable_duration()->set_aggregate_us(1);
  auto got = scheduler_.ReportResult(Holder(*a), req);
  ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  EXPECT_EQ(Fields(got.status()), std::vector<std::string>{"evidence"});
  EXPECT_FALSE(TheJob(id).has_discovery());
}

TEST_F(DiscoveryIngestTest, ATableUnderAWrongLeaseIsRefusedAndNothingIsStored) {
  const std::string id = Submit(DiscoveryRequest());
  auto a = Lease(Register("h1"), 0);
  ASSERT_TRUE(a);
  v1::ReportResultRequest stale = Found(*a, "u1", Table());
  stale.set_fencing_token(a->fencing_token() - 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(scheduler_.ReportResult(Holder(*a), stale).status()));
  v1::ReportResultRequest secret = Found(*a, "u2", Table());
  secret.set_lease_secret(std::string(64, '0'));
  EXPECT_TRUE(absl::IsPermissionDenied(scheduler_.ReportResult(Holder(*a), secret).status()));
  const std::string other = Register("h2");
  v1::ReportResultRequest foreign = Found(*a, "u3", Table());
  foreign.set_agent_id(other);
  EXPECT_FALSE(scheduler_.ReportResult(As(other), foreign).ok());
  v1::Job job = TheJob(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_LEASED);
  EXPECT_FALSE(job.has_discovery());
  // The holder's own report is still taken.
  EXPECT_TRUE(scheduler_.ReportResult(Holder(*a), Found(*a, "u4", Table())).ok());
  EXPECT_TRUE(TheJob(id).has_discovery());
}

}  // namespace
}  // namespace npuperf::server
