#include "evidence/evidence_json.h"

#include <nlohmann/json.hpp>

#include "evidence/findings.h"
#include "evidence/roofline_json.h"

namespace npuperf::evidence {
namespace {

using Json = nlohmann::ordered_json;

Json Names(const std::vector<RatioFamily>& families) {
  Json out = Json::array();
  for (RatioFamily f : families) out.push_back(NameOf(f));
  return out;
}

Json PerCoreJson(const PerCore& p) {
  Json cores = Json::array();
  for (const CoreCycles& c : p.cores) {
    cores.push_back({{"core_id", c.core_id}, {"cycles", c.cycles}, {"time_us", c.time_us}});
  }
  return Json{{"status", StatusText(p)},
              {"scope", "process"},
              {"device_id", p.device_id},
              {"core_type", NameOf(p.core_type)},
              {"db", p.db.string()},
              {"cores", std::move(cores)},
              {"freq_ghz", p.freq_ghz},
              {"ns_per_cycle", p.ns_per_cycle},
              {"min_us", p.min_us},
              {"avg_us", p.avg_us},
              {"max_us", p.max_us},
              {"spread_pct", p.spread_pct},
              {"verdict", NameOf(p.verdict)},
              {"half_gap_pct", p.half_gap_pct},
              {"half_gap_hint", p.half_gap_hint},
              {"first_half_avg_us", p.first_half_avg_us},
              {"second_half_avg_us", p.second_half_avg_us},
              {"slowest_cores", p.slowest_cores},
              {"fastest_cores", p.fastest_cores},
              {"clock_implausible", p.clock_implausible},
              {"clock_note", p.clock_note}};
}

Json LaunchJson(const LaunchRecord& l) {
  Json used = Json::array();
  for (const LaunchInfo& u : l.used) {
    used.push_back({{"index", u.index},
                    {"stream_id", u.stream_id ? Json(*u.stream_id) : Json(nullptr)},
                    {"task_id", u.task_id ? Json(*u.task_id) : Json(nullptr)},
                    {"start_us", u.start_us ? Json(*u.start_us) : Json(nullptr)},
                    {"start_ns", u.start_ns ? Json(*u.start_ns) : Json(nullptr)},
                    {"duration_us", u.duration_us},
                    {"where", u.where}});
  }
  Json spread = Json::object();
  for (const auto& [group, fields] : l.spread) {
    Json g = Json::object();
    for (const auto& [name, range] : fields) g[name] = {range.first, range.second};
    spread[group] = std::move(g);
  }
  return Json{{"selector", l.selector},
              {"total", l.total},
              {"used", std::move(used)},
              {"metric_method", NameOf(l.metric_method)},
              {"spread", std::move(spread)}};
}

Json RatiosJson(const BoundDiagnosis& b) {
  Json ratios = Json::object();
  for (const auto& [family, fields] : b.ratios) {
    Json f = Json::object();
    for (const auto& [name, v] : fields) f[name] = v;
    ratios[NameOf(family)] = std::move(f);
  }
  return ratios;
}

Json BoundJson(const BoundDiagnosis& b, const Roofline& r) {
  Json scalar = b.scalar_route_triggered ? Json(*b.scalar_route_triggered) : Json(nullptr);
  Json primary = b.primary_core == CoreType::kNone ? Json(nullptr)
                                                   : Json(std::string(LowerName(b.primary_core)));
  return Json{{"label", NameOf(b.label)},
              {"primary_core", std::move(primary)},
              {"routing_label", NameOf(b.routing_label)},
              {"triggered_families", Names(b.triggered_families)},
              {"ratios", RatiosJson(b)},
              {"scalar_route_triggered", scalar},
              {"aicore_time_us", b.aicore_time_us},
              {"aiv_time_us", b.aiv_time_us},
              {"evidence_kind", "op_summary_ratio_route"},
              {"roofline_terminal_status", r.terminal_status},
              {"pipeline_overlap_status", r.pipeline_status},
              {"completion_eligible", r.completion_eligible},
              {"caveats", b.caveats}};
}

Json MetricsJson(const Evidence& ev, Json* sources) {
  Json metrics = Json::object();
  *sources = Json::object();
  for (const MetricGroup& g : ev.metrics) {
    Json fields = Json::object();
    for (const auto& [name, v] : g.fields) fields[name] = v;
    metrics[g.group] = std::move(fields);
    (*sources)[g.group] = g.source.string() + ":" + std::to_string(g.line);
  }
  return metrics;
}

Json DvfsJson(const DvfsCheck& d) {
  return Json{{"status", NameOf(d.status)},
              {"observed_mhz", d.observed_mhz},
              {"rated_mhz", d.rated_mhz},
              {"deviation_pct", d.deviation_pct},
              {"tolerance_pct", d.tolerance_pct},
              {"source", NameOf(d.source)},
              {"note", d.note}};
}

Json FindingsJson(const Findings& f, Json* not_applied) {
  Json items = Json::array();
  for (const Finding& x : f.items) {
    items.push_back({{"rule_id", x.rule_id},
                     {"severity", NameOf(x.severity)},
                     {"field", x.field},
                     {"value", x.value},
                     {"comparison", NameOf(x.comparison)},
                     {"threshold", x.threshold},
                     {"unit", x.unit},
                     {"message", x.message},
                     {"caveat", x.caveat}});
  }
  *not_applied = Json::array();
  for (const FindingNotApplied& n : f.not_applied) {
    not_applied->push_back({{"rule_id", n.rule_id}, {"note", n.note}});
  }
  return items;
}

Json Identity(const Evidence& ev) {
  return Json{{"schema_version", kEvidenceSchemaVersion},
              {"op_name", ev.op_name},
              {"op_type", ev.op_type},
              {"task_type", ev.task_type},
              {"block_num", ev.block_num},
              {"mix_block_num", ev.mix_block_num},
              {"input_shapes", ev.input_shapes},
              {"input_data_types", ev.input_data_types},
              {"input_formats", ev.input_formats},
              {"task_duration_us", ev.task_duration_us},
              {"duration",
               {{"samples_us", ev.duration.samples_us},
                {"core_samples_us", ev.duration.core_samples_us},
                {"aggregate_us", ev.duration.aggregate_us},
                {"method", NameOf(ev.duration.method)},
                {"source", NameOf(ev.duration.source)}}},
              {"aicore_time_us", ev.aicore_time_us},
              {"aiv_time_us", ev.aiv_time_us},
              {"head_overhead_us", ev.head_overhead_us},
              {"head_overhead_pct", ev.head_overhead_pct},
              {"head_overhead_status", NameOf(ev.head_overhead_status)},
              {"head_overhead_note", ev.head_overhead_note},
              {"cube_utilization_pct", ev.cube_utilization_pct}};
}

}  // namespace

std::string ToJson(const Evidence& ev) {
  Json j = Identity(ev);
  Json sources;
  j["metrics"] = MetricsJson(ev, &sources);
  j["metric_sources"] = std::move(sources);
  j["missing_metrics"] = ev.missing_metrics;
  j["seven_metric_status"] = NameOf(ev.seven_metric_status);
  j["l2_hit_rate_pct"] = Json(ev.l2_hit_rate_pct);
  j["per_core"] = PerCoreJson(ev.per_core);
  j["per_core_secondary"] = PerCoreJson(ev.per_core_secondary);
  j["per_core_claim_allowed"] = false;
  j["bound"] = BoundJson(ev.bound, ev.roofline);
  j["roofline"] = RooflineToJson(ev.roofline);
  j["dvfs"] = DvfsJson(ev.dvfs);
  Json not_applied;
  j["findings"] = FindingsJson(EvaluateFindings(ev), &not_applied);
  j["findings_not_applied"] = std::move(not_applied);
  j["launch"] = LaunchJson(ev.launch);
  j["input"] = {{"kind", ev.input.kind}, {"notes", ev.input.notes}};
  j["sources"] = Json(ev.sources);
  j["unified_db"] = ev.unified_db.empty() ? Json(nullptr) : Json(ev.unified_db.string());
  j["db_clock"] = ev.db_clock ? Json{{"min_mhz", ev.db_clock->min_mhz},
                                     {"max_mhz", ev.db_clock->max_mhz},
                                     {"mean_mhz", ev.db_clock->mean_mhz},
                                     {"changes", ev.db_clock->changes}}
                              : Json(nullptr);
  j["golden"] = {{"status", StatusText(ev.golden)},
                 {"golden_us", ev.golden.golden_us},
                 {"kernel_us", ev.golden.kernel_us},
                 {"ratio", ev.golden.ratio},
                 {"label", ev.golden.label}};
  Json errors = Json::array();
  for (const EvidenceError& e : ev.errors) {
    errors.push_back({{"code", e.code}, {"message", e.message}});
  }
  j["errors"] = std::move(errors);
  j["warnings"] = ev.warnings;
  j["prof_group"] = ev.prof_group.string();
  return j.dump(2) + "\n";
}

std::string ToStatusJson(const Evidence& ev) {
  Json bound = BoundJson(ev.bound, ev.roofline);
  Json j{{"target_op_name", ev.op_name},
         {"seven_metric_status", NameOf(ev.seven_metric_status)},
         {"missing_metrics", ev.missing_metrics},
         {"per_core_status", StatusText(ev.per_core)},
         {"per_core_claim_allowed", false},
         {"bound_diagnosis",
          {{"schema_version", 1},
           {"evidence_kind", "op_summary_ratio_route"},
           {"primary_core", bound["primary_core"]},
           {"primary_core_source", "max(aicore_time(us), aiv_time(us))"},
           {"aicore_time_us", ev.bound.aicore_time_us},
           {"aiv_time_us", ev.bound.aiv_time_us},
           {"routing_label", NameOf(ev.bound.routing_label)},
           {"pipe_bound_label", NameOf(ev.bound.label)},
           {"triggered_categories", Names(ev.bound.triggered_families)},
           {"ratios", bound["ratios"]},
           {"scalar_route_triggered", bound["scalar_route_triggered"]},
           {"roofline_terminal_status", ev.roofline.terminal_status},
           {"pipeline_overlap_status", ev.roofline.pipeline_status},
           {"completion_eligible", ev.roofline.completion_eligible}}},
         {"error_count", ev.errors.size()}};
  return j.dump(2) + "\n";
}

}  // namespace npuperf::evidence
