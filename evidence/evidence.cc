#include "evidence/evidence.h"

#include <cmath>
#include <system_error>

#include "evidence/bound.h"
#include "evidence/db_evidence.h"
#include "evidence/derived.h"
#include "evidence/golden.h"
#include "evidence/layout.h"
#include "evidence/op_summary.h"
#include "evidence/opprof.h"
#include "evidence/parallel.h"
#include "evidence/per_core.h"
#include "evidence/prof_layout.h"
#include "evidence/statistic.h"
#include "evidence/str_util.h"
#include "evidence/task_time.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

// The --aic-metrics group beyond the seven: memory-access volumes
// (*_datas(KB)), A2/A3 only; read when a group has PROF_MemoryAccess.
constexpr char kMemoryAccess[] = "MemoryAccess";

struct GroupRow {
  std::string metric;
  RunLayout run;
  SelectedTarget target;
  // What SelectRunTarget recorded: the figures' sources, the unified db.
  Evidence scratch;
};

// What reading one metric run gave: its row (nullopt when the run, its
// export or its op_summary is absent), or the error that fails the build, and
// the warnings and notes to add in metric order. Runs are read on several
// threads (parallel.h), so a read touches only its own MetricRead.
struct MetricRead {
  absl::Status status;
  std::optional<GroupRow> row;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

// The target of one metric run: absent (with a warning) when the run, its
// export or its op_summary is absent; an error when it is present but
// unreadable, ambiguous or lacks the target.
MetricRead ReadMetric(const fs::path& group, const std::string& metric,
                      const BuildOptions& options) {
  MetricRead out;
  std::string why;
  absl::StatusOr<std::optional<RunLayout>> run =
      DetectGroupRun(group, metric, options.device_id, &why);
  if (!run.ok()) {
    out.status = internal::Annotate(run.status(), Cat("metric ", metric));
    return out;
  }
  if (!run->has_value()) {
    out.warnings.push_back(Cat("metric ", metric, ": ", why));
    return out;
  }
  RunLayout& r = **run;
  for (const std::string& n : r.notes) out.notes.push_back(Cat(metric, ": ", n));
  if (r.op_summary.empty() && r.unified_db.empty()) {
    out.warnings.push_back(Cat("metric ", metric, ": no op_summary_*.csv and no msprof_<ts>.db in ",
                               r.table_dir.string()));
    return out;
  }
  Evidence scratch;
  absl::StatusOr<SelectedTarget> target = SelectRunTarget(r, options, &scratch);
  if (!target.ok()) {
    out.status = internal::Annotate(target.status(), Cat("metric ", metric));
    return out;
  }
  for (std::string& w : scratch.warnings) out.warnings.push_back(Cat(metric, ": ", w));
  scratch.warnings.clear();
  out.row = GroupRow{metric, std::move(r), *std::move(target), std::move(scratch)};
  return out;
}

// The seven metric runs, read on FileThreads(options.file_threads) threads
// and gathered in metric order (the first failing metric's error wins, as
// when they were read one by one).
absl::StatusOr<std::vector<GroupRow>> ReadMetrics(const fs::path& group,
                                                  const BuildOptions& options, Evidence* ev) {
  const std::vector<std::string>& metrics = SevenMetrics();
  std::vector<MetricRead> reads(metrics.size());
  ForEachIndex(metrics.size(), FileThreads(options.file_threads),
               [&](size_t i) { reads[i] = ReadMetric(group, metrics[i], options); });
  std::vector<GroupRow> rows;
  for (size_t i = 0; i < metrics.size(); ++i) {
    MetricRead& r = reads[i];
    if (!r.status.ok()) return r.status;
    for (std::string& n : r.notes) ev->input.notes.push_back(std::move(n));
    for (std::string& w : r.warnings) ev->warnings.push_back(std::move(w));
    if (!r.row.has_value()) {
      ev->missing_metrics.push_back(metrics[i]);
      continue;
    }
    rows.push_back(std::move(*r.row));
  }
  // The optional eighth group (A2/A3, CANN 8+): read when collected, never missing.
  std::error_code ec;
  if (!rows.empty() && fs::is_directory(group / Cat("PROF_", kMemoryAccess), ec)) {
    MetricRead r = ReadMetric(group, kMemoryAccess, options);
    if (!r.status.ok()) return r.status;
    for (std::string& w : r.warnings) ev->warnings.push_back(std::move(w));
    if (r.row.has_value()) rows.push_back(std::move(*r.row));
  }
  return rows;
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

// Duration samples: one per used launch of the canonical run.
absl::Status SetDuration(const GroupRow& g, Evidence* ev) {
  const OpRow& row = g.target.row;
  double d = row.task_duration_us.value_or(0);
  if (!(d > 0) || !std::isfinite(d)) {
    return absl::InvalidArgumentError(Cat(row.file.string(), ":", row.line,
                                          ": invalid Task Duration for op_name=", row.op_name,
                                          " (metric ", g.metric, ")"));
  }
  ev->task_duration_us = d;
  ev->duration.samples_us = g.target.durations_us;
  ev->duration.core_samples_us = g.target.core_times_us;
  Aggregate agg = AggregateSamples(ev->duration.samples_us);
  ev->duration.aggregate_us = agg.value;
  ev->duration.method = agg.method;
  ev->duration.source =
      g.run.op_summary.empty() ? TimingSource::kMsprofDb : TimingSource::kOpSummary;
  return absl::OkStatus();
}

void SetLaunch(const std::vector<GroupRow>& rows, const BuildOptions& options, Evidence* ev) {
  const SelectedTarget& canon = rows.front().target;
  LaunchRecord& l = ev->launch;
  l.selector = LaunchSelectorText(options.launch);
  l.total = static_cast<int>(canon.launches.size());
  for (size_t u : canon.used) l.used.push_back(canon.launches[u]);
  bool all = options.launch.kind == LaunchSelector::Kind::kAll;
  l.metric_method = all ? AggregationMethod::kMedian : AggregationMethod::kSingle;
  for (const GroupRow& g : rows) {
    if (all) l.spread.push_back({g.metric, g.target.spread});
    for (const std::string& w : g.target.warnings) ev->warnings.push_back(Cat(g.metric, ": ", w));
    if (g.target.launches.size() != canon.launches.size()) {
      ev->warnings.push_back(Cat("metric ", g.metric, " has ", g.target.launches.size(),
                                 " launches of the target, ", rows.front().metric, " ",
                                 canon.launches.size(), ": the runs did not execute alike"));
    }
  }
}

// The op_statistic row of the target's type in the canonical run.
void AttachOpStatistic(const RunLayout& run, Evidence* ev) {
  if (run.op_statistic.empty()) return;
  absl::StatusOr<std::vector<OpStatisticRow>> rows = ReadOpStatistic(run.op_statistic);
  if (!rows.ok()) {
    ev->warnings.push_back(Cat("op_statistic: ", internal::Msg(rows.status())));
    return;
  }
  for (const OpStatisticRow& r : *rows) {
    if (r.op_type != ev->op_type || (r.core_type != ev->task_type && !ev->task_type.empty()))
      continue;
    ev->op_statistic = r;
    if (r.count < ev->launch.total) {
      ev->warnings.push_back(Cat("op_statistic counts ", r.count, " tasks of type ", r.op_type,
                                 " but op_summary has ", ev->launch.total, " launches of ",
                                 ev->op_name));
    }
    return;
  }
}

void SetDeviceFacts(const RunLayout& run, Evidence* ev) {
  ev->device_facts.cube_cores = run.device.cube_cores;
  ev->device_facts.vector_cores = run.device.vector_cores;
  if (run.device.aic_mhz) {
    ev->device_facts.rated_mhz = run.device.aic_mhz;
    ev->device_facts.rated_source = Cat(run.device.source.filename().string(), " aic_frequency");
  }
}

void AddPerCore(const fs::path& sample_run, const BuildOptions& options, Evidence* ev) {
  bool aiv = ev->aiv_time_us > ev->aicore_time_us;
  ev->per_core = LoadPerCore(sample_run, aiv ? CoreType::kAiv : CoreType::kAic,
                             aiv ? ev->aiv_time_us : ev->aicore_time_us, options.device_id);
  ev->per_core_secondary =
      LoadPerCore(sample_run, aiv ? CoreType::kAic : CoreType::kAiv,
                  aiv ? ev->aicore_time_us : ev->aiv_time_us, options.device_id);
  if (!ev->per_core.ok()) {
    ev->warnings.push_back(Cat("per-core: ", StatusText(ev->per_core)));
    return;
  }
  // The reference assumes the slowest core ran exactly the target's core time;
  // the sample db sums every kernel of the process, so say when that cannot be.
  SocResolution soc = ResolveSoc(options.soc, FactsOf(*ev));
  double rated = options.rated_mhz > 0 ? options.rated_mhz : soc.rated_mhz;
  for (PerCore* p : {&ev->per_core, &ev->per_core_secondary}) {
    if (!p->ok()) continue;
    ClockPlausibility c = CheckImpliedClock(p->freq_ghz * 1000, rated, options.dvfs_tolerance_pct);
    p->clock_implausible = !c.plausible;
    p->clock_note = c.note;
    if (!c.plausible) {
      ev->warnings.push_back(Cat("per-core ", Name(p->core_type), ": ", c.note,
                                 "; the sample db covers every kernel of the process, so per-core "
                                 "us are not the target's"));
    }
  }
}

void Finish(const fs::path& sample_run, const BuildOptions& options, bool single_run,
            Evidence* ev) {
  ev->seven_metric_status =
      ev->missing_metrics.empty() ? SevenMetricStatus::kComplete : SevenMetricStatus::kPartial;
  if (!ev->missing_metrics.empty()) {
    std::string names;
    for (const std::string& m : ev->missing_metrics) names += Cat(names.empty() ? "" : ", ", m);
    if (single_run) {
      ev->warnings.push_back(Cat("one run read: metric groups not collected: ", names));
    } else {
      ev->errors.push_back({"MISSING_GROUP", Cat("missing metric groups: ", names)});
    }
  }
  for (auto [key, target] : {std::pair{"aicore_time(us)", &ev->aicore_time_us},
                             std::pair{"aiv_time(us)", &ev->aiv_time_us}}) {
    auto it = ev->merged.find(key);
    if (*target == 0 && it != ev->merged.end()) *target = it->second;
  }
  auto cube = ev->merged.find("cube_utilization(%)");
  if (cube != ev->merged.end()) ev->cube_utilization_pct = cube->second;
  ReadClockWindow(options, ev);
  CoreTimesFromCycles(options, ev);
  ComputeHeadOverhead(ev);
  ev->l2_hit_rate_pct = L2HitRates(ev->merged);
  ev->bound = DiagnoseBound(ev->merged, &ev->errors);
  AddPerCore(sample_run, options, ev);
  if (ev->db_clock) {
    ev->dvfs = CheckDvfs(*ev, options, ev->db_clock->min_mhz);
    ev->dvfs.source = ClockSource::kMsprofDbAicoreFreq;
    ev->dvfs.note = Cat("AICORE_FREQ over the target's launches: ", ev->db_clock->min_mhz, "..",
                        ev->db_clock->max_mhz, " MHz (mean ", ev->db_clock->mean_mhz,
                        "); the lowest is checked");
  } else {
    ev->dvfs = CheckDvfs(*ev, options);
  }
  for (const std::string& w : ev->dvfs.warnings) ev->warnings.push_back(Cat("soc: ", w));
  ev->golden = ComputeGoldenRatio(options.golden_per_iteration_us, ev->duration.aggregate_us);
}

// The rows gathered, into the evidence (identity and timing from rows[0]).
absl::Status Assemble(std::vector<GroupRow> rows, const BuildOptions& options, Evidence* ev) {
  if (rows[0].metric != "PipeUtilization") {
    ev->warnings.push_back(Cat("PipeUtilization missing: timing taken from ", rows[0].metric));
  }
  SetIdentity(rows[0].target.row, ev);
  ev->sources = rows[0].scratch.sources;
  ev->unified_db = rows[0].scratch.unified_db;
  absl::Status s = SetDuration(rows[0], ev);
  if (!s.ok()) return s;
  SetLaunch(rows, options, ev);
  SetDeviceFacts(rows[0].run, ev);
  AttachOpStatistic(rows[0].run, ev);
  for (GroupRow& g : rows) {
    Merge(g.target.row, &ev->merged);
    ev->metrics.push_back(
        {g.metric, std::move(g.target.row.fields), g.target.row.file, g.target.row.line});
  }
  return absl::OkStatus();
}

absl::StatusOr<Evidence> FromGroup(const fs::path& group, const BuildOptions& options,
                                   Evidence ev) {
  absl::StatusOr<std::vector<GroupRow>> read = ReadMetrics(group, options, &ev);
  if (!read.ok()) return read.status();
  std::vector<GroupRow> rows = *std::move(read);
  if (rows.empty()) {
    std::string seen;
    for (const std::string& w : ev.warnings) seen += Cat("\n  ", w);
    return absl::NotFoundError(Cat("no op_summary_*.csv rows discovered under ", group.string(),
                                   " (expected PROF_<Metric>/PROF_*/mindstudio_profiler_output or "
                                   "PROF_<Metric>/PROF_*/device_<id>/summary):",
                                   seen));
  }
  absl::Status s = Assemble(std::move(rows), options, &ev);
  if (!s.ok()) return s;
  Finish(group / "PROF_Sample", options, /*single_run=*/false, &ev);
  return ev;
}

// The metric group a single run collected: as the run says, else from its
// columns.
std::string GroupOfRun(const RunLayout& run, const SelectedTarget& t, Evidence* ev) {
  if (!run.metric_group.empty()) return run.metric_group;
  static const std::pair<const char*, const char*> kSignature[] = {
      {"aiv_vec_ratio", "PipeUtilization"},
      {"aic_mac_ratio", "PipeUtilization"},
      {"vec_ratio", "PipeUtilization"},
      {"aiv_vec_fp16_ratio", "ArithmeticUtilization"},
      {"aic_mac_fp16_ratio", "ArithmeticUtilization"},
      {"aic_l0a_read_bw(GB/s)", "MemoryL0"},
      {"aiv_ub_read_bw_vector(GB/s)", "MemoryUB"},
      {"aic_main_mem_read_bw(GB/s)", "Memory"},
      {"aiv_main_mem_read_bw(GB/s)", "Memory"},
      {"aic_write_cache_hit", "L2Cache"},
      {"aic_read_local_l2_hit", "L2Cache"},
      {"aiv_vec_bank_cflt_ratio", "ResourceConflictRatio"},
      {"aiv_GM_to_UB_datas(KB)", kMemoryAccess},
      {"aic_GM_to_L1_datas(KB)", kMemoryAccess}};
  for (const auto& [column, group] : kSignature) {
    if (t.row.Get(column)) {
      ev->input.notes.push_back(Cat("metric group ", group, " inferred from column ", column));
      return group;
    }
  }
  ev->input.notes.push_back("no PMU columns: metric group unknown (task-time only run)");
  return "PipeUtilization";
}

absl::StatusOr<Evidence> FromRun(const fs::path& dir, const BuildOptions& options, Evidence ev) {
  absl::StatusOr<RunLayout> run = DetectRun(dir, options.device_id);
  if (!run.ok()) return run.status();
  ev.input.notes.insert(ev.input.notes.end(), run->notes.begin(), run->notes.end());
  Evidence scratch;
  absl::StatusOr<SelectedTarget> t = SelectRunTarget(*run, options, &scratch);
  if (!t.ok()) return t.status();
  for (std::string& w : scratch.warnings) ev.warnings.push_back(std::move(w));
  scratch.warnings.clear();
  std::string metric = GroupOfRun(*run, *t, &ev);
  for (const std::string& m : SevenMetrics()) {
    if (m != metric) ev.missing_metrics.push_back(m);
  }
  fs::path run_dir = run->run_dir;
  std::vector<GroupRow> rows;
  rows.push_back(GroupRow{metric, *std::move(run), *std::move(t), std::move(scratch)});
  absl::Status s = Assemble(std::move(rows), options, &ev);
  if (!s.ok()) return s;
  Finish(run_dir, options, /*single_run=*/true, &ev);
  return ev;
}

}  // namespace

absl::StatusOr<Evidence> BuildEvidence(const fs::path& input, const BuildOptions& options) {
  if (options.op_name.empty()) {
    return absl::InvalidArgumentError("an exact op name is required (see list-op-names)");
  }
  absl::StatusOr<DetectedInput> in = DetectInput(input);
  if (!in.ok()) return in.status();
  Evidence ev;
  ev.prof_group = input;
  ev.input.kind = std::string(Name(in->kind));
  ev.input.notes = in->notes;
  absl::StatusOr<Evidence> out = absl::InternalError("unknown input kind");
  switch (in->kind) {
    case InputKind::kProfGroup: out = FromGroup(in->path, options, std::move(ev)); break;
    case InputKind::kProfRun:
    case InputKind::kAscendPt: out = FromRun(in->path, options, std::move(ev)); break;
    case InputKind::kOpprof: out = OpprofEvidence(in->path, options, std::move(ev)); break;
  }
  if (out.ok()) ApplyRoofline(&*out, options.tile_dag);
  return out;
}

}  // namespace npuperf::evidence
