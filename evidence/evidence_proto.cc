#include "evidence/evidence_proto.h"

#include "evidence/evidence_json.h"
#include "evidence/findings.h"
#include "evidence/summary_text.h"
#include "npuperf/v1/evidence.pb.h"

namespace npuperf::evidence {
namespace {

namespace pb = ::npuperf::v1;

// The proto has no value for "no samples": it stays unspecified.
pb::AggregationMethod Method(AggregationMethod m) {
  switch (m) {
    case AggregationMethod::kNone: return pb::AGGREGATION_METHOD_UNSPECIFIED;
    case AggregationMethod::kSingle: return pb::AGGREGATION_METHOD_SINGLE;
    case AggregationMethod::kMedian: return pb::AGGREGATION_METHOD_MEDIAN;
    case AggregationMethod::kTrimmedMean: return pb::AGGREGATION_METHOD_TRIMMED_MEAN;
  }
  return pb::AGGREGATION_METHOD_UNSPECIFIED;
}

pb::SevenMetricStatus SevenStatus(SevenMetricStatus s) {
  switch (s) {
    case SevenMetricStatus::kComplete: return pb::SEVEN_METRIC_STATUS_COMPLETE;
    case SevenMetricStatus::kPartial: return pb::SEVEN_METRIC_STATUS_PARTIAL;
    case SevenMetricStatus::kNotCollected: return pb::SEVEN_METRIC_STATUS_NOT_COLLECTED;
  }
  return pb::SEVEN_METRIC_STATUS_UNSPECIFIED;
}

void FillPerCore(const PerCore& p, pb::PerCore* out) {
  out->set_status(StatusText(p));
  out->set_device_id(p.device_id);
  out->set_core_type(NameOf(p.core_type));
  for (const CoreCycles& c : p.cores) {
    pb::CoreCycles* cc = out->add_cores();
    cc->set_core_id(c.core_id);
    cc->set_cycles(c.cycles);
    cc->set_time_us(c.time_us);
  }
  out->set_freq_ghz(p.freq_ghz);
  out->set_min_us(p.min_us);
  out->set_avg_us(p.avg_us);
  out->set_max_us(p.max_us);
  out->set_spread_pct(p.spread_pct);
  out->set_verdict(NameOf(p.verdict));
  out->set_half_gap_pct(p.half_gap_pct);
  for (int id : p.slowest_cores) out->add_slowest_cores(id);
  for (int id : p.fastest_cores) out->add_fastest_cores(id);
}

void FillBound(const BoundDiagnosis& b, pb::BoundDiagnosis* out) {
  out->set_label(NameOf(b.label));
  out->set_primary_core(NameOf(b.primary_core));
  out->set_routing_label(NameOf(b.routing_label));
  for (RatioFamily f : b.triggered_families) out->add_triggered_families(NameOf(f));
  for (const auto& [family, fields] : b.ratios) {
    for (const auto& [name, v] : fields) (*out->mutable_ratios())[name] = v;
  }
  for (const std::string& c : b.caveats) out->add_caveats(c);
}

void FillDvfs(const DvfsCheck& d, pb::DvfsCheck* out) {
  out->set_status(NameOf(d.status));
  out->set_observed_mhz(d.observed_mhz);
  out->set_rated_mhz(d.rated_mhz);
  out->set_deviation_pct(d.deviation_pct);
  out->set_tolerance_pct(d.tolerance_pct);
  out->set_source(NameOf(d.source));
}

void FillFindings(const Findings& f, pb::Evidence* out) {
  for (const Finding& x : f.items) {
    pb::Finding* p = out->add_findings();
    p->set_rule_id(x.rule_id);
    p->set_severity(NameOf(x.severity));
    p->set_field(x.field);
    p->set_value(x.value);
    p->set_comparison(NameOf(x.comparison));
    p->set_threshold(x.threshold);
    p->set_unit(x.unit);
    p->set_message(x.message);
    p->set_caveat(x.caveat);
  }
  for (const FindingNotApplied& n : f.not_applied) {
    pb::FindingNotApplied* p = out->add_findings_not_applied();
    p->set_rule_id(n.rule_id);
    p->set_note(n.note);
  }
}

void FillIdentity(const Evidence& ev, pb::Evidence* out) {
  out->set_op_name(ev.op_name);
  out->set_op_type(ev.op_type);
  out->set_task_type(ev.task_type);
  out->set_block_num(ev.block_num);
  out->set_mix_block_num(ev.mix_block_num);
  out->set_input_shapes(ev.input_shapes);
  out->set_input_data_types(ev.input_data_types);
  out->set_input_formats(ev.input_formats);
  pb::DurationStats* d = out->mutable_duration();
  for (double s : ev.duration.samples_us) d->add_samples_us(s);
  for (double s : ev.duration.core_samples_us) d->add_core_samples_us(s);
  d->set_aggregate_us(ev.duration.aggregate_us);
  d->set_method(Method(ev.duration.method));
  d->set_source(NameOf(ev.duration.source));
  out->set_task_duration_us(ev.task_duration_us);
  out->set_aicore_time_us(ev.aicore_time_us);
  out->set_aiv_time_us(ev.aiv_time_us);
  out->set_head_overhead_us(ev.head_overhead_us);
  out->set_cube_utilization_pct(ev.cube_utilization_pct);
}

void FillLaunch(const LaunchRecord& l, pb::LaunchSelection* out) {
  out->set_selector(l.selector);
  out->set_total(l.total);
  for (const LaunchInfo& u : l.used) {
    pb::UsedLaunch* p = out->add_used();
    p->set_index(u.index);
    p->set_stream_id(u.stream_id.value_or(-1));
    p->set_task_id(u.task_id.value_or(-1));
    p->set_start_ns(u.start_ns.value_or(0));
    p->set_duration_us(u.duration_us);
    p->set_where(u.where);
  }
}

}  // namespace

void ToProto(const Evidence& ev, pb::Evidence* out) {
  out->Clear();
  FillIdentity(ev, out);
  FillLaunch(ev.launch, out->mutable_launch());
  for (const MetricGroup& g : ev.metrics) {
    pb::MetricGroup* mg = out->add_metrics();
    mg->set_group(g.group);
    for (const auto& [name, v] : g.fields) (*mg->mutable_fields())[name] = v;
  }
  for (const std::string& m : ev.missing_metrics) out->add_missing_metrics(m);
  out->set_seven_metric_status(SevenStatus(ev.seven_metric_status));
  FillPerCore(ev.per_core, out->mutable_per_core());
  FillPerCore(ev.per_core_secondary, out->mutable_per_core_secondary());
  FillBound(ev.bound, out->mutable_bound());
  FillDvfs(ev.dvfs, out->mutable_dvfs());
  pb::GoldenRatio* g = out->mutable_golden();
  g->set_status(StatusText(ev.golden));
  g->set_golden_us(ev.golden.golden_us);
  g->set_kernel_us(ev.golden.kernel_us);
  g->set_ratio(ev.golden.ratio);
  g->set_label(ev.golden.label);
  for (const EvidenceError& e : ev.errors) {
    pb::EvidenceError* pe = out->add_errors();
    pe->set_code(e.code);
    pe->set_message(e.message);
  }
  for (const std::string& w : ev.warnings) out->add_warnings(w);
  FillFindings(EvaluateFindings(ev), out);
  out->set_evidence_json(ToJson(ev));
  out->set_summary_text(RenderSummary(ev, SummaryOptions()));
  out->set_summary_markdown(RenderMarkdown(ev));
}

}  // namespace npuperf::evidence
