#include "server/compare/bisection_rules.h"

#include <cmath>
#include <random>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// One finished run of five samples around `us` (+-0.4 %).
RevisionSamples Ran(double us) {
  RevisionSamples r;
  for (double f : {1.0, 1.002, 0.998, 1.004, 0.996}) r.samples.push_back(us * f);
  r.runs = 1;
  return r;
}

RevisionSamples Failed() {
  RevisionSamples r;
  r.failed = true;
  return r;
}

RevisionSamples Running() {
  RevisionSamples r;
  r.in_flight = 1;
  return r;
}

// A range of n revisions (n - 1 commits), nothing measured.
std::vector<RevisionSamples> Range(int n) { return std::vector<RevisionSamples>(n); }

const BisectionOptions kDefaults;

// The rules without the culprit's confirmation runs, for the tests of other rules.
BisectionOptions NoConfirmation() {
  BisectionOptions o;
  o.confirm_runs = 1;
  return o;
}
const BisectionOptions kOneRun = NoConfirmation();

TEST(BisectionRulesTest, TwoRevisionsAreSameDifferentOrUnknown) {
  const Judgement slower = JudgeRevisions(Ran(100).samples, Ran(128).samples, 0.07, kDefaults);
  EXPECT_EQ(slower.relation, Relation::kDifferent) << slower.rule;
  EXPECT_NEAR(slower.ratio, 1.28, 1e-3);
  EXPECT_NEAR(slower.p_value, 2.0 / 252, 1e-12);
  EXPECT_TRUE(absl::StrContains(slower.rule, "+28.0% beyond ±7.0%")) << slower.rule;

  const Judgement same = JudgeRevisions(Ran(100).samples, Ran(100.5).samples, 0.07, kDefaults);
  EXPECT_EQ(same.relation, Relation::kSame) << same.rule;
  EXPECT_GT(same.low, 1 / 1.07);
  EXPECT_LT(same.high, 1.07);

  // Significant, but smaller than a step (+6.8 %), and its interval reaches past it.
  const Judgement between = JudgeRevisions(Ran(100).samples, Ran(106.8).samples, 0.07, kDefaults);
  EXPECT_EQ(between.relation, Relation::kUnknown) << between.rule;

  // One sample a side can reach neither p < alpha nor an interval: UNKNOWN, never a guess.
  const Judgement one = JudgeRevisions({100}, {200}, 0.07, kDefaults);
  EXPECT_EQ(one.relation, Relation::kUnknown) << one.rule;
  EXPECT_TRUE(absl::StrContains(one.rule, "1 vs 1 samples")) << one.rule;

  // Bad numbers are never judged.
  for (const std::vector<double>& bad :
       std::vector<std::vector<double>>{{}, {100, 0}, {100, -1}, {100, std::nan("")}}) {
    EXPECT_EQ(JudgeRevisions(Ran(100).samples, bad, 0.07, kDefaults).relation, Relation::kUnknown);
    EXPECT_EQ(JudgeRevisions(bad, Ran(100).samples, 0.07, kDefaults).relation, Relation::kUnknown);
  }
}

TEST(BisectionRulesTest, BadRangesAreRefusedNamingTheRevisions) {
  for (int n : {0, 1, 2, kMaxBisectionRevisions + 1}) {
    const BisectionDecision d = DecideBisection(Range(n), 8, kDefaults);
    EXPECT_EQ(d.phase, BisectionPhase::kRefused) << n;
    EXPECT_TRUE(absl::StartsWith(d.reason, "revisions: ")) << d.reason;
    EXPECT_THAT(d.to_run, IsEmpty());
  }
  EXPECT_TRUE(
      absl::StrContains(DecideBisection(Range(2), 8, kDefaults).reason, "one-commit range"));
  EXPECT_TRUE(absl::StrContains(DecideBisection(Range(10001), 8, kDefaults).reason,
                                "10000 commits, at most 1024"));
  EXPECT_EQ(DecideBisection(Range(kMaxBisectionRevisions), 8, kDefaults).phase,
            BisectionPhase::kMeasuringEnds);
}

TEST(BisectionRulesTest, TheEndsAreMeasuredAndJudgedBeforeAnyProbe) {
  std::vector<RevisionSamples> r = Range(65);
  BisectionDecision d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kMeasuringEnds);
  EXPECT_THAT(d.to_run, ElementsAre(0, 64));  // six devices stay free: no speculation
  r[0] = Ran(100);
  r[64] = Running();
  EXPECT_THAT(DecideBisection(r, 8, kDefaults).to_run, IsEmpty());

  // Ends that do not differ: refused with the figures, nothing to run.
  r[64] = Ran(100.3);
  d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kRefused);
  EXPECT_TRUE(absl::StartsWith(d.reason, "the ends do not differ: bad/good +0.3%")) << d.reason;
  EXPECT_THAT(d.to_run, IsEmpty());

  // A failed end: refused.
  r[64] = Failed();
  EXPECT_EQ(DecideBisection(r, 8, kDefaults).reason,
            "the bad revision's run failed: nothing to bisect to");
}

TEST(BisectionRulesTest, UndecidedEndsRunAgainUpToTheBudgetThenAreRefused) {
  std::vector<RevisionSamples> r = Range(9);
  r[0].samples = {100};
  r[0].runs = 1;
  r[8].samples = {130};
  r[8].runs = 1;
  BisectionDecision d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kMeasuringEnds);
  ASSERT_TRUE(d.ends.has_value());
  EXPECT_EQ(d.ends->relation, Relation::kUnknown);
  EXPECT_THAT(d.to_run, ElementsAre(0, 8));
  r[0].runs = r[8].runs = kDefaults.max_runs_per_revision;
  d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kRefused);
  EXPECT_TRUE(absl::StartsWith(d.reason, "the ends are undecided after 4 runs each")) << d.reason;
}

TEST(BisectionRulesTest, FreeDevicesProbeTheRangeEvenlyKAry) {
  std::vector<RevisionSamples> r = Range(65);
  r[0] = Ran(100);
  r[64] = Ran(128);
  BisectionDecision d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kBisecting);
  EXPECT_NEAR(d.step, 0.07, 1e-3);  // a quarter of +28 %
  // 63 unmeasured revisions in nine parts of seven.
  EXPECT_THAT(d.to_run, ElementsAre(7, 14, 21, 28, 35, 42, 49, 56));
  EXPECT_THAT(DecideBisection(r, 1, kDefaults).to_run, ElementsAre(32));  // binary
  EXPECT_THAT(DecideBisection(r, 0, kDefaults).to_run, IsEmpty());
  // While a probe of the interval runs, it gets no more.
  r[32] = Running();
  d = DecideBisection(r, 8, kDefaults);
  EXPECT_THAT(d.to_run, IsEmpty());
  EXPECT_EQ(d.phase, BisectionPhase::kBisecting);
}

TEST(BisectionRulesTest, SpeculationProbesWithSpareDevicesWhileTheEndsRun) {
  BisectionOptions o;
  o.speculate = true;
  std::vector<RevisionSamples> r = Range(65);
  EXPECT_THAT(DecideBisection(r, 8, o).to_run, ElementsAre(0, 64, 9, 18, 27, 36, 45, 54));
}

// Revisions 0..k-1 at 100 us, k.. at 128 us, each measured where `measured`.
std::vector<RevisionSamples> Step(int n, int k, const std::vector<int>& measured) {
  std::vector<RevisionSamples> r = Range(n);
  for (int i : measured) r[i] = Ran(i < k ? 100 : 128);
  return r;
}

TEST(BisectionRulesTest, TheCulpritIsTheFirstRevisionOfTheNewLevel) {
  std::vector<RevisionSamples> r = Step(65, 30, {0, 7, 14, 21, 28, 35, 42, 49, 56, 64});
  BisectionDecision d = DecideBisection(r, 8, kDefaults);
  EXPECT_THAT(d.to_run, ElementsAre(29, 30, 31, 32, 33, 34));  // all of 28..35's interior
  for (int i : {29, 30, 31, 32, 33, 34}) r[i] = Ran(i < 30 ? 100 : 128);
  // 29 and 30 differ: each runs once more before 30 is named.
  d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kBisecting);
  EXPECT_THAT(d.culprits, IsEmpty());
  EXPECT_THAT(d.to_run, ElementsAre(29, 30));
  r[29].runs = r[30].runs = 2;
  d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kDone) << d.reason;
  ASSERT_EQ(d.culprits.size(), 1u);
  EXPECT_EQ(d.culprits[0].index, 30);
  EXPECT_EQ(d.culprits[0].parent, 29);
  EXPECT_THAT(d.culprits[0].candidates, ElementsAre(30));
  EXPECT_EQ(d.culprits[0].judgement.relation, Relation::kDifferent);
  EXPECT_TRUE(d.reason.empty());
}

TEST(BisectionRulesTest, AChanceDifferenceInNoiseIsNotACulprit) {
  // Ten samples with 3 % noise against the same times +5 %: p = 0.009 < alpha
  // and beyond the 2.5 % step, but the 99 % interval reaches inside half a
  // step (1.0125): UNKNOWN, so both run again instead of naming a culprit.
  const std::vector<double> a = {100, 103, 97, 106, 94, 101, 99, 102, 98, 100};
  std::vector<double> b;
  for (double v : a) b.push_back(v * 1.05);
  const Judgement j = JudgeRevisions(a, b, 0.025, kDefaults);
  EXPECT_LT(j.p_value, 0.01);
  EXPECT_NEAR(j.ratio, 1.05, 1e-3);
  EXPECT_EQ(j.relation, Relation::kUnknown) << j.rule;
}

TEST(BisectionRulesTest, AFailedRevisionIsSkippedAndStaysACandidate) {
  std::vector<RevisionSamples> r = Step(9, 4, {0, 2, 3, 5, 8});
  r[1] = Ran(100);
  r[6] = Ran(128);
  r[7] = Ran(128);
  r[4] = Failed();  // the culprit itself does not build
  BisectionDecision d = DecideBisection(r, 8, kOneRun);
  EXPECT_EQ(d.phase, BisectionPhase::kDone);
  ASSERT_EQ(d.culprits.size(), 1u);
  EXPECT_EQ(d.culprits[0].index, 5);
  EXPECT_EQ(d.culprits[0].parent, 3);
  EXPECT_THAT(d.culprits[0].candidates, ElementsAre(4, 5));
}

TEST(BisectionRulesTest, AChangeInTwoStepsNamesBothCulprits) {
  std::vector<RevisionSamples> r = Range(9);
  for (int i = 0; i < 9; ++i) r[i] = Ran(i < 3 ? 100 : i < 6 ? 114 : 130);
  const BisectionDecision d = DecideBisection(r, 8, kOneRun);
  EXPECT_EQ(d.phase, BisectionPhase::kDone);
  ASSERT_EQ(d.culprits.size(), 2u);
  EXPECT_EQ(d.culprits[0].index, 3);
  EXPECT_EQ(d.culprits[1].index, 6);
}

TEST(BisectionRulesTest, ANoiseOnlyCommitIsNotACulprit) {
  // Revision 4 on is ten times as noisy around the same mean: its neighbours
  // are UNKNOWN, run again, and end SAME or undecided, never DIFFERENT.
  std::vector<RevisionSamples> r = Range(9);
  for (int i = 0; i < 9; ++i) r[i] = Ran(i < 6 ? 100 : 128);
  for (int i = 4; i < 6; ++i) {
    r[i].samples = {100, 104, 96, 108, 92};
  }
  BisectionDecision d = DecideBisection(r, 8, kOneRun);
  EXPECT_EQ(d.phase, BisectionPhase::kBisecting);
  // 3 vs 4 and 4 vs 5 are UNKNOWN: each side runs again.
  EXPECT_THAT(d.to_run, ElementsAre(3, 4, 5));
  for (int i = 3; i < 6; ++i) r[i].runs = kDefaults.max_runs_per_revision;
  d = DecideBisection(r, 8, kOneRun);
  EXPECT_EQ(d.phase, BisectionPhase::kDone);
  ASSERT_EQ(d.culprits.size(), 1u);
  EXPECT_EQ(d.culprits[0].index, 6);
  ASSERT_FALSE(d.undecided.empty());
  EXPECT_EQ(d.undecided[0].from, 3);
  EXPECT_EQ(d.undecided[0].to, 4);
}

TEST(BisectionRulesTest, RepeatsDoubleInParallelUpToTheBudget) {
  std::vector<RevisionSamples> r = Range(9);
  for (int i = 0; i < 9; ++i) r[i] = Ran(i < 6 ? 100 : 128);
  r[4].samples = {100, 104, 96, 108, 92};  // UNKNOWN against 3 and against 5
  r[3].runs = 2;
  r[4].runs = 2;
  r[5].runs = 3;
  // 3 and 4 run twice more at once (2 -> 4), 5 once (the budget is 4).
  EXPECT_THAT(DecideBisection(r, 8, kOneRun).to_run, ElementsAre(3, 3, 4, 4, 5));
  EXPECT_THAT(DecideBisection(r, 3, kOneRun).to_run, ElementsAre(3, 3, 4));
}

TEST(BisectionRulesTest, NoStepBigEnoughNamesNoCulpritAndSaysWhy) {
  std::vector<RevisionSamples> r = Range(9);
  for (int i = 0; i < 9; ++i) r[i] = Ran(100 * (1 + 0.035 * i));  // +3.5 % a commit
  const BisectionDecision d = DecideBisection(r, 8, kDefaults);
  EXPECT_EQ(d.phase, BisectionPhase::kDone);
  EXPECT_THAT(d.culprits, IsEmpty());
  EXPECT_TRUE(absl::StartsWith(d.reason, "no single step of at least 7.0%")) << d.reason;
}

TEST(BisectionRulesTest, AnyStateGetsAnAnswerWithinTheDevicesAndTheRange) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = std::uniform_int_distribution<int>(0, 40)(rng);
    std::vector<RevisionSamples> r(static_cast<size_t>(n));
    for (RevisionSamples& rev : r) {
      switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0: break;
        case 1: rev = Failed(); break;
        case 2: rev = Running(); break;
        case 3: rev.samples = {0, -1, std::nan("")}, rev.runs = 9; break;
        default:
          rev = Ran(std::uniform_real_distribution<double>(90, 140)(rng));
          rev.runs = std::uniform_int_distribution<int>(1, 6)(rng);
      }
    }
    const int free = std::uniform_int_distribution<int>(-2, 12)(rng);
    const BisectionDecision d = DecideBisection(r, free, kDefaults);
    EXPECT_LE(static_cast<int>(d.to_run.size()), std::max(0, free));
    for (int i : d.to_run) {
      EXPECT_GE(i, 0);
      EXPECT_LT(i, n);
      EXPECT_FALSE(r[static_cast<size_t>(i)].failed);
    }
    if (d.phase == BisectionPhase::kRefused) {
      EXPECT_FALSE(d.reason.empty());
    }
  }
}

}  // namespace
}  // namespace npuperf::server
