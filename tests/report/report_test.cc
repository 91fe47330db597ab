// report/ against messages built from a stored capture (fixtures.h): each
// page has its charts, rule lines, marked cores and colours; every string of
// every message reaches the page escaped.
#include "report/report.h"

#include <algorithm>
#include <cctype>

#include "evidence/findings.h"
#include "gtest/gtest.h"
#include "report/html.h"
#include "tests/report/fixtures.h"

namespace npuperf::report {
namespace {

using testing::CaptureRound;
using testing::DemoCollection;
using testing::DemoComparison;
using testing::DemoHistory;
using testing::DemoHistoryPage;

bool Has(const std::string& page, const std::string& what) {
  return page.find(what) != std::string::npos;
}

TEST(EscapeTest, TextAndAttributesAreInert) {
  const std::pair<std::string, std::string> cases[] = {
      {"a<b>&\"c'", "a&lt;b&gt;&amp;&quot;c&#39;"},
      {"<script>x</script>", "&lt;script&gt;x&lt;/script&gt;"},
      {"tab\tnew\nline", "tab\tnew\nline"},
      {std::string("nul\0bell\x07", 9),
       "nul\xEF\xBF\xBD"
       "bell\xEF\xBF\xBD"},
      {"caf\xC3\xA9 \xE6\xA0\xB8", "caf\xC3\xA9 \xE6\xA0\xB8"},  // valid UTF-8 kept
      {"bad\xC3(\xED\xA0\x80\xC0\xAF",
       "bad\xEF\xBF\xBD(\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(Escape(in), want) << in;
  EXPECT_EQ(ClassName("NOT_COMPARABLE"), "not_comparable");
  EXPECT_EQ(ClassName("a\" onclick=x"), "a__onclick_x");
  EXPECT_EQ(Num(1.0 / 0.0), "-");
}

TEST(RoundPageTest, ShowsChartsRulesCoresAndColouredTables) {
  const v1::Round r = CaptureRound(42, "c1", 87139.38);
  const std::string page = RenderRoundPage(r);
  EXPECT_TRUE(Has(page, "data-page=\"round\"")) << page.substr(0, 400);
  EXPECT_TRUE(Has(page, "default-src 'none'"));
  EXPECT_FALSE(Has(page, "<script"));
  // Kernel time, samples and their range.
  EXPECT_TRUE(Has(page, "data-chart=\"samples\""));
  EXPECT_TRUE(Has(page, ">87139.380<"));
  // Pipe ratios per core type with the 80 % and 70 % rules.
  EXPECT_TRUE(Has(page, "data-chart=\"pipe-aiv\""));
  EXPECT_TRUE(Has(page, "class=\"rule rule-high\" x1") && Has(page, "data-rule=\"0.80\""));
  EXPECT_TRUE(Has(page, "data-rule=\"0.70\""));
  EXPECT_TRUE(Has(page, "class=\"bar over\""));  // aiv_scalar_ratio 0.999
  // Per-core: the capture's slowest core is 0.
  ASSERT_GT(r.evidence().per_core().slowest_cores_size(), 0);
  EXPECT_TRUE(Has(page, "data-chart=\"per-core\""));
  EXPECT_TRUE(Has(page, "class=\"core slowest\""));
  EXPECT_TRUE(Has(page, "class=\"core fastest\""));
  // Bound and routing label, DVFS, findings.
  EXPECT_TRUE(Has(page, "SCALAR_BOUND"));
  EXPECT_TRUE(Has(page, r.evidence().bound().routing_label()));
  EXPECT_TRUE(Has(page, "class=\"dvfs-state good\">ok<"));
  ASSERT_GT(r.evidence().findings_size(), 0);
  for (const auto& f : r.evidence().findings()) EXPECT_TRUE(Has(page, f.rule_id())) << f.rule_id();
  EXPECT_TRUE(Has(page, "class=\"s-warning\">warning<"));  // PIPE_SCALAR_RATIO_HIGH fired
}

// The tables colour by the findings table: move a threshold's worth and the
// class follows the rule, not a number of the page's own.
TEST(RoundPageTest, TablesAreColouredByTheFindingsRules) {
  v1::Round r = CaptureRound(1, "c1", 10);
  const double l2_low = evidence::FindRule("L2_HIT_RATE_LOW")->threshold;
  const double bank = evidence::FindRule("CONFLICT_BANK_HIGH")->threshold;
  const double usage = evidence::FindRule("MEMORY_BW_USAGE_GOOD")->threshold;
  r.mutable_evidence()->clear_metrics();
  auto* l2 = r.mutable_evidence()->add_metrics();
  l2->set_group("L2Cache");
  (*l2->mutable_fields())["aiv_read_local_l2_hit"] = l2_low - 10;  // of 100 requests
  (*l2->mutable_fields())["aiv_read_local_l2_miss"] = 110 - l2_low;
  auto* cf = r.mutable_evidence()->add_metrics();
  cf->set_group("ResourceConflictRatio");
  (*cf->mutable_fields())["aiv_vec_bank_cflt_ratio"] = (bank + 1) / 100;
  (*cf->mutable_fields())["aiv_vec_resc_cflt_ratio"] = 0.001;
  auto* mem = r.mutable_evidence()->add_metrics();
  mem->set_group("Memory");
  (*mem->mutable_fields())["aiv_main_mem_bw_usage_rate(%)"] = usage + 5;
  const std::string page = RenderRoundPage(r);
  EXPECT_TRUE(Has(page, "<td class=\"num s-warning\">" + Num(l2_low - 10, 2) + "</td>")) << page;
  EXPECT_TRUE(Has(page, "<td class=\"num s-warning\">" + Num(bank + 1, 2) + " %</td>"));
  EXPECT_TRUE(Has(page, "<td class=\"num \">0.10 %</td>"));  // below its rule: uncoloured
  EXPECT_TRUE(Has(page, "<td class=\"num s-good\">" + Num(usage + 5, 3) + "</td>"));
}

TEST(CollectionPageTest, OneRowPerCaseWithItsHistory) {
  const std::string page = RenderCollectionPage(DemoCollection(), DemoHistory());
  EXPECT_TRUE(Has(page, "data-page=\"collection\""));
  EXPECT_EQ(std::count(page.begin(), page.end(), '\n') > 0, true);
  size_t sparks = 0;
  for (size_t at = 0; (at = page.find("data-chart=\"sparkline\"", at)) != std::string::npos; ++at) {
    ++sparks;
  }
  EXPECT_EQ(sparks, 2u);  // c1 and c2 have rounds; c3 failed without one
  EXPECT_TRUE(Has(page, "data-points=\"5\""));
  EXPECT_TRUE(Has(page, "class=\"spark-this\""));
  EXPECT_TRUE(Has(page, "state state-failed critical"));
  EXPECT_TRUE(Has(page, "runner exited 3"));

  // A long history: the newest 60 rounds; the job's round 9 is older than them.
  std::vector<v1::Round> long_history(100, CaptureRound(1, "c1", 80));
  for (int64_t id = 1; id <= 100; ++id) long_history[id - 1].set_id(id);
  const std::string newest = RenderCollectionPage(DemoCollection(), long_history);
  EXPECT_TRUE(Has(newest, "data-points=\"60\""));
  EXPECT_FALSE(Has(newest, "class=\"spark-this\""));
}

TEST(ComparisonPageTest, VerdictsForestChangesAndFindingChanges) {
  const std::string page = RenderComparisonPage(DemoComparison());
  EXPECT_TRUE(Has(page, "data-page=\"comparison\""));
  EXPECT_TRUE(Has(page, "class=\"verdict v-regressed\">REGRESSED<"));
  EXPECT_TRUE(Has(page, "class=\"verdict v-improved\">IMPROVED<"));
  EXPECT_TRUE(Has(page, "class=\"verdict v-insufficient\">INSUFFICIENT<"));
  EXPECT_TRUE(Has(page, "data-chart=\"forest\""));
  EXPECT_TRUE(Has(page, "data-low=\"1.0300\" data-high=\"1.0900\""));
  EXPECT_TRUE(Has(page, "class=\"one\""));
  EXPECT_TRUE(Has(page, "SCALAR_BOUND → MTE2_BOUND"));
  EXPECT_TRUE(Has(page, "PASS → WARNING"));
  EXPECT_TRUE(Has(page, "change-appeared"));
  EXPECT_TRUE(Has(page, "inplace_add_rmsnorm/c4"));
  EXPECT_TRUE(Has(page, "geomean duration ratio 0.988"));
}

TEST(HistoryPageTest, KernelTimeOverRoundsWithBaselineAndVerdicts) {
  const std::string page = RenderHistoryPage(DemoHistoryPage());
  EXPECT_TRUE(Has(page, "data-page=\"history\""));
  EXPECT_TRUE(Has(page, "id=\"case-c1\"") && Has(page, "id=\"case-c2\""));
  EXPECT_TRUE(Has(page, "class=\"baseline\""));
  EXPECT_TRUE(Has(page, "class=\"mark pinned\""));
  EXPECT_TRUE(Has(page, "class=\"mark v-regressed\""));
  EXPECT_TRUE(Has(page, "class=\"mark v-improved\""));
  EXPECT_TRUE(Has(page, "branch=main"));
}

// Every string field of `m` (and of its messages, repeated and map fields
// given one more entry) set to `text`.
void Poison(google::protobuf::Message* m, const std::string& text, int depth = 0) {
  const auto* d = m->GetDescriptor();
  const auto* refl = m->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    using FD = google::protobuf::FieldDescriptor;
    if (f->cpp_type() == FD::CPPTYPE_STRING) {
      if (!f->is_repeated()) {
        refl->SetString(m, f, text);
        continue;
      }
      for (int k = 0; k < refl->FieldSize(*m, f); ++k) refl->SetRepeatedString(m, f, k, text);
      refl->AddString(m, f, text);
    } else if (f->cpp_type() == FD::CPPTYPE_MESSAGE && depth < 6) {
      if (!f->is_repeated()) {
        Poison(refl->MutableMessage(m, f), text, depth + 1);
        continue;
      }
      for (int k = 0; k < refl->FieldSize(*m, f); ++k) {
        Poison(refl->MutableRepeatedMessage(m, f, k), text, depth + 1);
      }
      Poison(refl->AddMessage(m, f), text + std::to_string(depth), depth + 1);
    }
  }
}

void ExpectInert(const std::string& page, const std::string& hostile, const char* which) {
  std::string lower = page;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  EXPECT_FALSE(Has(lower, "<script")) << which;
  EXPECT_FALSE(Has(lower, "<img")) << which;
  EXPECT_FALSE(Has(page, hostile)) << which;
  EXPECT_TRUE(Has(page, Escape(hostile))) << which << ": the text is shown, escaped";
}

TEST(HostileInputTest, EveryPageEscapesEveryStringOfItsMessages) {
  const std::string hostile = "<script>alert(\"x'&\")</script><img src=x onerror=alert(1)>";
  v1::Round round = CaptureRound(42, "c1", 80);
  Poison(&round, hostile);
  ExpectInert(RenderRoundPage(round), hostile, "round");

  v1::Collection col = DemoCollection();
  Poison(&col, hostile);
  std::vector<v1::Round> history = DemoHistory();
  for (auto& r : history) Poison(&r, hostile);
  ExpectInert(RenderCollectionPage(col, history), hostile, "collection");

  ComparisonPage cmp = DemoComparison();
  cmp.title = cmp.summary = hostile;
  cmp.unmatched.push_back(hostile);
  for (auto& c : cmp.comparisons) Poison(&c, hostile);
  ExpectInert(RenderComparisonPage(cmp), hostile, "comparison");

  HistoryPage h = DemoHistoryPage();
  h.operator_name = h.baseline_name = hostile;
  for (auto& r : h.rounds) Poison(&r, hostile);
  for (auto& r : h.baseline) Poison(&r, hostile);
  for (auto& v : h.verdicts) Poison(&v, hostile);
  ExpectInert(RenderHistoryPage(h), hostile, "history");
}

}  // namespace
}  // namespace npuperf::report
