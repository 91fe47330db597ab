#include "evidence/evidence.h"

#include <cmath>
#include <system_error>

#include "evidence/bound.h"
#include "evidence/derived.h"
#include "evidence/golden.h"
#include "evidence/op_summary.h"
#include "evidence/per_core.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"
#include "evidence/task_time.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

struct GroupRow {
  std::string metric;
  OpRow row;
};

// The target row of one metric run. nullopt (with a warning) when the run is
// absent; an error when it is present but unreadable, ambiguous or lacks the
// target.
absl::StatusOr<std::optional<OpRow>> ReadMetric(const fs::path& group, const std::string& metric,
                                                const std::string& op_name,
                                                std::vector<std::string>* warnings) {
  fs::path dir = group / ("PROF_" + metric);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    warnings->push_back(Cat("metric ", metric, ": ", dir.string(), " missing"));
    return std::optional<OpRow>();
  }
  absl::StatusOr<fs::path> prof = FindSingleProfDir(dir);
  absl::StatusOr<fs::path> out = prof.ok() ? ProfilerOutputDir(*prof) : prof.status();
  if (!out.ok()) {
    if (out.status().code() != absl::StatusCode::kNotFound) {
      return internal::Annotate(out.status(), Cat("metric ", metric));
    }
    warnings->push_back(Cat("metric ", metric, ": ", internal::Msg(out.status())));
    return std::optional<OpRow>();
  }
  absl::StatusOr<std::vector<fs::path>> parts = FindCsvParts(*out, "op_summary");
  if (!parts.ok()) return internal::Annotate(parts.status(), Cat("metric ", metric));
  if (parts->empty()) {
    warnings->push_back(Cat("metric ", metric, ": no op_summary_*.csv in ", out->string()));
    return std::optional<OpRow>();
  }
  absl::StatusOr<OpRow> row = SelectTargetRow(*parts, op_name);
  if (!row.ok()) return internal::Annotate(row.status(), Cat("metric ", metric));
  return std::optional<OpRow>(std::move(*row));
}

// Reference merge rule: per column the first non-missing value in metric
// order, a zero replaced by a later non-zero.
void Merge(const OpRow& row, std::map<std::string, double>* merged) {
  for (const auto& [name, value] : row.fields) {
    auto [it, inserted] = merged->emplace(name, value);
    if (!inserted && it->second == 0 && value != 0) it->second = value;
  }
}

void SetIdentity(const OpRow& row, Evidence* ev) {
  ev->op_name = row.op_name;
  ev->op_type = row.op_type;
  ev->task_type = row.task_type;
  ev->block_num = row.block_num.value_or(0);
  ev->mix_block_num = row.mix_block_num.value_or(0);
  ev->input_shapes = row.input_shapes;
  ev->input_data_types = row.input_data_types;
  ev->input_formats = row.input_formats;
  ev->aicore_time_us = row.Get("aicore_time(us)").value_or(0);
  ev->aiv_time_us = row.Get("aiv_time(us)").value_or(0);
}

absl::Status SetDuration(const OpRow& row, const std::string& metric, Evidence* ev) {
  double d = row.task_duration_us.value_or(0);
  if (!(d > 0) || !std::isfinite(d)) {
    return absl::InvalidArgumentError(Cat(row.file.string(), ":", row.line,
                                          ": invalid Task Duration for op_name=", row.op_name,
                                          " (metric ", metric, ")"));
  }
  ev->task_duration_us = d;
  ev->duration.samples_us = {d};
  Aggregate agg = AggregateSamples(ev->duration.samples_us);
  ev->duration.aggregate_us = agg.value;
  ev->duration.method = agg.method;
  ev->duration.source = TimingSource::kOpSummary;
  return absl::OkStatus();
}

void AddPerCore(const fs::path& group, const BuildOptions& options, Evidence* ev) {
  bool aiv = ev->aiv_time_us > ev->aicore_time_us;
  ev->per_core = LoadPerCore(group, aiv ? CoreType::kAiv : CoreType::kAic,
                             aiv ? ev->aiv_time_us : ev->aicore_time_us, options.device_id);
  ev->per_core_secondary =
      LoadPerCore(group, aiv ? CoreType::kAic : CoreType::kAiv,
                  aiv ? ev->aicore_time_us : ev->aiv_time_us, options.device_id);
  if (!ev->per_core.ok()) {
    ev->warnings.push_back(Cat("per-core: ", StatusText(ev->per_core)));
    return;
  }
  // The reference assumes the slowest core ran exactly the target's core time;
  // the sample db sums every kernel of the process, so say when that is off.
  std::optional<SocInfo> soc = LookupSoc(options.soc);
  double rated = options.rated_mhz > 0 ? options.rated_mhz : (soc ? soc->rated_mhz : 0);
  double mhz = ev->per_core.freq_ghz * 1000;
  if (rated > 0 && std::abs(mhz - rated) / rated > 0.25) {
    ev->warnings.push_back(Cat("per-core: back-calculated clock ", mhz,
                               " MHz is far from the rated ", rated,
                               " MHz; the sample db covers every kernel of the process, so "
                               "per-core us are not the target's"));
  }
}

void Finish(const fs::path& group, const BuildOptions& options, Evidence* ev) {
  ev->seven_metric_status =
      ev->missing_metrics.empty() ? SevenMetricStatus::kComplete : SevenMetricStatus::kPartial;
  if (!ev->missing_metrics.empty()) {
    std::string names;
    for (const std::string& m : ev->missing_metrics) names += Cat(names.empty() ? "" : ", ", m);
    ev->errors.push_back({"MISSING_GROUP", Cat("missing metric groups: ", names)});
  }
  for (auto [key, target] : {std::pair{"aicore_time(us)", &ev->aicore_time_us},
                             std::pair{"aiv_time(us)", &ev->aiv_time_us}}) {
    auto it = ev->merged.find(key);
    if (*target == 0 && it != ev->merged.end()) *target = it->second;
  }
  auto cube = ev->merged.find("cube_utilization(%)");
  if (cube != ev->merged.end()) ev->cube_utilization_pct = cube->second;
  ComputeHeadOverhead(ev);
  ev->l2_hit_rate_pct = L2HitRates(ev->merged);
  ev->bound = DiagnoseBound(ev->merged, &ev->errors);
  AddPerCore(group, options, ev);
  ev->dvfs = CheckDvfs(*ev, options);
  ev->golden = ComputeGoldenRatio(options.golden_per_iteration_us, ev->duration.aggregate_us);
}

}  // namespace

absl::StatusOr<Evidence> BuildEvidence(const fs::path& prof_group, const BuildOptions& options) {
  if (options.op_name.empty()) {
    return absl::InvalidArgumentError("an exact op name is required (see list-op-names)");
  }
  std::error_code ec;
  if (!fs::is_directory(prof_group, ec)) {
    return absl::NotFoundError(Cat("'", prof_group.string(), "' is not a directory."));
  }
  Evidence ev;
  ev.prof_group = prof_group;
  std::vector<GroupRow> rows;
  for (const std::string& metric : SevenMetrics()) {
    absl::StatusOr<std::optional<OpRow>> row =
        ReadMetric(prof_group, metric, options.op_name, &ev.warnings);
    if (!row.ok()) return row.status();
    if (!row->has_value()) {
      ev.missing_metrics.push_back(metric);
      continue;
    }
    rows.push_back({metric, std::move(**row)});
  }
  if (rows.empty()) {
    return absl::NotFoundError(Cat("no op_summary_*.csv rows discovered under ",
                                   prof_group.string(),
                                   " (expected PROF_<Metric>/PROF_*/mindstudio_profiler_output)"));
  }
  // rows[0] is PipeUtilization when present: the canonical identity/timing.
  if (rows[0].metric != "PipeUtilization") {
    ev.warnings.push_back(Cat("PipeUtilization missing: timing taken from ", rows[0].metric));
  }
  SetIdentity(rows[0].row, &ev);
  absl::Status s = SetDuration(rows[0].row, rows[0].metric, &ev);
  if (!s.ok()) return s;
  for (GroupRow& g : rows) {
    Merge(g.row, &ev.merged);
    ev.metrics.push_back({g.metric, std::move(g.row.fields), g.row.file, g.row.line});
  }
  Finish(prof_group, options, &ev);
  return ev;
}

Evidence CombineRepeats(std::vector<Evidence> repeats) {
  Evidence out = std::move(repeats.front());
  std::vector<double> samples = out.duration.samples_us;
  for (size_t i = 1; i < repeats.size(); ++i) {
    const Evidence& r = repeats[i];
    samples.insert(samples.end(), r.duration.samples_us.begin(), r.duration.samples_us.end());
    for (const EvidenceError& e : r.errors) {
      out.errors.push_back({e.code, Cat("repeat ", i + 1, ": ", e.message)});
    }
    for (const std::string& w : r.warnings) out.warnings.push_back(Cat("repeat ", i + 1, ": ", w));
  }
  Aggregate agg = AggregateSamples(samples);
  out.duration.samples_us = std::move(samples);
  out.duration.aggregate_us = agg.value;
  out.duration.method = agg.method;
  if (out.golden.status != GoldenStatus::kNotProvided) {
    out.golden = ComputeGoldenRatio(out.golden.golden_us, out.duration.aggregate_us);
  }
  return out;
}

Evidence QuickEvidence(const std::vector<KernelTiming>& repeats,
                       std::optional<double> golden_per_iteration_us) {
  Evidence ev;
  const KernelTiming& first = repeats.front();
  ev.op_name = first.kernel_name;
  ev.task_type = first.kernel_type;
  std::vector<double> samples;
  for (const KernelTiming& t : repeats) {
    samples.push_back(t.aggregate_us);
    if (t.launches_us.size() > 1) {
      ev.warnings.push_back(Cat(t.launches_us.size(), " launches of ", t.kernel_name,
                                " in one process, reduced by ", Name(t.method)));
    }
  }
  Aggregate agg = AggregateSamples(samples);
  ev.duration = {samples, agg.value, agg.method, first.source};
  ev.task_duration_us = agg.value;
  ev.seven_metric_status = SevenMetricStatus::kNotCollected;
  ev.per_core.status = PerCoreStatus::kNotCollected;
  ev.per_core_secondary.status = PerCoreStatus::kNotCollected;
  ev.golden = ComputeGoldenRatio(golden_per_iteration_us, agg.value);
  return ev;
}

}  // namespace npuperf::evidence
