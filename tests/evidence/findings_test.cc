#include "evidence/findings.h"

#include <set>

#include "evidence/evidence_json.h"
#include "evidence/per_core.h"
#include "evidence/summary_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<const Finding*> Of(const Findings& f, std::string_view rule) {
  std::vector<const Finding*> out;
  for (const Finding& x : f.items) {
    if (x.rule_id == rule) out.push_back(&x);
  }
  return out;
}

const FindingNotApplied* NotApplied(const Findings& f, std::string_view rule) {
  for (const FindingNotApplied& n : f.not_applied) {
    if (n.rule_id == rule) return &n;
  }
  return nullptr;
}

Evidence WithField(const std::string& name, double v) {
  Evidence ev;
  ev.merged[name] = v;
  return ev;
}

TEST(FindingRulesTest, IdsAreUniqueUpperSnakeAndEveryRuleHasAMessageAndCaveat) {
  std::set<std::string_view> ids;
  for (const FindingRule& r : FindingRules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_EQ(r.id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
              std::string_view::npos)
        << r.id;
    EXPECT_FALSE(r.message.empty()) << r.id;
    EXPECT_FALSE(r.caveat.empty()) << r.id;
    EXPECT_EQ(FindRule(r.id), &r);
  }
  EXPECT_EQ(FindRule("NO_SUCH_RULE"), nullptr);
  EXPECT_EQ(ids.size(), 15u);
}

TEST(FindingRulesTest, DocsEvidenceMdShowsExactlyTheCodeTable) {
  const std::string doc =
      testing::ReadFile(std::filesystem::path(NPUPERF_SOURCE_DIR) / "docs" / "evidence.md");
  const std::string begin = "<!-- findings-table:begin (generated: FindingRulesMarkdown) -->\n";
  const std::string end = "<!-- findings-table:end -->";
  const size_t b = doc.find(begin);
  const size_t e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), FindingRulesMarkdown())
      << "regenerate the table of docs/evidence.md from FindingRulesMarkdown()";
}

// One row per threshold rule read from a merged column: a value at the
// threshold, one just past it (on the firing side) and one on the other side.
struct Edge {
  const char* rule;
  const char* field;
  double at, past, other;
};

class ThresholdEdgeTest : public ::testing::TestWithParam<Edge> {};

TEST_P(ThresholdEdgeTest, FiresPastItsThresholdNotAtItNorOnTheOtherSide) {
  const Edge& e = GetParam();
  EXPECT_THAT(Of(EvaluateFindings(WithField(e.field, e.at)), e.rule), IsEmpty()) << "at";
  EXPECT_THAT(Of(EvaluateFindings(WithField(e.field, e.other)), e.rule), IsEmpty()) << "other";
  Findings past = EvaluateFindings(WithField(e.field, e.past));
  ASSERT_EQ(Of(past, e.rule).size(), 1u);
  const Finding& f = *Of(past, e.rule)[0];
  EXPECT_EQ(f.field, e.field);
  EXPECT_EQ(f.threshold, FindRule(e.rule)->threshold);
  EXPECT_THAT(f.caveat, HasSubstr(kRoutingCaveat));
  EXPECT_EQ(NotApplied(past, e.rule), nullptr);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ThresholdEdgeTest,
    ::testing::Values(Edge{"PIPE_MTE2_RATIO_HIGH", "aiv_mte2_ratio", 0.50, 0.501, 0.2},
                      Edge{"PIPE_MTE2_RATIO_HIGH", "aic_mte2_ratio", 0.50, 0.9, 0.0},
                      Edge{"PIPE_MTE2_RATIO_HIGH", "mte2_ratio", 0.50, 0.51, 0.49},  // 310P
                      Edge{"PIPE_SCALAR_RATIO_HIGH", "aiv_scalar_ratio", 0.30, 0.301, 0.29},
                      Edge{"PIPE_FIXP_RATIO_HIGH", "aic_fixpipe_ratio", 0.15, 0.151, 0.14},
                      Edge{"CONFLICT_BANKGROUP_HIGH", "aiv_vec_bankgroup_cflt_ratio", 0.03, 0.031,
                           0.02},
                      Edge{"CONFLICT_BANK_HIGH", "aiv_vec_bank_cflt_ratio", 0.03, 0.031, 0.01},
                      // Conflict ratios may exceed 1 (A5 real: 1.215).
                      Edge{"CONFLICT_RESOURCE_HIGH", "aiv_vec_resc_cflt_ratio", 0.05, 1.215, 0.049},
                      Edge{"MEMORY_BW_USAGE_GOOD", "GM_to_UB_bw_usage_rate(%)", 60, 60.5, 30}));

TEST(FindingsTest, RatioFindingsShowThePercentOfTheFraction) {
  Findings f = EvaluateFindings(WithField("aiv_mte2_ratio", 0.62));
  ASSERT_EQ(Of(f, "PIPE_MTE2_RATIO_HIGH").size(), 1u);
  const Finding& x = *Of(f, "PIPE_MTE2_RATIO_HIGH")[0];
  EXPECT_DOUBLE_EQ(x.value, 62);
  EXPECT_EQ(x.unit, "%");
  EXPECT_EQ(x.severity, FindingSeverity::kWarning);
  EXPECT_EQ(x.comparison, Comparison::kGreater);
}

TEST(FindingsTest, EmptyEvidenceFiresNothingAndSaysForEveryRuleWhyItWasNotApplied) {
  Findings f = EvaluateFindings(Evidence{});
  EXPECT_THAT(f.items, IsEmpty());
  for (const FindingRule& r : FindingRules()) {
    const FindingNotApplied* n = NotApplied(f, r.id);
    ASSERT_NE(n, nullptr) << r.id;
    EXPECT_FALSE(n->note.empty()) << r.id;
  }
  EXPECT_THAT(NotApplied(f, "CONFLICT_BANKGROUP_HIGH")->note, HasSubstr("A5"));
}

TEST(FindingsTest, OutOfRangePipeRatioIsNotUsedAndTheRuleSaysSo) {
  // 55 is a percent where a fraction belongs: bound.cc reports it.
  Findings f = EvaluateFindings(WithField("aiv_mte2_ratio", 55));
  EXPECT_THAT(Of(f, "PIPE_MTE2_RATIO_HIGH"), IsEmpty());
  ASSERT_NE(NotApplied(f, "PIPE_MTE2_RATIO_HIGH"), nullptr);
  EXPECT_THAT(NotApplied(f, "PIPE_MTE2_RATIO_HIGH")->note, HasSubstr("out of range"));
}

TEST(FindingsTest, MainMemoryBandwidthIsNeverTurnedIntoTrafficWhenByteFieldsAreAbsent) {
  Evidence ev = WithField("aiv_main_mem_read_bw(GB/s)", 1500);
  ev.merged["aiv_main_mem_write_bw(GB/s)"] = 1500;
  Findings f = EvaluateFindings(ev);
  EXPECT_THAT(Of(f, "MEMORY_BW_USAGE_GOOD"), IsEmpty());
  ASSERT_NE(NotApplied(f, "MEMORY_BW_USAGE_GOOD"), nullptr);
  EXPECT_THAT(NotApplied(f, "MEMORY_BW_USAGE_GOOD")->note, HasSubstr("CANN 9.2 / A5"));
  EXPECT_THAT(NotApplied(f, "MEMORY_BW_USAGE_GOOD")->note, HasSubstr("main_mem_*_bw"));
  // With byte fields but no usage rate, the note names what is missing.
  ev.merged["GM_to_UB_datas(KB)"] = 4096;
  EXPECT_THAT(NotApplied(EvaluateFindings(ev), "MEMORY_BW_USAGE_GOOD")->note,
              HasSubstr("only msprof op Memory reports usage rates"));
}

TEST(FindingsTest, MteTwoAndThreeTogetherAboveHalfHintAtSharedGmBandwidth) {
  Evidence ev = WithField("aiv_mte2_ratio", 0.30);
  ev.merged["aiv_mte3_ratio"] = 0.20;  // exactly 50 %: not above
  EXPECT_THAT(Of(EvaluateFindings(ev), "GM_MTE2_MTE3_SHARED"), IsEmpty());
  ev.merged["aiv_mte3_ratio"] = 0.25;
  Findings f = EvaluateFindings(ev);
  ASSERT_EQ(Of(f, "GM_MTE2_MTE3_SHARED").size(), 1u);
  EXPECT_NEAR(Of(f, "GM_MTE2_MTE3_SHARED")[0]->value, 55, 1e-9);
  EXPECT_EQ(Of(f, "GM_MTE2_MTE3_SHARED")[0]->severity, FindingSeverity::kHint);
  // A2/A3 AIC has MTE2 but no MTE3: the rule is not applied there.
  EXPECT_NE(NotApplied(EvaluateFindings(WithField("aic_mte2_ratio", 0.9)), "GM_MTE2_MTE3_SHARED"),
            nullptr);
}

Evidence L2(double hit, double miss) {
  Evidence ev = WithField("aiv_r0_read_cache_hit", hit);
  ev.merged["aiv_r0_read_cache_miss_allocate"] = miss;
  return ev;
}

TEST(FindingsTest, L2HitRateAboveEightyIsGoodBelowFiftyNeedsWorkAndTheEdgesFireNeither) {
  EXPECT_THAT(Of(EvaluateFindings(L2(80, 20)), "L2_HIT_RATE_GOOD"), IsEmpty());
  EXPECT_THAT(Of(EvaluateFindings(L2(50, 50)), "L2_HIT_RATE_LOW"), IsEmpty());
  Findings good = EvaluateFindings(L2(81, 19));
  ASSERT_EQ(Of(good, "L2_HIT_RATE_GOOD").size(), 1u);
  EXPECT_EQ(Of(good, "L2_HIT_RATE_GOOD")[0]->field, "aiv_l2_total_hit_rate");
  EXPECT_EQ(Of(good, "L2_HIT_RATE_GOOD")[0]->severity, FindingSeverity::kGood);
  EXPECT_THAT(Of(good, "L2_HIT_RATE_LOW"), IsEmpty());
  Findings low = EvaluateFindings(L2(49, 51));
  ASSERT_EQ(Of(low, "L2_HIT_RATE_LOW").size(), 1u);
  EXPECT_NEAR(Of(low, "L2_HIT_RATE_LOW")[0]->value, 49, 1e-9);
}

TEST(FindingsTest, CurrentBelowRatedClockIsADvfsHypothesisOnlyFromOpBasicInfo) {
  Evidence ev;
  ev.dvfs.source = ClockSource::kOpprofCurrentFreq;
  ev.dvfs.rated_mhz = 1800;
  ev.dvfs.observed_mhz = 1800;
  EXPECT_THAT(Of(EvaluateFindings(ev), "DVFS_CURRENT_BELOW_RATED"), IsEmpty());
  ev.dvfs.observed_mhz = 1700;
  ev.dvfs.deviation_pct = (1700.0 - 1800) / 1800 * 100;
  Findings f = EvaluateFindings(ev);
  ASSERT_EQ(Of(f, "DVFS_CURRENT_BELOW_RATED").size(), 1u);
  EXPECT_EQ(Of(f, "DVFS_CURRENT_BELOW_RATED")[0]->severity, FindingSeverity::kHint);
  EXPECT_THAT(Of(f, "DVFS_CURRENT_BELOW_RATED")[0]->caveat, HasSubstr("repeat or A/B"));
  // A back-calculated clock is not OpBasicInfo's Current Freq.
  ev.dvfs.source = ClockSource::kOpSummaryBackCalculated;
  f = EvaluateFindings(ev);
  EXPECT_THAT(Of(f, "DVFS_CURRENT_BELOW_RATED"), IsEmpty());
  EXPECT_NE(NotApplied(f, "DVFS_CURRENT_BELOW_RATED"), nullptr);
}

TEST(FindingsTest, HeadOverheadAboveThirtyPercentHintsOnlyWhenItWasComputed) {
  Evidence ev;
  ev.head_overhead_status = HeadOverheadStatus::kOk;
  ev.head_overhead_pct = 30;
  EXPECT_THAT(Of(EvaluateFindings(ev), "HEAD_OVERHEAD_HIGH"), IsEmpty());
  ev.head_overhead_pct = 31;
  ASSERT_EQ(Of(EvaluateFindings(ev), "HEAD_OVERHEAD_HIGH").size(), 1u);
  EXPECT_THAT(Of(EvaluateFindings(ev), "HEAD_OVERHEAD_HIGH")[0]->caveat,
              HasSubstr("may not be the operator's fault"));
  ev.head_overhead_status = HeadOverheadStatus::kNegativeGap;
  EXPECT_THAT(Of(EvaluateFindings(ev), "HEAD_OVERHEAD_HIGH"), IsEmpty());
  EXPECT_THAT(NotApplied(EvaluateFindings(ev), "HEAD_OVERHEAD_HIGH")->note,
              HasSubstr("negative_gap"));
}

// A real balance computation (per_core.h) over `times`, one core each.
Evidence Balanced(const std::vector<int64_t>& cycles) {
  Evidence ev;
  std::vector<CoreCycles> cores;
  for (size_t i = 0; i < cycles.size(); ++i) cores.push_back({static_cast<int>(i), cycles[i], 0});
  ComputeBalance(cores, 100, &ev.per_core);
  ev.per_core.status = PerCoreStatus::kProcessScopeUnattributed;
  ev.per_core.core_type = CoreType::kAiv;
  return ev;
}

TEST(FindingsTest, PerCoreSpreadFindingsFollowTheBalanceVerdictOfPerCore) {
  // spread 5 %: PASS, nothing fires.
  Findings pass = EvaluateFindings(Balanced({1000, 950}));
  EXPECT_THAT(Of(pass, "PER_CORE_SPREAD_WARNING"), IsEmpty());
  EXPECT_THAT(Of(pass, "PER_CORE_SPREAD_CRITICAL"), IsEmpty());
  // spread 15 %: WARNING only.
  Evidence warn = Balanced({1000, 850});
  ASSERT_EQ(warn.per_core.verdict, BalanceVerdict::kWarning);
  Findings w = EvaluateFindings(warn);
  ASSERT_EQ(Of(w, "PER_CORE_SPREAD_WARNING").size(), 1u);
  EXPECT_EQ(Of(w, "PER_CORE_SPREAD_WARNING")[0]->field, "per_core[AIV].spread_pct");
  EXPECT_NEAR(Of(w, "PER_CORE_SPREAD_WARNING")[0]->value, 15, 1e-9);
  EXPECT_THAT(Of(w, "PER_CORE_SPREAD_CRITICAL"), IsEmpty());
  // spread 30 % (>= 30): CRITICAL only.
  Evidence crit = Balanced({1000, 700});
  ASSERT_EQ(crit.per_core.verdict, BalanceVerdict::kCritical);
  Findings c = EvaluateFindings(crit);
  EXPECT_THAT(Of(c, "PER_CORE_SPREAD_WARNING"), IsEmpty());
  ASSERT_EQ(Of(c, "PER_CORE_SPREAD_CRITICAL").size(), 1u);
  EXPECT_EQ(Of(c, "PER_CORE_SPREAD_CRITICAL")[0]->severity, FindingSeverity::kCritical);
  EXPECT_THAT(Of(c, "PER_CORE_SPREAD_CRITICAL")[0]->caveat, HasSubstr("process-scoped"));
}

TEST(FindingsTest, HalvesTwoPercentApartHintAtNumaOrL2SliceSkewWithFourCoresOrMore) {
  // Halves 1000 vs 990: 1 % apart, no hint; 1000 vs 970: 3 %.
  EXPECT_THAT(Of(EvaluateFindings(Balanced({1000, 1000, 990, 990})), "PER_CORE_HALF_GAP"),
              IsEmpty());
  Findings f = EvaluateFindings(Balanced({1000, 1000, 970, 970}));
  ASSERT_EQ(Of(f, "PER_CORE_HALF_GAP").size(), 1u);
  EXPECT_NEAR(Of(f, "PER_CORE_HALF_GAP")[0]->value, 3, 1e-9);
  // Two cores have no halves to compare.
  EXPECT_NE(NotApplied(EvaluateFindings(Balanced({1000, 500})), "PER_CORE_HALF_GAP"), nullptr);
}

TEST(FindingsTest, UnavailablePerCoreTableAppliesNoPerCoreRuleAndNamesItsStatus) {
  Evidence ev;
  ev.per_core.status = PerCoreStatus::kNoSampleRun;
  const FindingNotApplied* n = NotApplied(EvaluateFindings(ev), "PER_CORE_SPREAD_WARNING");
  ASSERT_NE(n, nullptr);
  EXPECT_THAT(n->note, HasSubstr("no_sample_run"));
}

TEST(FindingsRenderTest, EvidenceJsonSummaryAndMarkdownCarryFindingsAndNotAppliedRules) {
  Evidence ev = WithField("aiv_mte2_ratio", 0.62);
  const nlohmann::json j = nlohmann::json::parse(ToJson(ev));
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["rule_id"], "PIPE_MTE2_RATIO_HIGH");
  EXPECT_EQ(j["findings"][0]["severity"], "warning");
  EXPECT_EQ(j["findings"][0]["field"], "aiv_mte2_ratio");
  EXPECT_DOUBLE_EQ(j["findings"][0]["value"].get<double>(), 62);
  EXPECT_EQ(j["findings"][0]["comparison"], ">");
  EXPECT_EQ(j["findings"][0]["threshold"], 50);
  EXPECT_THAT(j["findings"][0]["caveat"].get<std::string>(), HasSubstr("not a Roofline proof"));
  EXPECT_EQ(j["findings_not_applied"].size(), FindingRules().size() - 1);
  EXPECT_EQ(j["findings_not_applied"][0]["rule_id"], "PIPE_SCALAR_RATIO_HIGH");

  const std::string text = RenderSummary(ev, {});
  EXPECT_THAT(text, HasSubstr("--- Findings (findings route the next experiment"));
  EXPECT_THAT(text, HasSubstr("[warning] PIPE_MTE2_RATIO_HIGH aiv_mte2_ratio=62.00 % (> 50 %)"));
  EXPECT_THAT(text, HasSubstr("not applied: L2_HIT_RATE_GOOD (no L2 hit / miss counts"));

  const std::string md = RenderMarkdown(ev);
  EXPECT_THAT(md, HasSubstr("## Findings"));
  EXPECT_THAT(
      md, HasSubstr("| warning | `PIPE_MTE2_RATIO_HIGH` | `aiv_mte2_ratio` | 62.00 % | > 50 % |"));
  EXPECT_THAT(md, HasSubstr("- `MEMORY_BW_USAGE_GOOD`: no *_bw_usage_rate(%)"));
}

TEST(FindingsRenderTest, NothingFiredIsSaidInEveryRendering) {
  Evidence ev = WithField("aiv_mte2_ratio", 0.1);
  EXPECT_THAT(RenderSummary(ev, {}), HasSubstr("  none fired"));
  EXPECT_THAT(RenderMarkdown(ev), HasSubstr("No rule fired."));
  EXPECT_TRUE(nlohmann::json::parse(ToJson(ev))["findings"].empty());
}

}  // namespace
}  // namespace npuperf::evidence
