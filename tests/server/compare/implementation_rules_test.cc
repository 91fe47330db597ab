#include "server/compare/implementation_rules.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

// Five samples around `mean_us` whose mean is exactly mean_us (spread
// +-1 %), the aggregate `mean_us`: two such sides differ by exactly the
// ratio of their means.
v1::Round MakeRound(int64_t id, const std::string& op, const std::string& case_id, double mean_us,
                    double core_aic_us = 0, double core_aiv_us = 0) {
  v1::Round r;
  r.set_id(id);
  r.set_operator_name(op);
  r.set_case_id(case_id);
  v1::Evidence* e = r.mutable_evidence();
  for (double f : {1.0, 1.005, 0.995, 1.01, 0.99})
    e->mutable_duration()->add_samples_us(mean_us * f);
  e->mutable_duration()->set_aggregate_us(mean_us);
  e->set_operator_name(op);
  e->set_case_id(case_id);
  e->set_op_name("kernel_" + op);
  e->set_block_num(id);
  e->set_aicore_time_us(core_aic_us);
  e->set_aiv_time_us(core_aiv_us);
  e->set_input_shapes("\"8,1024\"");
  e->set_input_data_types("FLOAT16");
  e->mutable_dvfs()->set_status("ok");
  v1::Fingerprint* f = e->mutable_fingerprint();
  f->set_soc("Ascend910B2");
  f->set_cann_version("9.1.0");
  f->set_mode("standard");
  f->set_bundle_sha256("sha-" + op);
  f->set_case_shape("8x1024");
  f->set_case_dtype("float16");
  f->set_seed(7);
  return r;
}

const VerdictOptions kDefaults;

v1::CompareImplementationsRequest MapRequest(const std::string& map) {
  v1::CompareImplementationsRequest req;
  req.set_pair_map(map);
  return req;
}

TEST(ImplementationRulesTest, PairMapLinesCommentsAndPairs) {
  v1::CompareImplementationsRequest req =
      MapRequest("# PyPTO = Ascend C\n\n  rms_pypto = rms_ascendc \nrope_pypto=rope_ascendc\n");
  auto* p = req.add_pairs();
  p->set_candidate_operator("adam_pypto");
  p->set_base_operator("adam_ascendc");
  auto pairs = RequestedPairs(req);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->size(), 3u);
  EXPECT_EQ((*pairs)[0].candidate_operator(), "adam_pypto");
  EXPECT_EQ((*pairs)[1].candidate_operator(), "rms_pypto");
  EXPECT_EQ((*pairs)[1].base_operator(), "rms_ascendc");
  EXPECT_EQ((*pairs)[2].base_operator(), "rope_ascendc");
}

TEST(ImplementationRulesTest, BadPairsAreNamedByFieldAndLine) {
  v1::CompareImplementationsRequest req = MapRequest("a=b\nno equals sign\nc=../x\na=d\n");
  auto* p = req.add_pairs();
  p->set_candidate_operator("");
  p->set_base_operator("ok");
  const absl::Status s = RequestedPairs(req).status();
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "pairs[0].candidate_operator")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "line 2: want CAND_OP=BASE_OP")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "line 3: base operator")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "line 4: candidate operator 'a' is paired twice"))
      << s;
}

TEST(ImplementationRulesTest, PairCountIsCapped) {
  std::string at_cap, over;
  for (int i = 0; i < kMaxImplementationPairs; ++i) absl::StrAppend(&at_cap, "c", i, "=b", i, "\n");
  EXPECT_TRUE(RequestedPairs(MapRequest(at_cap)).ok());
  // The pair map of 10,000 lines.
  for (int i = 0; i < 10'000; ++i) absl::StrAppend(&over, "c", i, "=b", i, "\n");
  const absl::Status s = RequestedPairs(MapRequest(over)).status();
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "pair_map")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "10000 pairs in all; at most 1000")) << s;
  // Pairs and map lines count together.
  v1::CompareImplementationsRequest both = MapRequest(at_cap);
  both.add_pairs()->set_candidate_operator("extra");
  both.mutable_pairs(0)->set_base_operator("b");
  EXPECT_TRUE(absl::IsInvalidArgument(RequestedPairs(both).status()));
  const std::string huge(kMaxPairMapBytes + 1, '#');
  const absl::Status big = RequestedPairs(MapRequest(huge)).status();
  EXPECT_TRUE(absl::StrContains(big.message(), "bytes; at most")) << big;
}

TEST(ImplementationRulesTest, WithoutPairsNamesakesPairAndTheRestIsListed) {
  const std::vector<v1::Round> base = {MakeRound(1, "shared", "c1", 100),
                                       MakeRound(2, "base_only", "c1", 100)};
  const std::vector<v1::Round> cand = {MakeRound(11, "shared", "c1", 50),
                                       MakeRound(12, "cand_only", "c1", 50)};
  google::protobuf::RepeatedPtrField<v1::UnpairedOperator> unpaired;
  const auto pairs = ResolvePairs({}, base, cand, false, &unpaired);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].candidate_operator(), "shared");
  EXPECT_EQ(pairs[0].base_operator(), "shared");
  ASSERT_EQ(unpaired.size(), 2);
  EXPECT_EQ(unpaired[0].operator_name(), "cand_only");
  EXPECT_EQ(unpaired[0].side(), "candidate");
  EXPECT_TRUE(absl::StrContains(unpaired[0].reason(), "no base operator of that name"));
  EXPECT_EQ(unpaired[1].operator_name(), "base_only");
  EXPECT_EQ(unpaired[1].side(), "base");
}

TEST(ImplementationRulesTest, ExplicitPairsAreExactlyWhatIsCompared) {
  const std::vector<v1::Round> base = {MakeRound(1, "rms_asc", "c1", 100),
                                       MakeRound(2, "shared", "c1", 100)};
  const std::vector<v1::Round> cand = {MakeRound(11, "rms_pto", "c1", 50),
                                       MakeRound(12, "shared", "c1", 50)};
  v1::OperatorPair rms, ghost;
  rms.set_candidate_operator("rms_pto");
  rms.set_base_operator("rms_asc");
  ghost.set_candidate_operator("ghost_pto");
  ghost.set_base_operator("rms_asc");
  google::protobuf::RepeatedPtrField<v1::UnpairedOperator> unpaired;
  const auto pairs = ResolvePairs({rms, ghost}, base, cand, false, &unpaired);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].candidate_operator(), "rms_pto");
  ASSERT_EQ(unpaired.size(), 3);
  EXPECT_EQ(unpaired[0].operator_name(), "ghost_pto");
  EXPECT_EQ(unpaired[0].side(), "candidate");
  EXPECT_TRUE(absl::StrContains(unpaired[0].reason(),
                                "pair ghost_pto=rms_asc: no rounds in the candidate collection"))
      << unpaired[0].reason();
  EXPECT_EQ(unpaired[1].operator_name(), "shared");
  EXPECT_EQ(unpaired[1].reason(), "named by no pair");
  EXPECT_EQ(unpaired[2].operator_name(), "shared");
  EXPECT_EQ(unpaired[2].side(), "base");
  // Both implementations in one collection: the rest of it is not listed.
  unpaired.Clear();
  std::vector<v1::Round> both = base;
  both.insert(both.end(), cand.begin(), cand.end());
  const auto one = ResolvePairs({rms}, both, both, true, &unpaired);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].base_operator(), "rms_asc");
  EXPECT_EQ(unpaired.size(), 0);
}

TEST(ImplementationRulesTest, BothScopesOnWorkedNumbers) {
  // Task Duration 100 -> 50 us (5 vs 5 samples, fully separated: exact
  // p = 2 / C(10, 5) = 0.0079 < 0.01); core time AIC 80 us -> AIV 44 us.
  const v1::ImplementationCase c =
      CompareImplementationCase(MakeRound(1, "rms_asc", "c1", 100, 80, 20),
                                MakeRound(2, "rms_pto", "c1", 50, 10, 44), kDefaults);
  ASSERT_EQ(c.status(), v1::IMPLEMENTATION_CASE_COMPARED) << c.reason();
  EXPECT_EQ(c.task_duration().scope(), "task_duration");
  EXPECT_DOUBLE_EQ(c.task_duration().ratio(), 0.5);
  EXPECT_NEAR(c.task_duration().p_value(), 2.0 / 252, 1e-12);
  EXPECT_EQ(c.task_duration().verdict(), v1::VERDICT_IMPROVED) << c.task_duration().rule();
  EXPECT_GT(c.task_duration().ratio_ci_high(), 0);
  EXPECT_LE(c.task_duration().ratio_ci_low(), 0.5);
  EXPECT_GE(c.task_duration().ratio_ci_high(), 0.5);
  EXPECT_EQ(c.task_duration().base_samples(), 5);
  EXPECT_EQ(c.core().scope(), "core");
  EXPECT_DOUBLE_EQ(c.core().base_us(), 80);
  EXPECT_DOUBLE_EQ(c.core().candidate_us(), 44);
  EXPECT_DOUBLE_EQ(c.core().ratio(), 0.55);
  EXPECT_EQ(c.core().base_core(), "AIC");
  EXPECT_EQ(c.core().candidate_core(), "AIV");
  EXPECT_EQ(c.core().verdict(), v1::VERDICT_INSUFFICIENT);
  EXPECT_TRUE(absl::StrContains(c.core().rule(), "base round has no core time per repeat"))
      << c.core().rule();
  EXPECT_TRUE(std::find(c.flags().begin(), c.flags().end(), "primary_core:AIC->AIV") !=
              c.flags().end());
  // The expected differences are listed and never block.
  int informative = 0;
  for (const auto& d : c.fingerprint_differences()) {
    EXPECT_FALSE(d.blocking()) << d.field();
    if (d.field() == "op_name" || d.field() == "bundle_sha256" || d.field() == "block_num" ||
        d.field() == "operator_name") {
      ++informative;
    }
  }
  EXPECT_EQ(informative, 4);
}

// Five core samples per side (one per repeat) around `us`, median `us`.
void SetCoreSamples(v1::Round* r, double us) {
  for (double f : {1.0, 1.004, 0.996, 1.008, 0.992})
    r->mutable_evidence()->mutable_duration()->add_core_samples_us(us * f);
}

TEST(ImplementationRulesTest, TheCoreScopeIsTestedOnItsSamplesWhenBothSidesHaveThem) {
  // Core 80 -> 44 us per repeat, fully separated 5 vs 5: exact p = 2/252.
  v1::Round base = MakeRound(1, "rms_asc", "c1", 100, 80, 20);
  v1::Round cand = MakeRound(2, "rms_pto", "c1", 50, 10, 44);
  SetCoreSamples(&base, 80);
  SetCoreSamples(&cand, 44);
  const v1::ImplementationCase c = CompareImplementationCase(base, cand, kDefaults);
  ASSERT_EQ(c.status(), v1::IMPLEMENTATION_CASE_COMPARED) << c.reason();
  EXPECT_EQ(c.core().verdict(), v1::VERDICT_IMPROVED) << c.core().rule();
  EXPECT_NEAR(c.core().p_value(), 2.0 / 252, 1e-12);
  EXPECT_DOUBLE_EQ(c.core().base_us(), 80);  // the medians
  EXPECT_DOUBLE_EQ(c.core().candidate_us(), 44);
  EXPECT_DOUBLE_EQ(c.core().ratio(), 0.55);
  EXPECT_EQ(c.core().base_samples(), 5);
  EXPECT_EQ(c.core().candidate_samples(), 5);
  EXPECT_LE(c.core().ratio_ci_low(), 0.55);
  EXPECT_GE(c.core().ratio_ci_high(), 0.55);
  EXPECT_GT(c.core().ratio_ci_low(), 0.5);

  // Same core time on both sides: STABLE, with a p-value, not INSUFFICIENT.
  v1::Round same = MakeRound(3, "rms_pto", "c1", 50, 10, 80);
  SetCoreSamples(&same, 80);
  EXPECT_EQ(CompareImplementationCase(base, same, kDefaults).core().verdict(), v1::VERDICT_STABLE);

  // One side without per-repeat core samples: the merged figures, untested,
  // naming the side.
  v1::Round old = MakeRound(4, "rms_pto", "c1", 50, 10, 44);
  const v1::ScopeComparison s = CompareImplementationCase(base, old, kDefaults).core();
  EXPECT_EQ(s.verdict(), v1::VERDICT_INSUFFICIENT);
  EXPECT_TRUE(absl::StrContains(s.rule(), "candidate round has no core time per repeat"))
      << s.rule();

  // A non-positive core sample makes the round's samples unusable.
  v1::Round bad = cand;
  bad.mutable_evidence()->mutable_duration()->set_core_samples_us(2, 0);
  EXPECT_EQ(CompareImplementationCase(base, bad, kDefaults).core().verdict(),
            v1::VERDICT_INSUFFICIENT);
}

TEST(ImplementationRulesTest, JudgeScopeWithRepeatsTestsAndWithoutSaysWhy) {
  const auto slower = JudgeScope("core", {10, 10.1, 9.9, 10.05, 9.95}, {12, 12.1, 11.9, 12.2, 11.8},
                                 10, 12, kDefaults, "");
  EXPECT_EQ(slower.verdict(), v1::VERDICT_REGRESSED) << slower.rule();
  EXPECT_DOUBLE_EQ(slower.ratio(), 1.2);
  EXPECT_TRUE(absl::StrContains(slower.rule(), "+20.00% slower beyond 2%")) << slower.rule();
  const auto same = JudgeScope("core", {10, 10.1, 9.9, 10.05, 9.95}, {10, 10.1, 9.9, 10.05, 9.95},
                               10, 10, kDefaults, "");
  EXPECT_EQ(same.verdict(), v1::VERDICT_STABLE) << same.rule();
  const auto one = JudgeScope("core", {10}, {5}, 10, 5, kDefaults, "one figure");
  EXPECT_EQ(one.verdict(), v1::VERDICT_INSUFFICIENT);
  EXPECT_DOUBLE_EQ(one.ratio(), 0.5);
  EXPECT_DOUBLE_EQ(one.p_value(), 1);
  EXPECT_EQ(one.ratio_ci_low(), 0);
  EXPECT_TRUE(absl::StrContains(one.rule(), "1 vs 1")) << one.rule();
  EXPECT_TRUE(absl::StrContains(one.rule(), "one figure")) << one.rule();
}

TEST(ImplementationRulesTest, ErroredShapeMismatchAndRealDifferencesAreListedNotCompared) {
  const v1::Round base = MakeRound(1, "rms_asc", "c1", 100, 80);
  v1::Round errored = MakeRound(2, "rms_pto", "c1", 50, 40);
  auto* err = errored.mutable_evidence()->add_errors();
  err->set_code("RATIO_OUT_OF_RANGE");
  err->set_message("aiv_vec_ratio 1.3");
  v1::ImplementationCase c = CompareImplementationCase(base, errored, kDefaults);
  EXPECT_EQ(c.status(), v1::IMPLEMENTATION_CASE_ERRORED);
  EXPECT_TRUE(absl::StrContains(c.reason(), "candidate evidence errors: RATIO_OUT_OF_RANGE"))
      << c.reason();
  EXPECT_FALSE(c.has_task_duration());

  v1::Round wide = MakeRound(3, "rms_pto", "c1", 50, 40);
  wide.mutable_evidence()->mutable_fingerprint()->set_case_shape("16x1024");
  c = CompareImplementationCase(base, wide, kDefaults);
  EXPECT_EQ(c.status(), v1::IMPLEMENTATION_CASE_SHAPE_MISMATCH);
  EXPECT_TRUE(absl::StrContains(c.reason(), "case_shape (8x1024 vs 16x1024)")) << c.reason();
  EXPECT_FALSE(c.has_core());

  v1::Round dtype = MakeRound(4, "rms_pto", "c1", 50, 40);
  dtype.mutable_evidence()->set_input_data_types("FLOAT");
  EXPECT_EQ(CompareImplementationCase(base, dtype, kDefaults).status(),
            v1::IMPLEMENTATION_CASE_SHAPE_MISMATCH);

  for (const char* field : {"soc", "cann_version", "mode", "seed"}) {
    v1::Round other = MakeRound(5, "rms_pto", "c1", 50, 40);
    v1::Fingerprint* f = other.mutable_evidence()->mutable_fingerprint();
    if (std::string(field) == "soc") f->set_soc("Ascend910_9392");
    if (std::string(field) == "cann_version") f->set_cann_version("8.5.0");
    if (std::string(field) == "mode") f->set_mode("quick");
    if (std::string(field) == "seed") f->set_seed(8);
    c = CompareImplementationCase(base, other, kDefaults);
    EXPECT_EQ(c.status(), v1::IMPLEMENTATION_CASE_NOT_COMPARABLE) << field;
    EXPECT_TRUE(absl::StrContains(c.reason(), field)) << c.reason();
  }
}

TEST(ImplementationRulesTest, QuickRoundsHaveNoCoreScope) {
  const v1::ImplementationCase c = CompareImplementationCase(
      MakeRound(1, "rms_asc", "c1", 100), MakeRound(2, "rms_pto", "c1", 90), kDefaults);
  ASSERT_EQ(c.status(), v1::IMPLEMENTATION_CASE_COMPARED);
  EXPECT_EQ(c.core().ratio(), 0);
  EXPECT_EQ(c.core().verdict(), v1::VERDICT_UNSPECIFIED);
  EXPECT_TRUE(absl::StrContains(c.core().rule(), "no core time on the base side"))
      << c.core().rule();
  EXPECT_DOUBLE_EQ(c.task_duration().ratio(), 0.9);
}

TEST(ImplementationRulesTest, MissingCasesOperatorsAndCounts) {
  const std::vector<v1::Round> base = {MakeRound(1, "rms_asc", "c1", 100, 80),
                                       MakeRound(2, "rms_asc", "c2", 200, 160),
                                       MakeRound(3, "rms_asc", "c3", 300, 240)};
  std::vector<v1::Round> cand = {MakeRound(11, "rms_pto", "c1", 50, 60),
                                 MakeRound(12, "rms_pto", "c2", 150, 80),
                                 MakeRound(13, "rms_pto", "c4", 10, 10)};
  // An older round of c1 is ignored: the newest one of a case counts.
  cand.push_back(MakeRound(9, "rms_pto", "c1", 500, 500));
  v1::OperatorPair p;
  p.set_candidate_operator("rms_pto");
  p.set_base_operator("rms_asc");
  const auto out = CompareImplementationSets(base, cand, {p}, false, kDefaults);
  ASSERT_EQ(out.cases_size(), 4);
  EXPECT_EQ(out.cases(0).candidate_round_id(), 11);
  EXPECT_EQ(out.cases(2).status(), v1::IMPLEMENTATION_CASE_MISSING_CANDIDATE);
  EXPECT_TRUE(absl::StrContains(out.cases(2).reason(), "no round of case 'c3'"));
  EXPECT_EQ(out.cases(3).status(), v1::IMPLEMENTATION_CASE_MISSING_BASE);
  ASSERT_EQ(out.operators_size(), 1);
  const auto& op = out.operators(0);
  EXPECT_EQ(op.scenarios(), 2);
  EXPECT_EQ(op.not_compared(), 2);
  // Geometric means of the cases: sqrt(0.5 * 0.75) and sqrt(0.75 * 0.5).
  EXPECT_NEAR(op.task_duration_ratio(), std::sqrt(0.5 * 0.75), 1e-12);
  EXPECT_NEAR(op.core_ratio(), std::sqrt(0.75 * 0.5), 1e-12);
  EXPECT_EQ(op.task_duration_counts().improved(), 2);
  EXPECT_EQ(op.core_counts().insufficient(), 2);
  EXPECT_EQ(out.counts().matched(), 2);
  EXPECT_EQ(out.counts().improved(), 2);
  EXPECT_EQ(out.counts().unmatched(), 2);
}

// The release report's table (seed 001, section 4.4): twelve operators and
// their PyPTO/Ascend C ratios in the two scopes, averaged 0.64 and 0.52.
TEST(ImplementationRulesTest, MeansOverOperatorsReproduceTheReleaseReport) {
  const std::vector<std::tuple<std::string, double, double>> table = {
      {"inplace_add_rmsnorm", 0.54, 0.46},
      {"mla_prolog_v3", 0.75, 0.68},
      {"mla_prolog_v3_quant", 0.66, 0.59},
      {"interleave_rope", 0.69, 0.5},
      {"sparse_flash_attn_antiquant", 0.69, 0.63},
      {"sparse_flash_attn", 0.82, 0.73},
      {"glm_attention", 0.58, 0.52},
      {"flash_attention_mha", 0.6, 0.26},
      {"flash_attention_mha_grad", 0.42, 0.27},
      {"mhc_post", 0.6, 0.32},
      {"apply_adam", 0.77, 0.73},
      {"incre_flash_attention_mla", 0.53, 0.51}};
  std::vector<v1::Round> base, cand;
  std::vector<v1::OperatorPair> pairs;
  double log_core = 0, log_task = 0;
  int64_t id = 0;
  for (const auto& [op, core, task] : table) {
    base.push_back(MakeRound(++id, op + "_ascendc", "p0", 100, 100));
    cand.push_back(MakeRound(++id, op, "p0", 100 * task, 100 * core));
    pairs.emplace_back().set_candidate_operator(op);
    pairs.back().set_base_operator(op + "_ascendc");
    log_core += std::log(core);
    log_task += std::log(task);
  }
  const auto out = CompareImplementationSets(base, cand, pairs, false, kDefaults);
  ASSERT_EQ(out.operators_size(), 12);
  EXPECT_EQ(out.unpaired_size(), 0);
  EXPECT_EQ(out.arithmetic_mean().label(), kArithmeticMeanLabel);
  EXPECT_NEAR(out.arithmetic_mean().core_ratio(), 0.6375, 1e-12);             // the report's 0.64
  EXPECT_NEAR(out.arithmetic_mean().task_duration_ratio(), 6.2 / 12, 1e-12);  // 0.52
  EXPECT_EQ(out.arithmetic_mean().core_operators(), 12);
  EXPECT_EQ(out.geometric_mean().label(), kGeometricMeanLabel);
  EXPECT_NEAR(out.geometric_mean().core_ratio(), std::exp(log_core / 12), 1e-12);
  EXPECT_NEAR(out.geometric_mean().task_duration_ratio(), std::exp(log_task / 12), 1e-12);
  EXPECT_NEAR(out.geometric_mean().core_ratio(), 0.6276, 1e-4);
  EXPECT_NEAR(out.geometric_mean().task_duration_ratio(), 0.4885, 1e-4);
  EXPECT_EQ(ArithmeticMean({}), 0);
}

TEST(ImplementationRulesTest, ResponseSizeIsCapped) {
  v1::CompareImplementationsResponse resp;
  resp.add_cases()->set_reason(std::string(100, 'x'));
  EXPECT_TRUE(CheckImplementationResponseSize(resp, 1000).ok());
  const absl::Status s = CheckImplementationResponseSize(resp, 50);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "compare fewer operators")) << s;
}

}  // namespace
}  // namespace npuperf::server
