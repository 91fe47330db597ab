// Evidence of one kernel from an msprof op (OPPROF_*) run: opprof.h.
#include <algorithm>
#include <cmath>

#include "evidence/bound.h"
#include "evidence/derived.h"
#include "evidence/golden.h"
#include "evidence/op_summary.h"
#include "evidence/opprof.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"
#include "evidence/task_time.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

// The figure of one column of one launch: the block average, except the
// core times, where the longest block is the kernel's.
double Figure(const ColumnStats& c) {
  return c.column == "aic_time(us)" || c.column == "aiv_time(us)" ? c.max : c.avg;
}

// The launch directories that profiled `op_name`; NotFound naming the
// kernels present otherwise.
absl::StatusOr<std::vector<OpprofSummary>> TargetLaunches(const fs::path& dir,
                                                          const std::string& op_name) {
  absl::StatusOr<std::vector<OpprofSummary>> all = ReadOpprofLaunches(dir);
  if (!all.ok()) return all.status();
  std::vector<OpprofSummary> out;
  std::string names;
  for (OpprofSummary& s : *all) {
    std::string name = s.basic ? s.basic->op_name : "";
    if (name == op_name) {
      out.push_back(std::move(s));
    } else {
      names += Cat(names.empty() ? "" : ", ", name.empty() ? "(no Op Name)" : name);
    }
  }
  if (out.empty()) {
    return absl::NotFoundError(Cat("msprof op run ", dir.string(),
                                   " did not profile op_name=", op_name, "; it holds: ", names));
  }
  return out;
}

// Median across the used launches per (metric, column), with min / max.
void AddMetrics(const std::vector<const OpprofSummary*>& used, bool all, Evidence* ev) {
  const OpprofSummary& first = *used.front();
  for (const OpprofMetric& m : first.metrics) {
    MetricGroup g{m.metric, {}, m.file, 0};
    std::vector<std::pair<std::string, std::pair<double, double>>> spread;
    for (const ColumnStats& c : m.columns) {
      std::vector<double> v;
      for (const OpprofSummary* s : used) {
        for (const OpprofMetric& sm : s->metrics) {
          const ColumnStats* sc = sm.metric == m.metric ? sm.Find(c.column) : nullptr;
          if (sc != nullptr) v.push_back(Figure(*sc));
        }
      }
      g.fields.emplace_back(c.column, Median(v));
      if (all)
        spread.push_back(
            {c.column,
             {*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())}});
    }
    for (const auto& [name, value] : g.fields) ev->merged.emplace(name, value);
    if (all) ev->launch.spread.push_back({m.metric, std::move(spread)});
    ev->metrics.push_back(std::move(g));
  }
}

void SetIdentity(const OpprofSummary& s, Evidence* ev) {
  const OpprofBasicInfo& b = *s.basic;
  ev->op_name = b.op_name;
  ev->op_type = b.op_type;
  ev->block_num = b.block_dim;
  ev->mix_block_num = b.mix_block_dim;
  auto it = ev->merged.find("aic_time(us)");
  ev->aicore_time_us = it == ev->merged.end() ? 0 : it->second;
  it = ev->merged.find("aiv_time(us)");
  ev->aiv_time_us = it == ev->merged.end() ? 0 : it->second;
  bool aic = ev->aicore_time_us > 0, aiv = ev->aiv_time_us > 0;
  ev->task_type = aic && aiv ? (b.block_dim > 0 && ev->mix_block_num > 0 ? "MIX_AIC" : "AI_CORE")
                  : aiv      ? "AI_VECTOR_CORE"
                             : "AI_CORE";
  if (!s.hardware.soc.empty()) ev->input.notes.push_back(Cat("device: ", s.hardware.soc));
  ev->device_facts.cube_cores = s.hardware.cube_cores;
  ev->device_facts.vector_cores = s.hardware.vector_cores;
  if (b.rated_freq_mhz && *b.rated_freq_mhz > 0) {
    ev->device_facts.rated_mhz = b.rated_freq_mhz;
    ev->device_facts.rated_source = Cat(b.file.filename().string(), " Rated Freq");
  } else if (s.hardware.cube_mhz && *s.hardware.cube_mhz > 0) {
    ev->device_facts.rated_mhz = s.hardware.cube_mhz;
    ev->device_facts.rated_source = Cat(s.hardware.file.filename().string(), " cube frequency");
  }
}

std::vector<LaunchInfo> Launches(const std::vector<OpprofSummary>& runs) {
  std::vector<LaunchInfo> out;
  for (const OpprofSummary& s : runs) {
    LaunchInfo l;
    l.duration_us = s.basic->task_duration_us;
    l.where = s.basic->file.string();
    out.push_back(l);
  }
  OrderLaunches(&out);  // no start times: path order, numbered from 1
  return out;
}

}  // namespace

absl::StatusOr<Evidence> OpprofEvidence(const fs::path& dir, const BuildOptions& options,
                                        Evidence ev) {
  absl::StatusOr<std::vector<OpprofSummary>> runs = TargetLaunches(dir, options.op_name);
  if (!runs.ok()) return runs.status();
  std::vector<LaunchInfo> launches = Launches(*runs);
  absl::StatusOr<std::vector<size_t>> picked =
      SelectLaunches(launches, options.launch, options.op_name, dir.string());
  if (!picked.ok()) return picked.status();
  std::vector<const OpprofSummary*> used;
  for (size_t i : *picked) {
    used.push_back(&(*runs)[i]);
    ev.launch.used.push_back(launches[i]);
    ev.duration.samples_us.push_back(launches[i].duration_us);
  }
  bool all = options.launch.kind == LaunchSelector::Kind::kAll;
  ev.launch.selector = LaunchSelectorText(options.launch);
  ev.launch.total = static_cast<int>(launches.size());
  ev.launch.metric_method = all ? AggregationMethod::kMedian : AggregationMethod::kSingle;
  AddMetrics(used, all, &ev);
  SetIdentity(*used.front(), &ev);
  Aggregate agg = AggregateSamples(ev.duration.samples_us);
  ev.duration.aggregate_us = agg.value;
  ev.duration.method = agg.method;
  ev.duration.source = TimingSource::kOpprof;
  ev.task_duration_us = agg.value;
  for (const std::string& m : SevenMetrics()) {
    bool have = std::any_of(ev.metrics.begin(), ev.metrics.end(),
                            [&m](const MetricGroup& g) { return g.group == m; });
    if (!have) ev.missing_metrics.push_back(m);
  }
  ev.seven_metric_status =
      ev.missing_metrics.empty() ? SevenMetricStatus::kComplete : SevenMetricStatus::kPartial;
  if (!ev.missing_metrics.empty()) {
    std::string missing, read;
    for (const std::string& m : ev.missing_metrics) missing += Cat(missing.empty() ? "" : ", ", m);
    for (const MetricGroup& g : ev.metrics) read += Cat(read.empty() ? "" : ", ", g.group);
    ev.warnings.push_back(Cat("msprof op run: metric groups not collected: ", missing,
                              "; read: ", read.empty() ? "none (OpBasicInfo only)" : read));
  }
  ComputeHeadOverhead(&ev);
  ev.l2_hit_rate_pct = L2HitRates(ev.merged);
  ev.bound = DiagnoseBound(ev.merged, &ev.errors);
  ev.per_core.status = PerCoreStatus::kNotCollected;
  ev.per_core_secondary.status = PerCoreStatus::kNotCollected;
  const OpprofBasicInfo& b = *used.front()->basic;
  ev.dvfs = CheckDvfs(ev, options, b.current_freq_mhz, b.rated_freq_mhz);
  for (const std::string& w : ev.dvfs.warnings) ev.warnings.push_back(Cat("soc: ", w));
  ev.golden = ComputeGoldenRatio(options.golden_per_iteration_us, ev.duration.aggregate_us);
  return ev;
}

}  // namespace npuperf::evidence
