// Confirmations (compare/confirmations.h) over the real Scheduler and SQLite: the reruns are
// ordinary collections, leased and reported as agents do, one step after another, on the one
// device the confirmation chose; the verdict is the pooled reruns'.
#include "server/compare/confirmations.h"

#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/compare/comparison_queries.h"
#include "server/core/confirmation_rules.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

class ConfirmationsTest : public SchedulerFixture {
 protected:
  ConfirmationsTest()
      : confirmations_(*store_, clock_,
                       [this](const std::string& team, const v1::SubmitCollectionRequest& req,
                              const std::map<std::string, std::string>& labels) {
                         return scheduler_.SubmitForServer(team, req, labels);
                       }) {}

  // Reports lease a succeeded with seven samples around mean_us (1 % noise).
  int64_t SucceedWith(const v1::JobAssignment& a, double mean_us) {
    v1::ReportResultRequest req = ResultOf(a, absl::StrCat("u-", a.job_id(), "-", a.attempt()),
                                           v1::ATTEMPT_OUTCOME_SUCCEEDED);
    std::normal_distribution<double> noise(mean_us, mean_us * 0.01);
    double sum = 0;
    for (int i = 0; i < 7; ++i) {
      const double s = noise(gen_);
      req.mutable_evidence()->mutable_duration()->add_samples_us(s);
      sum += s;
    }
    req.mutable_evidence()->mutable_duration()->set_aggregate_us(sum / 7);
    req.mutable_evidence()->mutable_fingerprint()->set_soc("Ascend910B2");
    auto r = scheduler_.ReportResult(Holder(a), req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->round_id() : 0;
  }

  // Submits one job and runs it on (agent, device): its round id.
  int64_t Measure(const std::string& agent, int device, double mean_us) {
    Submit(1);
    auto a = Lease(agent, device);
    EXPECT_TRUE(a.has_value());
    return a ? SucceedWith(*a, mean_us) : 0;
  }

  v1::Confirmation Request(int64_t baseline, int64_t candidate, bool created = true) {
    v1::RequestConfirmationRequest req;
    req.set_baseline_round_id(baseline);
    req.set_candidate_round_id(candidate);
    auto r = confirmations_.Request("team", req);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    EXPECT_EQ(r->created(), created);
    return r->confirmation();
  }

  v1::Confirmation Get(int64_t id) {
    v1::GetConfirmationRequest req;
    req.set_confirmation_id(id);
    auto r = confirmations_.Get("team", req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->confirmation() : v1::Confirmation();
  }

  // Runs the confirmation's reruns on (agent, device), the baseline's around base_us and the
  // candidate's around cand_us, advancing it between steps as the reaper does.
  void RunReruns(const std::string& agent, int device, double base_us, double cand_us,
                 const v1::Confirmation& c) {
    for (int i = 0; i < c.steps_size(); ++i) {
      auto a = Lease(agent, device);
      ASSERT_TRUE(a.has_value()) << "step " << i;
      const bool baseline = i % 2 == 0;
      SucceedWith(*a, baseline ? base_us : cand_us);
      EXPECT_FALSE(Lease(agent, device).has_value()) << "the next step waits for this one";
      ASSERT_TRUE(confirmations_.AdvancePending().ok());
    }
  }

  std::mt19937 gen_{7};
  Confirmations confirmations_;
};

TEST_F(ConfirmationsTest, ARegressionReproducedOnAnotherHostIsConfirmed) {
  const std::string h1 = Register("h1"), h2 = Register("h2");
  const int64_t base = Measure(h1, 0, 100), cand = Measure(h1, 1, 110);
  v1::Confirmation c = Request(base, cand);
  EXPECT_EQ(c.state(), v1::CONFIRMATION_STATE_PENDING) << c.reason();
  EXPECT_EQ(c.original_verdict(), v1::VERDICT_REGRESSED);
  EXPECT_EQ(c.device().host(), "h2");  // another host than both originals
  EXPECT_EQ(c.device().device_id(), 0);
  ASSERT_EQ(c.steps_size(), 4);
  EXPECT_FALSE(c.steps(0).collection_id().empty());  // the first step is submitted at once
  EXPECT_TRUE(c.steps(1).collection_id().empty());
  // Only the chosen device takes the reruns.
  EXPECT_FALSE(Lease(h1, 0).has_value());
  EXPECT_FALSE(Lease(h2, 1).has_value());
  RunReruns(h2, 0, 100, 110, c);
  c = Get(c.id());
  EXPECT_EQ(c.state(), v1::CONFIRMATION_STATE_CONFIRMED) << c.reason();
  EXPECT_EQ(c.rerun().verdict(), v1::VERDICT_REGRESSED);
  EXPECT_EQ(c.rerun().duration().baseline_samples_us_size(), 14);  // two reruns pooled
  EXPECT_NEAR(c.rerun().duration().ratio(), 1.10, 0.02);
  EXPECT_TRUE(c.has_finished_at());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c.steps(i).state(), v1::COLLECTION_STATE_SUCCEEDED);
    EXPECT_GT(c.steps(i).round_id(), 0);
  }
}

TEST_F(ConfirmationsTest, ARegressionOfOneSlowDeviceIsNotConfirmed) {
  const std::string h1 = Register("h1"), h2 = Register("h2");
  const int64_t base = Measure(h1, 0, 100), cand = Measure(h1, 1, 115);  // device 1 was slow
  v1::Confirmation c = Request(base, cand);
  RunReruns(h2, 0, 100, 100, c);
  c = Get(c.id());
  EXPECT_EQ(c.state(), v1::CONFIRMATION_STATE_NOT_CONFIRMED) << c.reason();
  EXPECT_EQ(c.rerun().verdict(), v1::VERDICT_STABLE);
  EXPECT_TRUE(absl::StrContains(c.reason(), "not REGRESSED")) << c.reason();
}

TEST_F(ConfirmationsTest, AskingAgainReturnsTheSameConfirmation) {
  const std::string h1 = Register("h1");
  Register("h2");
  const int64_t base = Measure(h1, 0, 100), cand = Measure(h1, 1, 110);
  const v1::Confirmation first = Request(base, cand);
  const v1::Confirmation again = Request(base, cand, /*created=*/false);
  EXPECT_EQ(again.id(), first.id());
  EXPECT_EQ(again.steps(0).collection_id(), first.steps(0).collection_id());
}

TEST_F(ConfirmationsTest, WithoutAnotherDeviceItIsUnconfirmedAndMayBeAskedAgainLater) {
  const std::string h1 = Register("h1");  // two devices, both measured the originals
  const int64_t base = Measure(h1, 0, 100), cand = Measure(h1, 1, 110);
  const v1::Confirmation none = Request(base, cand);
  EXPECT_EQ(none.state(), v1::CONFIRMATION_STATE_UNCONFIRMED);
  EXPECT_TRUE(absl::StrContains(none.reason(), "no online device of SoC Ascend910B2"))
      << none.reason();
  Register("h2");
  const v1::Confirmation later = Request(base, cand);
  EXPECT_NE(later.id(), none.id());
  EXPECT_EQ(later.state(), v1::CONFIRMATION_STATE_PENDING);
}

TEST_F(ConfirmationsTest, AFailedRerunLeavesItUnconfirmedNamingTheStep) {
  const std::string h1 = Register("h1"), h2 = Register("h2");
  const int64_t base = Measure(h1, 0, 100), cand = Measure(h1, 1, 110);
  v1::Confirmation c = Request(base, cand);
  auto a = Lease(h2, 0);
  ASSERT_TRUE(a.has_value());
  v1::ReportResultRequest failed = ResultOf(*a, "fail-1", v1::ATTEMPT_OUTCOME_FAILED);
  failed.set_failure_reason("runner exited 3");
  failed.set_retryable(false);
  ASSERT_TRUE(scheduler_.ReportResult(Holder(*a), failed).ok());
  c = Get(c.id());
  EXPECT_EQ(c.state(), v1::CONFIRMATION_STATE_UNCONFIRMED);
  EXPECT_TRUE(absl::StrContains(c.reason(), "baseline rerun 1 of 2")) << c.reason();
  EXPECT_TRUE(absl::StrContains(c.reason(), "failed: runner exited 3")) << c.reason();
  EXPECT_FALSE(Lease(h2, 0).has_value());  // nothing more is submitted
}

TEST_F(ConfirmationsTest, ACancelledRerunLeavesItUnconfirmedWithTheReason) {
  const std::string h1 = Register("h1");
  Register("h2");
  const int64_t base = Measure(h1, 0, 100), cand = Measure(h1, 1, 110);
  v1::Confirmation c = Request(base, cand);
  ASSERT_TRUE(scheduler_.Cancel("team", c.steps(0).collection_id(), "not now").ok());
  c = Get(c.id());
  EXPECT_EQ(c.state(), v1::CONFIRMATION_STATE_UNCONFIRMED);
  EXPECT_TRUE(absl::StrContains(c.reason(), "was cancelled: not now")) << c.reason();
}

TEST_F(ConfirmationsTest, OnlyARegressedOrImprovedComparisonOfOneCaseIsConfirmed) {
  const std::string h1 = Register("h1");
  Register("h2");
  const int64_t base = Measure(h1, 0, 100), same = Measure(h1, 1, 100);
  v1::RequestConfirmationRequest req;
  req.set_baseline_round_id(base);
  req.set_candidate_round_id(same);
  auto stable = confirmations_.Request("team", req);
  EXPECT_TRUE(absl::IsFailedPrecondition(stable.status())) << stable.status();
  EXPECT_TRUE(absl::StrContains(stable.status().message(), "VERDICT_STABLE"));
  EXPECT_TRUE(absl::IsNotFound(confirmations_.Request("other-team", req).status()));
  req.set_pairs(6);
  req.set_candidate_round_id(base);
  auto bad = confirmations_.Request("team", req);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_EQ(Fields(bad.status()), (std::vector<std::string>{"candidate_round_id", "pairs"}));
  v1::GetConfirmationRequest get;
  EXPECT_TRUE(absl::IsInvalidArgument(confirmations_.Get("team", get).status()));
}

TEST_F(ConfirmationsTest, AnotherTeamCannotSeeIt) {
  const std::string h1 = Register("h1");
  Register("h2");
  const v1::Confirmation c = Request(Measure(h1, 0, 100), Measure(h1, 1, 110));
  v1::GetConfirmationRequest get;
  get.set_confirmation_id(c.id());
  EXPECT_TRUE(absl::IsNotFound(confirmations_.Get("other-team", get).status()));
}

TEST_F(ConfirmationsTest, RerunRoundsStayOutOfSeriesUnlessTheirCollectionIsAskedFor) {
  const std::string h1 = Register("h1"), h2 = Register("h2");
  const v1::Confirmation c = Request(Measure(h1, 0, 100), Measure(h1, 1, 110));
  RunReruns(h2, 0, 100, 110, c);
  RoundFilter by_op;
  by_op.team = "team";
  by_op.operator_name = "op";
  auto series = store_->ListRounds(by_op);
  ASSERT_TRUE(series.ok()) << series.status();
  EXPECT_EQ(series->rounds.size(), 2u);  // the two originals only
  RoundFilter by_collection = by_op;
  by_collection.collection_id = c.steps(0).collection_id();
  auto step = store_->ListRounds(by_collection);
  ASSERT_TRUE(step.ok());
  ASSERT_EQ(step->rounds.size(), 1u);
  EXPECT_EQ(step->rounds[0].labels().at("npuperf.confirmation"), std::to_string(c.id()));
  EXPECT_EQ(step->rounds[0].labels().at("npuperf.confirmation_side"), "baseline");
}

TEST_F(ConfirmationsTest, ClientsCannotSetServerLabels) {
  v1::SubmitCollectionRequest req = SchedulerFixture::Request(1);
  (*req.mutable_spec()->mutable_labels())["npuperf.confirmation"] = "1";
  auto refused = scheduler_.Submit("team", req);
  ASSERT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_EQ(Fields(refused.status()),
            (std::vector<std::string>{"spec.labels[npuperf.confirmation]"}));
}

TEST_F(ConfirmationsTest, CompareCollectionsWithConfirmRequestsOnePerRegressedOrImprovedCase) {
  const std::string h1 = Register("h1");
  Register("h2");
  const std::string base_id = Submit(1);
  SucceedWith(*Lease(h1, 0), 100);
  const std::string cand_id = Submit(1);
  SucceedWith(*Lease(h1, 1), 120);
  ComparisonQueries queries(*store_, clock_, &confirmations_);
  v1::CompareCollectionsRequest req;
  req.set_baseline_collection_id(base_id);
  req.set_candidate_collection_id(cand_id);
  req.set_confirm(true);
  auto out = queries.CompareCollections("team", req);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->confirmations_size(), 1);
  EXPECT_EQ(out->confirmations(0).state(), v1::CONFIRMATION_STATE_PENDING);
  EXPECT_EQ(out->confirmations(0).candidate_round_id(), out->comparisons(0).candidate_round_id());
  ComparisonQueries without(*store_, clock_);
  EXPECT_TRUE(absl::IsFailedPrecondition(without.CompareCollections("team", req).status()));
}

}  // namespace
}  // namespace npuperf::server
