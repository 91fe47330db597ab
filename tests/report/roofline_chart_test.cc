// The round page's roofline section and the timeline page (report/roofline_chart.h).
#include "report/roofline_chart.h"

#include <fstream>

#include "evidence/timeline.h"
#include "tests/report/fixtures.h"

namespace npuperf::report {
namespace {

namespace fs = std::filesystem;

evidence::Evidence Capture() {
  evidence::BuildOptions o;
  o.op_name = "main_kernel";
  o.soc = "Ascend910B2";
  auto ev = evidence::BuildEvidence(fs::path(NPUPERF_EVIDENCE_TESTDATA) / "group_a2_e2", o);
  EXPECT_TRUE(ev.ok()) << ev.status();
  return ev.ok() ? *ev : evidence::Evidence{};
}

v1::Round RoundOf(const evidence::Evidence& ev) {
  v1::Round r;
  evidence::ToProto(ev, r.mutable_evidence());
  r.set_id(7);
  r.set_operator_name("op");
  return r;
}

TEST(RooflineSectionTest, UnmeasuredRoundsNameWhatIsMissing) {
  const std::string page = RenderRoundPage(RoundOf(Capture()));  // no MemoryAccess group
  EXPECT_NE(page.find("id=\"roofline\""), std::string::npos);
  EXPECT_NE(page.find("insufficient evidence: not measured"), std::string::npos);
  EXPECT_NE(page.find("read_main_memory_datas(KB)"), std::string::npos);
  EXPECT_NE(page.find("completion_eligible: false"), std::string::npos);
  EXPECT_EQ(page.find("class=\"chart roofline\""), std::string::npos);
}

TEST(RooflineSectionTest, MeasuredRoundsDrawTheCeilingsRidgeAndPoint) {
  evidence::Evidence ev = Capture();
  ev.merged["aiv_vector_fops"] = 1e9;
  ev.merged["aiv_read_main_memory_datas(KB)"] = 1000000;
  ev.merged["aiv_write_main_memory_datas(KB)"] = 500000;
  ev.merged["aic_cube_fops"] = 0;
  ev.duration.aggregate_us = 1000;
  evidence::ApplyRoofline(&ev, std::nullopt);
  ASSERT_EQ(ev.roofline.status, "measured");
  const std::string page = RenderRoundPage(RoundOf(ev));
  EXPECT_NE(page.find("<svg class=\"chart roofline\" id=\"roofline\""), std::string::npos);
  EXPECT_NE(page.find("class=\"ceiling bandwidth\""), std::string::npos);
  EXPECT_NE(page.find("class=\"ceiling compute\""), std::string::npos);
  EXPECT_NE(page.find("class=\"ridge\""), std::string::npos);
  EXPECT_NE(page.find("data-ridge=\"6.912\""), std::string::npos);
  EXPECT_NE(page.find("class=\"point this-round\""), std::string::npos);
  EXPECT_NE(page.find("data-percent-of-roof=\"96.00\""), std::string::npos);
  EXPECT_NE(page.find("roofline_terminal_status: " + ev.roofline.terminal_status),
            std::string::npos);
}

// A measured evidence of kernel time us moving `kb` KB (1e9 vector fops).
evidence::Evidence Measured(double us, double kb) {
  evidence::Evidence ev = Capture();
  ev.merged["aiv_vector_fops"] = 1e9;
  ev.merged["aiv_read_main_memory_datas(KB)"] = kb;
  ev.merged["aiv_write_main_memory_datas(KB)"] = kb / 2;
  ev.merged["aic_cube_fops"] = 0;
  ev.duration.aggregate_us = us;
  evidence::ApplyRoofline(&ev, std::nullopt);
  EXPECT_EQ(ev.roofline.status, "measured");
  return ev;
}

std::string JsonOf(const evidence::Evidence& ev) { return RoundOf(ev).evidence().evidence_json(); }

TEST(RooflineComparisonTest, BothRoundsOnOneChartWithTheMoveBetweenThem) {
  ComparisonPage p;
  p.title = "npuperf compare 1 2";
  p.baseline_evidence_json = JsonOf(Measured(1000, 1000000));
  p.candidate_evidence_json = JsonOf(Measured(1250, 1250000));  // 25 % more bytes, slower
  const std::string page = RenderComparisonPage(p);
  EXPECT_NE(page.find("<svg class=\"chart roofline\""), std::string::npos);
  EXPECT_NE(page.find("class=\"point baseline\""), std::string::npos);
  EXPECT_NE(page.find("class=\"point this-round\""), std::string::npos);
  EXPECT_NE(page.find("class=\"moved\""), std::string::npos);
  EXPECT_NE(page.find("<th>baseline</th><th>candidate</th>"), std::string::npos) << page;
}

TEST(RooflineComparisonTest, UnmeasuredSidesAreNamedAndNothingIsDrawnWithoutARoofline) {
  ComparisonPage p;
  p.baseline_evidence_json = JsonOf(Capture());  // no MemoryAccess group: not measured
  p.candidate_evidence_json = JsonOf(Measured(1000, 1000000));
  std::string page = RenderComparisonPage(p);
  EXPECT_NE(page.find("the baseline is not measured"), std::string::npos) << page;
  EXPECT_EQ(page.find("class=\"point baseline\""), std::string::npos);
  EXPECT_NE(page.find("class=\"point this-round\""), std::string::npos);
  p.baseline_evidence_json = p.candidate_evidence_json = "";
  page = RenderComparisonPage(p);
  EXPECT_EQ(page.find("id=\"roofline\""), std::string::npos);
  p.baseline_evidence_json = "{not json";
  p.candidate_evidence_json = "[1,2]";
  EXPECT_EQ(RenderComparisonPage(p).find("id=\"roofline\""), std::string::npos);
}

TEST(TimelinePageTest, LanesWithSameLaneOverlapMarked) {
  const fs::path trace = fs::path(::testing::TempDir()) / "msprof_20260101000000.json";
  std::ofstream(trace) << R"([
{"name":"thread_name","ph":"M","pid":9,"tid":1,"args":{"name":"Group0-aiv0"}},
{"name":"thread_name","ph":"M","pid":9,"tid":2,"args":{"name":"Group0-aiv1"}},
{"name":"Add_1","ph":"X","pid":1,"tid":1,"ts":"100.000","dur":"10.000"},
{"name":"MTE2","ph":"X","pid":9,"tid":1,"ts":"100.000","dur":"4.000"},
{"name":"VEC","ph":"X","pid":9,"tid":1,"ts":"102.000","dur":"4.000"},
{"name":"VEC","ph":"X","pid":9,"tid":2,"ts":"100.000","dur":"4.000"}])";
  auto t = evidence::SummarizeTimeline(trace, {"Add_1"});
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string page = RenderTimelinePage(evidence::TimelineToJson(*t));
  EXPECT_NE(page.find("data-chart=\"timeline\""), std::string::npos);
  EXPECT_NE(page.find("Group0-aiv1"), std::string::npos);
  size_t overlaps = 0;
  for (size_t at = page.find("class=\"overlap\""); at != std::string::npos;
       at = page.find("class=\"overlap\"", at + 1)) {
    ++overlaps;
  }
  EXPECT_EQ(overlaps, 1u);  // lane aiv0 only: aiv1's VEC has no movement on its own lane
  EXPECT_NE(page.find("requires_tile_dag_correlation"), std::string::npos);
  EXPECT_NE(RenderTimelinePage("not json").find("not a timeline_evidence"), std::string::npos);

  // The same lanes are the round page of a timeline round (npuperf timeline), with whether its
  // formal round may be closed and why not; no kernel time of its own.
  v1::Round r;
  r.set_id(8);
  r.set_operator_name("op");
  v1::Evidence* e = r.mutable_evidence();
  e->set_op_name("Add_1");
  e->set_evidence_json(evidence::TimelineToJson(*t));
  v1::TimelineSummary* s = e->mutable_timeline();
  s->set_anchor_round_id(7);
  s->set_roofline_terminal_status("residual_not_overlapped");
  s->set_pipeline_overlap_status("unverified");
  s->add_completion_blockers("roofline_terminal_status is residual_not_overlapped");
  const std::string round = RenderRoundPage(r);
  EXPECT_NE(round.find("data-chart=\"timeline\""), std::string::npos);
  EXPECT_NE(round.find("round 7 may be closed: no"), std::string::npos);
  EXPECT_NE(round.find("blocked: roofline_terminal_status is residual_not_overlapped"),
            std::string::npos);
  EXPECT_EQ(round.find("data-chart=\"samples\""), std::string::npos);
}

}  // namespace
}  // namespace npuperf::report
