// The evidence validator (server/core/evidence_validator.h): one test per
// rule, and real evidence built by the evidence library from the msprof
// fixtures passes it (no false refusals of honest agents).
#include "server/core/evidence_validator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "evidence/evidence.h"
#include "evidence/evidence_proto.h"
#include "evidence/findings.h"
#include "evidence/labels.h"
#include "gtest/gtest.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

namespace ev = ::npuperf::evidence;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

v1::Evidence Honest() {
  v1::Evidence e;
  e.set_op_name("main_kernel");
  e.mutable_duration()->add_samples_us(12.5);
  e.mutable_duration()->add_samples_us(12.7);
  e.mutable_duration()->set_aggregate_us(12.6);
  e.mutable_duration()->set_method(v1::AGGREGATION_METHOD_MEDIAN);
  e.mutable_bound()->set_label("VEC_BOUND");
  (*e.mutable_bound()->mutable_ratios())["aiv_vec_ratio"] = 0.8;
  auto* g = e.add_metrics();
  g->set_group("PipeUtilization");
  (*g->mutable_fields())["aiv_vec_ratio"] = 0.8;
  (*g->mutable_fields())["aiv_time_us"] = 10.0;
  e.add_warnings("a warning");
  return e;
}

std::vector<std::string> Fields(const v1::Evidence& e) {
  std::vector<std::string> out;
  for (const auto& v : ValidateEvidence(e)) out.push_back(v.field);
  return out;
}

using Names = std::vector<std::string>;

TEST(EvidenceValidatorTest, HonestEvidencePasses) { EXPECT_EQ(Fields(Honest()), Names{}); }

TEST(EvidenceValidatorTest, EvidenceOfEveryMsprofFixturePasses) {
  int built = 0;
  for (const auto& [group, op] : {std::pair{"group_a2_e2", "main_kernel"},
                                  {"group_aiv_partial", "sanitized_add_custom_vector"},
                                  {"group_dup", "main_kernel"}}) {
    ev::BuildOptions o;
    o.op_name = op;
    o.soc = "Ascend910B2";
    auto built_ev = ev::BuildEvidence(std::filesystem::path(NPUPERF_EVIDENCE_TESTDATA) / group, o);
    if (!built_ev.ok()) continue;
    v1::Evidence pb;
    ev::ToProto(*built_ev, &pb);
    EXPECT_EQ(Fields(pb), Names{}) << group << ": " << EvidenceRejection(ValidateEvidence(pb));
    ++built;
  }
  EXPECT_GE(built, 2);
}

TEST(EvidenceValidatorTest, EverySpellingOfTheEvidenceLibraryIsKnown) {
  v1::Evidence e = Honest();
  for (int i = 0; i <= static_cast<int>(ev::PipeBound::kNoBound); ++i) {
    e.mutable_bound()->set_label(ev::NameOf(static_cast<ev::PipeBound>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.bound().label();
  }
  for (int i = 0; i <= static_cast<int>(ev::RoutingLabel::kNoDominantPipe); ++i) {
    e.mutable_bound()->set_routing_label(ev::NameOf(static_cast<ev::RoutingLabel>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.bound().routing_label();
  }
  for (int i = 0; i <= static_cast<int>(ev::ClockSource::kAicoreDbBackCalculated); ++i) {
    e.mutable_dvfs()->set_source(ev::NameOf(static_cast<ev::ClockSource>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.dvfs().source();
  }
  for (int i = 0; i <= static_cast<int>(ev::DvfsStatus::kSuspect); ++i) {
    e.mutable_dvfs()->set_status(ev::NameOf(static_cast<ev::DvfsStatus>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.dvfs().status();
  }
  for (int i = 0; i <= static_cast<int>(ev::TimingSource::kApiStatistic); ++i) {
    e.mutable_duration()->set_source(ev::NameOf(static_cast<ev::TimingSource>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.duration().source();
  }
  for (int i = 0; i <= static_cast<int>(ev::BalanceVerdict::kCritical); ++i) {
    e.mutable_per_core()->set_verdict(ev::NameOf(static_cast<ev::BalanceVerdict>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.per_core().verdict();
  }
  for (int i = 0; i <= static_cast<int>(ev::CoreType::kAiv); ++i) {
    e.mutable_bound()->set_primary_core(ev::NameOf(static_cast<ev::CoreType>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.bound().primary_core();
  }
  for (int i = 0; i <= static_cast<int>(ev::RatioFamily::kScalar); ++i) {
    e.mutable_bound()->clear_triggered_families();
    e.mutable_bound()->add_triggered_families(ev::NameOf(static_cast<ev::RatioFamily>(i)));
    EXPECT_EQ(Fields(e), Names{}) << e.bound().triggered_families(0);
  }
  for (int i = 1; i <= static_cast<int>(ev::PerCoreStatus::kNotCollected); ++i) {
    e.mutable_per_core()->set_status(
        "unavailable:" + ev::NameOf(static_cast<ev::PerCoreStatus>(i)) + ":detail");
    EXPECT_EQ(Fields(e), Names{}) << e.per_core().status();
  }
}

TEST(EvidenceValidatorTest, NonFiniteNumbersAreRefusedWhereverTheyAre) {
  v1::Evidence e = Honest();
  e.mutable_duration()->set_samples_us(1, kInf);
  e.mutable_duration()->set_aggregate_us(kNaN);
  e.mutable_per_core()->add_cores()->set_time_us(-kInf);
  (*e.mutable_metrics(0)->mutable_fields())["aiv_time_us"] = kNaN;
  e.mutable_golden()->set_ratio(kInf);
  EXPECT_EQ(Fields(e), (Names{"evidence.duration.samples_us[1]", "evidence.duration.aggregate_us",
                              "evidence.metrics[0].fields[aiv_time_us]",
                              "evidence.per_core.cores[0].time_us", "evidence.golden.ratio"}));
  EXPECT_EQ(ValidateEvidence(e)[0].description, "is inf");
}

TEST(EvidenceValidatorTest, DurationsAndTimesAreNotNegative) {
  v1::Evidence e = Honest();
  e.mutable_duration()->set_samples_us(0, -5);
  e.set_task_duration_us(-1);
  EXPECT_EQ(Fields(e), (Names{"evidence.task_duration_us", "evidence.duration.samples_us[0]"}));
}

TEST(EvidenceValidatorTest, CoreSamplesAreOnePerRepeatFiniteAndNotNegative) {
  v1::Evidence e = Honest();
  e.mutable_duration()->add_core_samples_us(10.5);
  e.mutable_duration()->add_core_samples_us(10.6);
  EXPECT_EQ(Fields(e), Names{});
  e.mutable_duration()->set_core_samples_us(1, kNaN);
  EXPECT_EQ(Fields(e), Names{"evidence.duration.core_samples_us[1]"});
  e.mutable_duration()->set_core_samples_us(1, -1);
  EXPECT_EQ(Fields(e), Names{"evidence.duration.core_samples_us[1]"});
  e.mutable_duration()->set_core_samples_us(1, 10.6);
  e.mutable_duration()->add_core_samples_us(10.7);  // three for two repeats
  ASSERT_EQ(Fields(e), Names{"evidence.duration.core_samples_us"});
  EXPECT_EQ(ValidateEvidence(e)[0].description,
            "has 3 samples for 2 repeats (one per repeat, or none)");
}

TEST(EvidenceValidatorTest, UsedLaunchesAreBoundedAndInRange) {
  v1::Evidence e = Honest();
  v1::LaunchSelection* l = e.mutable_launch();
  l->set_selector("all");
  l->set_total(2);
  v1::UsedLaunch* u = l->add_used();
  u->set_index(1);
  u->set_stream_id(-1);
  u->set_task_id(7);
  u->set_start_ns(1780676244313289000);
  u->set_duration_us(12.5);
  u->set_where("op_summary_1.csv:2");
  EXPECT_EQ(Fields(e), Names{});
  u->set_index(3);
  u->set_stream_id(-2);
  u->set_start_ns(-1);
  u->set_duration_us(kNaN);
  u->set_where("a\nb");
  EXPECT_EQ(Fields(e),
            (Names{"evidence.launch.used[0].index", "evidence.launch.used[0].stream_id",
                   "evidence.launch.used[0].start_ns", "evidence.launch.used[0].duration_us",
                   "evidence.launch.used[0].where"}));
  e = Honest();
  for (int i = 0; i < 1001; ++i) e.mutable_launch()->add_used();
  EXPECT_EQ(Fields(e), Names{"evidence.launch.used"});
}

TEST(EvidenceValidatorTest, RatiosLieInZeroOne) {
  v1::Evidence e = Honest();
  (*e.mutable_bound()->mutable_ratios())["aiv_vec_ratio"] = 7.5;
  (*e.mutable_metrics(0)->mutable_fields())["aiv_vec_ratio"] = -0.1;
  EXPECT_EQ(Fields(e), (Names{"evidence.metrics[0].fields[aiv_vec_ratio]",
                              "evidence.bound.ratios[aiv_vec_ratio]"}));
}

TEST(EvidenceValidatorTest, AMetricRatioTheLibraryFlaggedOutOfRangeMayStay) {
  v1::Evidence e = Honest();
  (*e.mutable_metrics(0)->mutable_fields())["aiv_vec_ratio"] = 1.2;
  EXPECT_EQ(Fields(e), Names{"evidence.metrics[0].fields[aiv_vec_ratio]"});
  auto* err = e.add_errors();
  err->set_code("RATIO_OUT_OF_RANGE");
  err->set_message(
      "pipe ratio aiv_vec_ratio=1.2 is outside the verified CANN fraction range [0, 1]");
  EXPECT_EQ(Fields(e), Names{});
  (*e.mutable_metrics(0)->mutable_fields())["aiv_vec_ratio"] = kInf;  // still a number
  EXPECT_EQ(Fields(e), Names{"evidence.metrics[0].fields[aiv_vec_ratio]"});
}

TEST(EvidenceValidatorTest, UnknownLabelsAndEnumsAreRefused) {
  v1::Evidence e = Honest();
  e.mutable_bound()->set_label("<script>alert(1)</script>");
  e.mutable_bound()->set_routing_label("forged");
  e.mutable_dvfs()->set_status("fine");
  e.mutable_duration()->set_method(static_cast<v1::AggregationMethod>(77));
  e.mutable_fingerprint()->set_mode("turbo");
  EXPECT_EQ(Fields(e), (Names{"evidence.duration.method", "evidence.bound.label",
                              "evidence.bound.routing_label", "evidence.dvfs.status",
                              "evidence.fingerprint.mode"}));
}

TEST(EvidenceValidatorTest, TextsAndCountsAreBounded) {
  v1::Evidence e = Honest();
  e.set_warnings(0, std::string(kMaxEvidenceTextBytes + 1, 'w'));
  EXPECT_EQ(Fields(e), Names{"evidence.warnings[0]"});
  e = Honest();
  for (int i = 0; i < kMaxEvidenceListItems; ++i) e.add_warnings("w");
  EXPECT_EQ(Fields(e), Names{"evidence.warnings"});
  e = Honest();
  for (int i = 0; i <= kMaxSamples; ++i) e.mutable_duration()->add_samples_us(1);
  EXPECT_EQ(Fields(e), Names{"evidence.duration.samples_us"});
  e = Honest();
  e.mutable_errors()->Add()->set_code("lower case");
  EXPECT_EQ(Fields(e), Names{"evidence.errors[0].code"});
}

TEST(EvidenceValidatorTest, AFiftyMebibyteWarningIsRefusedAsAWholeAndAsAText) {
  v1::Evidence e = Honest();
  e.set_warnings(0, std::string(50 << 20, 'w'));
  EXPECT_EQ(Fields(e), (Names{"evidence", "evidence.warnings[0]"}));
}

TEST(EvidenceValidatorTest, ViolationsAreCappedAtOneHundred) {
  v1::Evidence e = Honest();
  for (int i = 0; i < 900; ++i) e.mutable_duration()->add_samples_us(kNaN);
  EXPECT_EQ(ValidateEvidence(e).size(), 100u);
}

TEST(EvidenceValidatorTest, FindingsTheLibraryRendersPass) {
  ev::Evidence built;
  built.merged = {{"aiv_mte2_ratio", 0.62}, {"aiv_vec_resc_cflt_ratio", 1.2}};
  v1::Evidence e;
  ev::ToProto(built, &e);
  ASSERT_EQ(e.findings_size(), 2);
  EXPECT_EQ(Fields(e), Names{});
}

TEST(EvidenceValidatorTest, AFindingMustRepeatItsRuleExactly) {
  ev::Evidence built;
  built.merged = {{"aiv_mte2_ratio", 0.62}};
  v1::Evidence e;
  ev::ToProto(built, &e);
  v1::Finding* f = e.mutable_findings(0);
  f->set_severity("good");
  f->set_threshold(5);
  f->set_comparison("<");
  f->set_unit("MHz");
  f->set_value(kNaN);
  EXPECT_EQ(Fields(e), (Names{"evidence.findings[0].severity", "evidence.findings[0].comparison",
                              "evidence.findings[0].threshold", "evidence.findings[0].unit",
                              "evidence.findings[0].value"}));
  f->set_rule_id("MADE_UP_RULE");
  e.mutable_findings_not_applied(0)->set_rule_id("ALSO_MADE_UP");
  EXPECT_EQ(Fields(e), (Names{"evidence.findings[0].rule_id", "evidence.findings[0].value",
                              "evidence.findings_not_applied[0].rule_id"}));
}

TEST(EvidenceValidatorTest, FindingCountsAndTextsAreBounded) {
  v1::Evidence e = Honest();
  for (int i = 0; i < kMaxEvidenceListItems + 1; ++i) {
    e.add_findings_not_applied()->set_rule_id("PIPE_MTE2_RATIO_HIGH");
  }
  auto* f = e.add_findings();
  const ev::FindingRule& rule = ev::FindingRules().front();
  f->set_rule_id(std::string(rule.id));
  f->set_severity(std::string(ev::Name(rule.severity)));
  f->set_comparison(std::string(ev::Name(rule.comparison)));
  f->set_threshold(rule.threshold);
  f->set_unit(std::string(rule.unit));
  f->set_caveat(std::string(kMaxEvidenceTextBytes + 1, 'c'));
  f->set_field("bad\nfield");
  EXPECT_EQ(Fields(e), (Names{"evidence.findings[0].field", "evidence.findings[0].caveat",
                              "evidence.findings_not_applied"}));
}

TEST(EvidenceValidatorTest, TheRejectionReasonNamesTheFirstFieldAndCountsTheRest) {
  v1::Evidence e = Honest();
  e.mutable_duration()->set_samples_us(0, kInf);
  e.mutable_duration()->set_samples_us(1, -5);
  EXPECT_EQ(EvidenceRejection(ValidateEvidence(e)),
            "evidence rejected: duration.samples_us[0] is inf (and 1 more)");
}

// The evidence of a timeline job as the agent builds it (agent/timeline_run.cc).
v1::Evidence Timeline() {
  v1::Evidence e;
  e.set_op_name("main_kernel");
  e.mutable_fingerprint()->set_mode("timeline");
  v1::TimelineSummary* t = e.mutable_timeline();
  t->set_attribution_status("unique_exact_target_window");
  t->set_pipeline_evidence_status("requires_tile_dag_correlation");
  t->set_target_start_ns(1780000000000000123);  // beyond 2^53: exact in an int64
  t->set_target_duration_ns(20000);
  t->set_monitored_lanes(4);
  t->set_events_in_window(120);
  t->set_raw_event_pairs(30);
  t->set_overlap_ns(36000);  // 9 us per lane of a 20 us window
  (*t->mutable_pipe_event_counts())["compute"] = 40;
  (*t->mutable_pipe_event_counts())["movement"] = 80;
  t->add_limitations("monitored lanes do not generalise to all cores");
  t->set_biu_rows(120);
  t->set_ascend_task_rows(-1);
  return e;
}

TEST(EvidenceValidatorTest, AnHonestTimelinePasses) { EXPECT_EQ(Fields(Timeline()), Names{}); }

TEST(EvidenceValidatorTest, ATimelineNeverClaimsProvenPipelining) {
  v1::Evidence e = Timeline();
  e.mutable_timeline()->set_pipeline_evidence_status("proven");
  EXPECT_EQ(Fields(e), Names{"evidence.timeline.pipeline_evidence_status"});
  e = Timeline();
  e.mutable_timeline()->set_attribution_status("duplicate_target_window");
  EXPECT_EQ(Fields(e), Names{"evidence.timeline.pipeline_evidence_status"});  // needs a window
  e.mutable_timeline()->set_pipeline_evidence_status("unverified");
  EXPECT_EQ(Fields(e), Names{});
}

TEST(EvidenceValidatorTest, ATimelineCarriesNoDurations) {
  v1::Evidence e = Timeline();
  e.mutable_duration()->add_samples_us(12.5);
  EXPECT_EQ(Fields(e), Names{"evidence.duration"});
  e = Timeline();
  e.add_metrics()->set_group("PipeUtilization");
  EXPECT_EQ(Fields(e), Names{"evidence.duration"});
}

TEST(EvidenceValidatorTest, ATimelinesFiguresAreBounded) {
  v1::Evidence e = Timeline();
  e.mutable_timeline()->set_overlap_ns(20000 * 4 + 4);  // more than the window on every lane
  e.mutable_timeline()->set_raw_event_pairs(-1);
  e.mutable_timeline()->set_biu_rows(-2);
  (*e.mutable_timeline()->mutable_pipe_event_counts())["teleport"] = 1;
  EXPECT_EQ(Fields(e),
            (Names{"evidence.timeline.raw_event_pairs", "evidence.timeline.overlap_ns",
                   "evidence.timeline.biu_rows", "evidence.timeline.pipe_event_counts[teleport]"}));
  e = Timeline();
  e.mutable_timeline()->clear_attribution_status();
  EXPECT_EQ(Fields(e), (Names{"evidence.timeline.attribution_status",
                              "evidence.timeline.pipeline_evidence_status"}));  // needs a window
}

TEST(EvidenceValidatorTest, TimelineModeAndTimelineEvidenceGoTogether) {
  v1::Evidence e = Timeline();
  e.mutable_fingerprint()->set_mode("standard");
  EXPECT_EQ(Fields(e), Names{"evidence.fingerprint.mode"});
  e = Honest();
  e.mutable_fingerprint()->set_mode("timeline");
  EXPECT_EQ(Fields(e), Names{"evidence.timeline"});
}

}  // namespace
}  // namespace npuperf::server
