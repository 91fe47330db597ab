// The scheduler's ingest rules of issue 13: evidence validated before either
// store sees it, agent texts cleaned, submission quotas, idempotency keys
// bound to their spec, the first page of jobs, and the unplaceable gauge.
#include <cmath>
#include <limits>

#include "common/status_util.h"
#include "gtest/gtest.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

class IngestTest : public SchedulerFixture {
 protected:
  // A successful result of lease a by its holder.
  v1::ReportResultRequest Result(const v1::JobAssignment& a, const std::string& uuid) {
    v1::ReportResultRequest req = ResultOf(a, uuid, v1::ATTEMPT_OUTCOME_SUCCEEDED);
    req.mutable_evidence()->mutable_duration()->add_samples_us(12.5);
    req.mutable_evidence()->mutable_duration()->set_aggregate_us(12.5);
    return req;
  }
};

size_t Rounds(SqliteStore& store) {
  RoundFilter f;
  f.team = "team";
  f.operator_name = "op";
  return store.ListRounds(f)->rounds.size();
}

TEST_F(IngestTest, ForgedEvidenceFailsTheJobForGoodAndStoresNothing) {
  auto submitted = scheduler_.Submit("team", Request(1, /*retry=*/3));
  ASSERT_TRUE(submitted.ok());
  auto a = Lease(Register("h1"), 0);
  ASSERT_TRUE(a);
  auto req = Result(*a, "u1");
  req.mutable_evidence()->mutable_duration()->set_samples_us(
      0, std::numeric_limits<double>::infinity());
  req.mutable_evidence()->mutable_bound()->set_label("<script>");
  auto got = scheduler_.ReportResult(Holder(*a), req);
  ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  const auto fields = FieldViolationsOf(got.status());
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].field, "evidence.duration.samples_us[0]");
  EXPECT_EQ(fields[1].field, "evidence.bound.label");
  EXPECT_EQ(Rounds(*store_), 0u);
  auto c = store_->GetCollection("team", submitted->first.id());
  EXPECT_EQ(c->jobs(0).state(), v1::JOB_STATE_FAILED);  // retry budget unused: not retryable
  EXPECT_NE(
      c->jobs(0).reason().find("evidence rejected: duration.samples_us[0] is inf (and 1 more)"),
      std::string::npos)
      << c->jobs(0).reason();
  EXPECT_EQ(metrics_.results_rejected.Value(), 1);
  // The agent's resend of the same report is refused again, and counted once.
  EXPECT_TRUE(absl::IsInvalidArgument(scheduler_.ReportResult(Holder(*a), req).status()));
  EXPECT_EQ(metrics_.results_rejected.Value(), 1);
}

TEST_F(IngestTest, ANanDurationIsInvalidArgumentNotAlreadyExists) {
  ASSERT_TRUE(scheduler_.Submit("team", Request(1)).ok());
  auto a = Lease(Register("h1"), 0);
  auto req = Result(*a, "u1");
  req.mutable_evidence()->mutable_duration()->set_aggregate_us(
      std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(absl::IsInvalidArgument(scheduler_.ReportResult(Holder(*a), req).status()));
  EXPECT_EQ(Rounds(*store_), 0u);
}

TEST_F(IngestTest, AgentTextsAreCleanedAndCut) {
  auto submitted = scheduler_.Submit("team", Request(1));
  auto a = Lease(Register("h1"), 0);
  v1::ReportResultRequest req = Result(*a, "u1");
  req.set_outcome(v1::ATTEMPT_OUTCOME_FAILED);
  req.clear_evidence();
  req.set_failure_reason("\x1b[2J" + std::string(20'000, 'x'));
  ASSERT_TRUE(scheduler_.ReportResult(Holder(*a), req).ok());
  const std::string reason = store_->GetCollection("team", submitted->first.id())->jobs(0).reason();
  EXPECT_LE(reason.size(), kMaxFailureReasonBytes + 64);
  EXPECT_EQ(reason.find('\x1b'), std::string::npos);
}

TEST_F(IngestTest, UnknownOutcomesAndPhasesAreRefused) {
  ASSERT_TRUE(scheduler_.Submit("team", Request(1)).ok());
  auto a = Lease(Register("h1"), 0);
  auto req = Result(*a, "u1");
  req.set_outcome(static_cast<v1::AttemptOutcome>(99));
  EXPECT_EQ(FieldViolationsOf(scheduler_.ReportResult(Holder(*a), req).status()).at(0).field,
            "outcome");
  v1::ReportProgressRequest p = ProgressOf(*a);
  p.mutable_progress()->set_phase(static_cast<v1::JobPhase>(99));
  EXPECT_TRUE(absl::IsInvalidArgument(scheduler_.ReportProgress(Holder(*a), p).status()));
}

TEST_F(IngestTest, TheSameIdempotencyKeyWithAnotherSpecIsAlreadyExistsNamingTheFields) {
  auto req = Request(1);
  req.set_idempotency_key("ci-run-7");
  auto first = scheduler_.Submit("team", req);
  ASSERT_TRUE(first.ok());
  req.mutable_spec()->mutable_params()->set_repeats(9);
  req.mutable_spec()->set_priority(3);
  auto again = scheduler_.Submit("team", req);
  ASSERT_TRUE(absl::IsAlreadyExists(again.status())) << again.status();
  std::vector<std::string> fields;
  for (const auto& v : FieldViolationsOf(again.status())) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"spec.params.repeats", "spec.priority"}));
  CollectionFilter f;
  f.team = "team";
  EXPECT_EQ(store_->ListCollections(f)->size(), 1u);
}

TEST_F(IngestTest, QueuedJobsPerTeamAreCapped) {
  SchedulerOptions o = Options();
  o.limits.max_queued_jobs_per_team = 3;
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  Scheduler capped(*store_, clock_, metrics, o);
  ASSERT_TRUE(capped.Submit("team", Request(2)).ok());
  auto over = capped.Submit("team", Request(2));
  ASSERT_TRUE(absl::IsResourceExhausted(over.status())) << over.status();
  CollectionFilter f;
  f.team = "team";
  EXPECT_EQ(store_->ListCollections(f)->size(), 1u);  // nothing of the second stored
  EXPECT_TRUE(capped.Submit("team", Request(1)).ok());
  ASSERT_TRUE(store_->PutBundle("other", "op", Bundle(), "tar", 0).ok());  // its own upload
  EXPECT_TRUE(capped.Submit("other", Request(3)).ok());                    // per team
}

TEST_F(IngestTest, SubmitAndCancelAnswerWithTheFirstPageOfJobs) {
  auto submitted = scheduler_.Submit("team", Request(1500));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_EQ(submitted->first.jobs_size(), kDefaultJobsPage);
  EXPECT_EQ(submitted->first.counts().total(), 1500);
  auto cancelled = scheduler_.Cancel("team", submitted->first.id(), "done");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->jobs_size(), kDefaultJobsPage);
  EXPECT_EQ(cancelled->counts().cancelled(), 1500);
  EXPECT_TRUE(absl::IsInvalidArgument(
      scheduler_.Cancel("team", submitted->first.id(), std::string(2000, 'r')).status()));
}

TEST_F(IngestTest, JobsNoOnlineAgentCanTakeShowInTheUnplaceableGauge) {
  auto req = Request(2);
  req.mutable_spec()->mutable_constraints()->add_socs("NoSuchSoc");
  ASSERT_TRUE(scheduler_.Submit("team", req).ok());
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  EXPECT_EQ(metrics_.unplaceable.Add({{"reason", "no_agent"}}).Value(), 2);
  Register("h1");
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  EXPECT_EQ(metrics_.unplaceable.Add({{"reason", "no_agent"}}).Value(), 0);
  EXPECT_EQ(metrics_.unplaceable.Add({{"reason", "soc"}}).Value(), 2);
  ASSERT_TRUE(scheduler_.Submit("team", Request(1)).ok());  // Ascend910B2: placeable
  ASSERT_TRUE(scheduler_.RefreshStateMetrics().ok());
  EXPECT_EQ(metrics_.unplaceable.Add({{"reason", "soc"}}).Value(), 2);
}

}  // namespace
}  // namespace npuperf::server
