// Messages the report pages are rendered from in tests: a round built by the
// evidence library from a stored capture (tests/evidence/testdata/group_a2_e2,
// rows modelled on real msprof rows), and a collection, comparisons and a
// history around it.
#pragma once

#include <filesystem>

#include "evidence/evidence.h"
#include "evidence/evidence_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "report/report.h"

namespace npuperf::report::testing {

template <typename M>
M Proto(const std::string& text) {
  M m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

// Round `id` of the stored capture, with its duration set to `us`.
inline v1::Round CaptureRound(int64_t id, const std::string& case_id, double us) {
  evidence::BuildOptions o;
  o.op_name = "main_kernel";
  o.soc = "Ascend910B2";
  auto ev =
      evidence::BuildEvidence(std::filesystem::path(NPUPERF_EVIDENCE_TESTDATA) / "group_a2_e2", o);
  EXPECT_TRUE(ev.ok()) << ev.status();
  v1::Round r;
  if (!ev.ok()) return r;
  evidence::ToProto(*ev, r.mutable_evidence());
  r.set_id(id);
  r.set_collection_id("c-" + std::to_string(id));
  r.set_job_id(id * 10);
  r.set_team("perf");
  r.set_operator_name("inplace_add_rmsnorm");
  r.set_case_id(case_id);
  (*r.mutable_labels())["branch"] = "main";
  r.mutable_created_at()->set_seconds(1795000000 + id * 3600);
  auto* d = r.mutable_evidence()->mutable_duration();
  d->clear_samples_us();
  for (double f : {0.99, 1.0, 1.02}) d->add_samples_us(us * f);
  d->set_aggregate_us(us);
  d->set_method(v1::AGGREGATION_METHOD_TRIMMED_MEAN);
  r.mutable_evidence()->mutable_fingerprint()->set_soc("Ascend910B2");
  return r;
}

inline v1::Collection DemoCollection() {
  return Proto<v1::Collection>(R"pb(
    id: "c-9"
    team: "perf"
    state: COLLECTION_STATE_FAILED
    counts { total: 3 succeeded: 2 failed: 1 }
    spec {
      description: "nightly"
      labels { key: "branch" value: "main" }
    }
    jobs {
      id: 90
      operator_name: "inplace_add_rmsnorm"
      case_id: "c1"
      state: JOB_STATE_SUCCEEDED
      round_id: 9
      kernel_time_us: 84.5
      bound_label: "SCALAR_BOUND"
    }
    jobs {
      id: 91
      operator_name: "inplace_add_rmsnorm"
      case_id: "c2"
      state: JOB_STATE_SUCCEEDED
      round_id: 10
      kernel_time_us: 120.25
      bound_label: "MTE2_BOUND"
    }
    jobs {
      id: 92
      operator_name: "inplace_add_rmsnorm"
      case_id: "c3"
      state: JOB_STATE_FAILED
      reason: "runner exited 3"
    })pb");
}

// Rounds 1..10 of cases c1 (odd ids) and c2 (even ids).
inline std::vector<v1::Round> DemoHistory() {
  std::vector<v1::Round> out;
  const double c1[] = {81, 84, 76, 81.5, 77}, c2[] = {120, 126, 113, 121, 119};
  for (int64_t id = 1; id <= 10; ++id) {
    const size_t k = static_cast<size_t>(id - 1) / 2;
    out.push_back(CaptureRound(id, id % 2 == 1 ? "c1" : "c2", id % 2 == 1 ? c1[k] : c2[k]));
  }
  return out;
}

// Three cases of a collection comparison: regressed (bound and balance
// changed, a finding appeared), improved, insufficient (DVFS suspect).
constexpr char kRegressedCase[] = R"(
  baseline_round_id: 1 candidate_round_id: 9 operator_name: "inplace_add_rmsnorm" case_id: "c1"
  verdict: VERDICT_REGRESSED rule: "p=0.004<0.01 and +6.1%>2%"
  duration { baseline_us: 80 candidate_us: 84.9 ratio: 1.061 ratio_ci_low: 1.03
             ratio_ci_high: 1.09 p_value: 0.004 verdict: VERDICT_REGRESSED }
  baseline_bound: "SCALAR_BOUND" candidate_bound: "MTE2_BOUND" bound_changed: true
  baseline_balance: "PASS" candidate_balance: "WARNING" balance_changed: true
  baseline_dvfs: "ok" candidate_dvfs: "ok" flags: "bound_route_changed"
  metric_deltas { group: "PipeUtilization" field: "aiv_mte2_ratio" baseline: 0.4 candidate: 0.62
                  delta: 0.22 notable: true }
  finding_changes { change: "appeared" finding { rule_id: "PIPE_MTE2_RATIO_HIGH"
    severity: "warning" field: "aiv_mte2_ratio" value: 62 comparison: ">" threshold: 50 unit: "%"
    message: "MTE2 (GM -> local) is busy" } })";
constexpr char kImprovedCase[] = R"(
  baseline_round_id: 2 candidate_round_id: 10 operator_name: "inplace_add_rmsnorm" case_id: "c2"
  verdict: VERDICT_IMPROVED rule: "p=0.002<0.01 and -8.0%<-2%"
  duration { baseline_us: 130 candidate_us: 119.6 ratio: 0.92 ratio_ci_low: 0.9
             ratio_ci_high: 0.94 p_value: 0.002 verdict: VERDICT_IMPROVED }
  baseline_bound: "MTE2_BOUND" candidate_bound: "MTE2_BOUND" baseline_dvfs: "ok"
  candidate_dvfs: "ok")";
constexpr char kInsufficientCase[] = R"(
  baseline_round_id: 3 candidate_round_id: 11 operator_name: "inplace_add_rmsnorm" case_id: "c3"
  verdict: VERDICT_INSUFFICIENT rule: "dvfs suspect on the candidate"
  duration { baseline_us: 50 candidate_us: 51 ratio: 1.02 verdict: VERDICT_INSUFFICIENT }
  baseline_dvfs: "ok" candidate_dvfs: "suspect" flags: "dvfs_suspect")";

inline ComparisonPage DemoComparison() {
  ComparisonPage p;
  p.title = "npuperf compare c-1 c-9";
  p.summary = "2 comparable of 3 matched: 1 regressed, 1 improved, 1 insufficient";
  for (const char* c : {kRegressedCase, kImprovedCase, kInsufficientCase}) {
    p.comparisons.push_back(Proto<v1::RoundComparison>(c));
  }
  p.counts = Proto<v1::ComparisonCounts>(
      "matched: 3 comparable: 2 improved: 1 regressed: 1 insufficient: 1");
  p.geomean_ratio = 0.988;
  p.unmatched = {"inplace_add_rmsnorm/c4"};
  return p;
}

inline HistoryPage DemoHistoryPage() {
  HistoryPage p;
  p.operator_name = "inplace_add_rmsnorm";
  p.rounds = DemoHistory();
  p.baseline = {p.rounds[0], p.rounds[1]};  // a pinned collection of rounds 1 and 2
  p.baseline_name = "baseline branch=main";
  for (const v1::Round& r : p.rounds) {
    if (r.id() <= 2) continue;
    const double base = r.case_id() == "c1" ? 81 : 120;
    const double us = r.evidence().duration().aggregate_us();
    v1::RoundComparison c;
    c.set_baseline_round_id(r.case_id() == "c1" ? 1 : 2);
    c.set_candidate_round_id(r.id());
    c.set_verdict(us > base * 1.02   ? v1::VERDICT_REGRESSED
                  : us < base * 0.98 ? v1::VERDICT_IMPROVED
                                     : v1::VERDICT_STABLE);
    c.set_rule("fixture");
    p.verdicts.push_back(c);
  }
  return p;
}

}  // namespace npuperf::report::testing
