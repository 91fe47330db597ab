#include "server/compare/comparator.h"

#include <random>

#include "evidence/evidence.h"
#include "evidence/evidence_proto.h"
#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

// A round of `op`/`case_id` whose duration samples are `samples`.
v1::Round MakeRound(int64_t id, const std::vector<double>& samples,
                    const std::string& op = "rmsnorm", const std::string& case_id = "p0") {
  v1::Round r;
  r.set_id(id);
  r.set_operator_name(op);
  r.set_case_id(case_id);
  v1::Evidence* e = r.mutable_evidence();
  double sum = 0;
  for (double s : samples) {
    e->mutable_duration()->add_samples_us(s);
    sum += s;
  }
  e->mutable_duration()->set_aggregate_us(samples.empty() ? 0 : sum / samples.size());
  e->set_op_name("_Z6kernelv");
  e->mutable_bound()->set_label("VEC_BOUND");
  e->mutable_per_core()->set_verdict("PASS");
  e->mutable_dvfs()->set_status("ok");
  v1::Fingerprint* f = e->mutable_fingerprint();
  f->set_soc("Ascend910B2");
  f->set_host("host-a");
  f->set_device_id(0);
  f->set_cann_version("8.0.RC3");
  f->set_mode("quick");
  f->set_warm_up(1);
  f->set_repeats(static_cast<int32_t>(samples.size()));
  f->set_clock_state("rated");
  v1::MetricGroup* g = e->add_metrics();
  g->set_group("PipeUtilization");
  (*g->mutable_fields())["aiv_vec_ratio"] = 0.50;
  (*g->mutable_fields())["aiv_time(us)"] = 10.0;
  return r;
}

// n samples around `mean` with relative noise `sd` (deterministic).
std::vector<double> Noisy(double mean, int n, double sd, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(mean, mean * sd);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(dist(gen));
  return out;
}

const VerdictOptions kDefaults;

TEST(ComparatorTest, ClearImprovement) {
  const auto cmp = CompareRounds(MakeRound(1, Noisy(100, 7, 0.01, 1)),
                                 MakeRound(2, Noisy(90, 7, 0.01, 2)), kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_IMPROVED) << cmp.rule();
  EXPECT_NEAR(cmp.duration().ratio(), 0.9, 0.02);
  EXPECT_LT(cmp.duration().p_value(), 0.01);
  EXPECT_LT(cmp.duration().ratio_ci_low(), 0.9);
  EXPECT_GT(cmp.duration().ratio_ci_high(), 0.88);
  EXPECT_LT(cmp.duration().ratio_ci_high(), 1.0);
  EXPECT_NE(cmp.rule().find("faster"), std::string::npos) << cmp.rule();
}

TEST(ComparatorTest, ClearRegression) {
  const auto cmp = CompareRounds(MakeRound(1, Noisy(100, 5, 0.01, 3)),
                                 MakeRound(2, Noisy(127, 5, 0.01, 4)), kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_REGRESSED) << cmp.rule();
  EXPECT_GT(cmp.duration().ratio(), 1.2);
}

TEST(ComparatorTest, SignificantButSmallChangeIsStable) {
  // 1% slower with 0.1% noise: significant, below the 2% practical threshold.
  const auto cmp = CompareRounds(MakeRound(1, Noisy(100, 9, 0.001, 5)),
                                 MakeRound(2, Noisy(101, 9, 0.001, 6)), kDefaults);
  EXPECT_LT(cmp.duration().p_value(), 0.01);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_STABLE) << cmp.rule();
  EXPECT_NE(cmp.rule().find("<2%"), std::string::npos) << cmp.rule();
  // A tighter threshold turns the same data into a regression.
  VerdictOptions tight;
  tight.duration_threshold_pct = 0.5;
  EXPECT_EQ(CompareRounds(MakeRound(1, Noisy(100, 9, 0.001, 5)),
                          MakeRound(2, Noisy(101, 9, 0.001, 6)), tight)
                .verdict(),
            v1::VERDICT_REGRESSED);
}

TEST(ComparatorTest, TooFewSamplesAreInsufficientNeverAPass) {
  const auto cmp =
      CompareRounds(MakeRound(1, {100, 100.5, 99.5}), MakeRound(2, {150, 151, 149}), kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_INSUFFICIENT);
  EXPECT_NE(cmp.rule().find("too few samples: 3 vs 3"), std::string::npos) << cmp.rule();
}

TEST(ComparatorTest, BlockingFingerprintDifferenceIsNotComparable) {
  v1::Round b = MakeRound(1, Noisy(100, 7, 0.01, 7));
  v1::Round c = MakeRound(2, Noisy(80, 7, 0.01, 8));
  c.mutable_evidence()->mutable_fingerprint()->set_soc("Ascend950PR_9589");
  c.mutable_evidence()->mutable_fingerprint()->set_host("host-b");
  const auto cmp = CompareRounds(b, c, kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_NOT_COMPARABLE);
  EXPECT_NE(cmp.rule().find("soc (Ascend910B2 vs Ascend950PR_9589)"), std::string::npos);
  ASSERT_EQ(cmp.fingerprint_differences_size(), 2);
  for (const auto& d : cmp.fingerprint_differences()) {
    EXPECT_EQ(d.blocking(), d.field() == "soc") << d.field();
  }
}

TEST(ComparatorTest, InformativeDifferencesDoNotBlock) {
  v1::Round b = MakeRound(1, Noisy(100, 7, 0.01, 9));
  v1::Round c = MakeRound(2, Noisy(80, 7, 0.01, 10), "rmsnorm_v2");
  c.mutable_evidence()->mutable_fingerprint()->set_host("host-b");
  c.mutable_evidence()->mutable_fingerprint()->set_device_id(5);
  c.mutable_evidence()->mutable_fingerprint()->set_bundle_sha256("abc");
  const auto cmp = CompareRounds(b, c, kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_IMPROVED) << cmp.rule();
  EXPECT_EQ(cmp.fingerprint_differences_size(), 4);
}

TEST(ComparatorTest, CompareModeRoundsCompareWithStandardOnesButNotWithQuick) {
  v1::Round b = MakeRound(1, Noisy(100, 7, 0.01, 30));
  v1::Round c = MakeRound(2, Noisy(100, 7, 0.01, 31));
  b.mutable_evidence()->mutable_fingerprint()->set_mode("standard");
  c.mutable_evidence()->mutable_fingerprint()->set_mode("compare");
  EXPECT_EQ(CompareRounds(b, c, kDefaults).verdict(), v1::VERDICT_STABLE);
  b.mutable_evidence()->mutable_fingerprint()->set_mode("quick");
  EXPECT_EQ(CompareRounds(b, c, kDefaults).verdict(), v1::VERDICT_NOT_COMPARABLE);
}

TEST(ComparatorTest, ShapesBlockOnlyWhenBothSidesKnowThem) {
  v1::Round b = MakeRound(1, Noisy(100, 7, 0.01, 11));
  v1::Round c = MakeRound(2, Noisy(100, 7, 0.01, 12));
  c.mutable_evidence()->set_input_shapes("\"1,4096\"");
  EXPECT_NE(CompareRounds(b, c, kDefaults).verdict(), v1::VERDICT_NOT_COMPARABLE);
  b.mutable_evidence()->set_input_shapes("\"8,4096\"");
  EXPECT_EQ(CompareRounds(b, c, kDefaults).verdict(), v1::VERDICT_NOT_COMPARABLE);
}

TEST(ComparatorTest, BoundChangeIsFlaggedWhenDurationIsFlat) {
  v1::Round b = MakeRound(1, Noisy(100, 7, 0.01, 13));
  v1::Round c = MakeRound(2, Noisy(100, 7, 0.01, 14));
  c.mutable_evidence()->mutable_bound()->set_label("MTE2_BOUND");
  c.mutable_evidence()->mutable_per_core()->set_verdict("CRITICAL");
  (*c.mutable_evidence()->mutable_metrics(0)->mutable_fields())["aiv_vec_ratio"] = 0.30;
  const auto cmp = CompareRounds(b, c, kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_STABLE) << cmp.rule();
  EXPECT_TRUE(cmp.bound_changed());
  EXPECT_TRUE(cmp.balance_changed());
  EXPECT_EQ(cmp.flags(0), "bound_route_changed:VEC_BOUND->MTE2_BOUND");
  EXPECT_EQ(cmp.flags(1), "balance_changed:PASS->CRITICAL");
  bool vec_notable = false, time_notable = true;
  for (const auto& d : cmp.metric_deltas()) {
    if (d.field() == "aiv_vec_ratio") vec_notable = d.notable();
    if (d.field() == "aiv_time(us)") time_notable = d.notable();
  }
  EXPECT_TRUE(vec_notable);    // -20 pp
  EXPECT_FALSE(time_notable);  // unchanged
}

TEST(ComparatorTest, DvfsSuspectSideMakesTheDurationInsufficient) {
  v1::Round b = MakeRound(1, Noisy(100, 7, 0.01, 15));
  v1::Round c = MakeRound(2, Noisy(130, 7, 0.01, 16));
  c.mutable_evidence()->mutable_dvfs()->set_status("suspect");
  c.mutable_evidence()->mutable_dvfs()->set_observed_mhz(1300);
  c.mutable_evidence()->mutable_dvfs()->set_rated_mhz(1800);
  const auto cmp = CompareRounds(b, c, kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_INSUFFICIENT);
  EXPECT_NE(cmp.rule().find("candidate is DVFS-suspect (observed 1300 MHz"), std::string::npos)
      << cmp.rule();
  EXPECT_EQ(cmp.flags(0), "dvfs_suspect:candidate");
}

TEST(ComparatorTest, EvidenceErrorsAreErrored) {
  v1::Round b = MakeRound(1, Noisy(100, 7, 0.01, 17));
  v1::Round c = MakeRound(2, {});
  EXPECT_EQ(CompareRounds(b, c, kDefaults).verdict(), v1::VERDICT_ERRORED);
  v1::Round d = MakeRound(3, Noisy(100, 7, 0.01, 18));
  auto* err = d.mutable_evidence()->add_errors();
  err->set_code("ratio_out_of_range");
  err->set_message("aic_mte2_ratio=1.4");
  const auto cmp = CompareRounds(b, d, kDefaults);
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_ERRORED);
  EXPECT_NE(cmp.rule().find("ratio_out_of_range"), std::string::npos);
}

// A/A: the same code measured twice at the default settings. With 1% noise
// and 5 samples per side, a false verdict needs p < 0.01 AND a 2% move.
TEST(ComparatorTest, FalseAlarmRateOfRepeatedRunsIsNearZero) {
  int alarms = 0;
  constexpr int kTrials = 2000;
  for (int i = 0; i < kTrials; ++i) {
    const auto cmp = CompareRounds(MakeRound(1, Noisy(50, 5, 0.01, 1000 + 2 * i)),
                                   MakeRound(2, Noisy(50, 5, 0.01, 1001 + 2 * i)), kDefaults);
    ASSERT_TRUE(HasDurationVerdict(cmp.verdict())) << cmp.rule();
    if (cmp.verdict() != v1::VERDICT_STABLE) ++alarms;
  }
  EXPECT_LE(alarms, kTrials / 500) << alarms << " false alarms in " << kTrials;
}

TEST(ComparatorTest, CollectionsMatchByOperatorAndCaseWithDenominators) {
  std::vector<v1::Round> base = {
      MakeRound(1, Noisy(100, 5, 0.01, 20), "a"), MakeRound(2, Noisy(100, 5, 0.01, 21), "b"),
      MakeRound(3, Noisy(100, 5, 0.01, 22), "c"), MakeRound(4, {100, 101}, "d"),
      MakeRound(5, Noisy(100, 5, 0.01, 23), "gone")};
  std::vector<v1::Round> cand = {
      MakeRound(11, Noisy(80, 5, 0.01, 24), "a"), MakeRound(12, Noisy(125, 5, 0.01, 25), "b"),
      MakeRound(13, Noisy(100, 5, 0.01, 26), "c"), MakeRound(14, {100, 101}, "d"),
      MakeRound(15, Noisy(100, 5, 0.01, 27), "new")};
  const auto out = CompareRoundSets(base, cand, kDefaults);
  EXPECT_EQ(out.counts().matched(), 4);
  EXPECT_EQ(out.counts().comparable(), 3);
  EXPECT_EQ(out.counts().improved(), 1);
  EXPECT_EQ(out.counts().regressed(), 1);
  EXPECT_EQ(out.counts().stable(), 1);
  EXPECT_EQ(out.counts().insufficient(), 1);
  EXPECT_EQ(out.counts().unmatched(), 2);
  ASSERT_EQ(out.unmatched_size(), 2);
  EXPECT_EQ(out.unmatched(0), "gone/p0 (baseline only)");
  EXPECT_EQ(out.unmatched(1), "new/p0 (candidate only)");
  // Geomean of 0.8, 1.25 and ~1.0.
  EXPECT_NEAR(out.geomean_ratio(), 1.0, 0.02);
}

TEST(ComparatorTest, GoldenReportIsLabelledAsACrossScopeReference) {
  v1::Round a = MakeRound(1, {10}, "a");
  a.mutable_evidence()->mutable_golden()->set_status("joined");
  a.mutable_evidence()->mutable_golden()->set_ratio(2.0);
  v1::Round b = MakeRound(2, {10}, "b");
  b.mutable_evidence()->mutable_golden()->set_status("joined");
  b.mutable_evidence()->mutable_golden()->set_ratio(0.5);
  v1::Round c = MakeRound(3, {10}, "c");
  c.mutable_evidence()->mutable_golden()->set_status("not_provided");
  const auto out = GoldenReport({a, b, c});
  EXPECT_EQ(out.cases_size(), 2);
  EXPECT_NEAR(out.geomean_ratio(), 1.0, 1e-12);
  EXPECT_EQ(out.label(), kGoldenLabel);
}

// A round whose evidence the evidence library renders from `merged`, so its
// findings are the library's (evidence/findings.h).
v1::Round WithFindingsOf(int64_t id, const std::map<std::string, double>& merged) {
  v1::Round r = MakeRound(id, {10, 10.1, 9.9});
  evidence::Evidence ev;
  ev.merged = merged;
  v1::Evidence rendered;
  evidence::ToProto(ev, &rendered);
  *r.mutable_evidence()->mutable_findings() = rendered.findings();
  *r.mutable_evidence()->mutable_findings_not_applied() = rendered.findings_not_applied();
  return r;
}

std::vector<std::string> Changes(const v1::RoundComparison& c) {
  std::vector<std::string> out;
  for (const auto& f : c.finding_changes()) {
    out.push_back(
        absl::StrCat(f.change(), " ", f.finding().rule_id(), "(", f.finding().field(), ")"));
  }
  return out;
}

bool HasFlag(const v1::RoundComparison& c, const std::string& flag) {
  return std::find(c.flags().begin(), c.flags().end(), flag) != c.flags().end();
}

TEST(ComparatorTest, AFindingOnlyTheCandidateHasAppearsAndOneOnlyTheBaselineHasDisappears) {
  const v1::Round busy = WithFindingsOf(1, {{"aiv_mte2_ratio", 0.62}, {"aiv_scalar_ratio", 0.1}});
  const v1::Round calm = WithFindingsOf(2, {{"aiv_mte2_ratio", 0.20}, {"aiv_scalar_ratio", 0.4}});
  const auto cmp = CompareRounds(busy, calm, kDefaults);
  EXPECT_EQ(Changes(cmp),
            (std::vector<std::string>{"disappeared PIPE_MTE2_RATIO_HIGH(aiv_mte2_ratio)",
                                      "appeared PIPE_SCALAR_RATIO_HIGH(aiv_scalar_ratio)"}));
  EXPECT_TRUE(HasFlag(cmp, "finding_disappeared:PIPE_MTE2_RATIO_HIGH(aiv_mte2_ratio)"));
  EXPECT_TRUE(HasFlag(cmp, "finding_appeared:PIPE_SCALAR_RATIO_HIGH(aiv_scalar_ratio)"));
  EXPECT_DOUBLE_EQ(cmp.finding_changes(0).finding().value(), 62);
  // A finding on both sides is no change.
  EXPECT_TRUE(CompareRounds(busy, busy, kDefaults).finding_changes().empty());
}

TEST(ComparatorTest, AFindingWhoseFieldTheOtherSideLacksIsUnmeasuredNotDisappeared) {
  const v1::Round standard = WithFindingsOf(1, {{"aiv_mte2_ratio", 0.62}});
  const v1::Round quick = WithFindingsOf(2, {});  // no metric runs: every rule not applied
  const auto cmp = CompareRounds(standard, quick, kDefaults);
  EXPECT_EQ(Changes(cmp),
            (std::vector<std::string>{"unmeasured PIPE_MTE2_RATIO_HIGH(aiv_mte2_ratio)"}));
  for (const auto& f : cmp.flags()) EXPECT_EQ(f.rfind("finding_", 0), std::string::npos) << f;
}

TEST(ComparatorTest, OptionsAreValidatedByField) {
  v1::CompareOptions o;
  o.set_alpha(0.7);
  o.set_duration_threshold_pct(-1);
  auto r = ResolveVerdictOptions(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("options.alpha"), std::string::npos);
  auto ok = ResolveVerdictOptions(v1::CompareOptions());
  ASSERT_TRUE(ok.ok());
  EXPECT_DOUBLE_EQ(ok->alpha, 0.01);
  EXPECT_DOUBLE_EQ(ok->duration_threshold_pct, 2);
  EXPECT_DOUBLE_EQ(ok->ratio_threshold_pp, 1);
}

}  // namespace
}  // namespace npuperf::server
