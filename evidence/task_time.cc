#include "evidence/task_time.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "absl/strings/str_join.h"
#include "evidence/csv_reader.h"
#include "evidence/kernel_names.h"
#include "evidence/layout.h"
#include "evidence/statistic.h"
#include "evidence/str_util.h"
#include "evidence/unified_db.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

// A pre-CANN-6 row's Count is expanded into launches; more is not a profile.
constexpr int64_t kMaxCount = 1000000;

bool IgnoredType(std::string_view type) {
  return type.empty() || type == "N/A" || type == "PROFILING_ENABLE" ||
         type == "PROFILING_DISABLE" || type == "TASK_TIMEOUT_SET";
}

// The columns of either task_time header.
struct TaskTimeColumns {
  int name = -1, type = -1, time = -1, start = -1, stream = -1, task = -1;
  int count = -1;  // pre-CANN-6 only: launches behind the row's Avg(us)
};

absl::StatusOr<TaskTimeColumns> Locate(const CsvSliceReader& csv, const fs::path& file) {
  TaskTimeColumns c;
  if (csv.Find("kernel_name") >= 0) {
    c = {csv.Find("kernel_name"),    csv.Find("kernel_type"), csv.Find("task_time(us)"),
         csv.Find("task_start(us)"), csv.Find("stream_id"),   csv.Find("task_id")};
  } else if (csv.Find("Op Name") >= 0 && csv.Find("Count") >= 0) {  // pre-CANN-6
    c = {csv.Find("Op Name"),   csv.Find("Type"),    csv.Find("Avg(us)"), -1,
         csv.Find("Stream ID"), csv.Find("Task ID"), csv.Find("Count")};
  }
  if (c.name < 0 || c.type < 0 || c.time < 0) {
    return absl::InvalidArgumentError(
        Cat(file.string(),
            ": task_time header lacks kernel_name, kernel_type or task_time(us) (or, before "
            "CANN 6, Op Name, Type, Count and Avg(us))"));
  }
  return c;
}

std::optional<int64_t> IdOf(const CsvSliceReader& csv, int col) {
  absl::StatusOr<std::optional<double>> v = csv.Number(col);
  if (!v.ok() || !v->has_value()) return std::nullopt;
  return static_cast<int64_t>(**v);
}

// Streams task_time rows: fn(name, type, launch, count) per usable row.
template <typename Fn>
absl::Status ScanTaskTime(const std::vector<fs::path>& parts, Fn fn) {
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(parts);
  if (!opened.ok()) return opened.status();
  CsvSliceReader& csv = **opened;
  absl::StatusOr<TaskTimeColumns> c = Locate(csv, parts.front());
  if (!c.ok()) return c.status();
  while (true) {
    absl::StatusOr<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    std::string_view type = csv.Cell(c->type);
    std::string_view name = csv.Cell(c->name);
    if (IgnoredType(type) || name.empty() || name == "N/A") continue;
    absl::StatusOr<std::optional<double>> t = csv.Number(c->time);
    if (!t.ok()) return t.status();
    if (!t->has_value() || **t <= 0) continue;
    int64_t count = 1;
    if (c->count >= 0) {
      absl::StatusOr<std::optional<double>> n = csv.Number(c->count);
      if (!n.ok()) return n.status();
      count = n->has_value() ? std::llround(**n) : 1;
      if (count < 1 || count > kMaxCount) return csv.ErrorAt(c->count, "launch count out of range");
    }
    LaunchInfo l;
    l.duration_us = **t;
    if (c->start >= 0) {
      absl::StatusOr<std::optional<double>> s = csv.Number(c->start);
      if (!s.ok()) return s.status();
      l.start_us = *s;
      l.start_ns = ParseMicrosAsNs(csv.Cell(c->start));
    }
    l.stream_id = IdOf(csv, c->stream);
    l.task_id = IdOf(csv, c->task);
    l.where = count > 1 ? Cat(csv.Where(), " (mean of ", count, " launches)") : csv.Where();
    fn(std::string(name), NormalizeTaskType(type), std::move(l), count);  // CANN 9: KERNEL_*
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OpCandidate>> Candidates(const std::vector<fs::path>& parts,
                                                    bool* aggregated) {
  CandidateTable table;
  absl::Status s = ScanTaskTime(
      parts, [&](const std::string& name, const std::string& type, LaunchInfo l, int64_t count) {
        if (count > 1) *aggregated = true;
        for (int64_t i = 0; i < count; ++i) table.Add(name, type, "", l);
      });
  if (!s.ok()) return s;
  return table.Finish();
}

std::string ListKernels(const std::vector<OpCandidate>& kernels) {
  if (kernels.empty()) return "none";
  std::vector<std::string> names;
  for (const OpCandidate& k : kernels) {
    names.push_back(Cat(k.op_name, " (", k.count, " launches)"));
    if (names.size() == 20) break;
  }
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<KernelTiming> FromCandidate(const OpCandidate& k, const LaunchSelector& sel,
                                           const std::vector<fs::path>& files, bool aggregated) {
  KernelTiming out;
  out.kernel_name = k.op_name;
  out.kernel_type = k.task_type;
  out.launches = k.launches;
  out.selector = LaunchSelectorText(sel);
  absl::StatusOr<std::vector<size_t>> used =
      SelectLaunches(out.launches, sel, k.op_name, files.front().string());
  if (!used.ok()) return used.status();
  out.used = *std::move(used);
  for (size_t u : out.used) out.launches_us.push_back(out.launches[u].duration_us);
  Aggregate agg = AggregateSamples(out.launches_us);
  out.aggregate_us = agg.value;
  out.method = agg.method;
  out.source = TimingSource::kTaskTime;
  out.files = files;
  if (aggregated) {
    out.warnings.push_back(
        "pre-CANN-6 task_time holds one mean (Avg(us)) per task: launches of one row share it");
  }
  return out;
}

// api_statistic fallback: the `node`/`launch` row.
absl::StatusOr<KernelTiming> ReadApiLaunch(const RunLayout& run) {
  if (run.api_statistic.empty()) {
    return absl::NotFoundError(
        Cat("no task_time or api_statistic csv in ", run.table_dir.string()));
  }
  absl::StatusOr<std::vector<ApiStatisticRow>> rows = ReadApiStatistic(run.api_statistic);
  if (!rows.ok()) return rows.status();
  for (const ApiStatisticRow& r : *rows) {
    if (r.level != "node" || r.api_name != "launch" || !(r.avg_us > 0)) continue;
    KernelTiming out;
    out.kernel_name = "launch";
    out.kernel_type = "node";
    out.launches_us = {r.avg_us};
    out.aggregate_us = r.avg_us;
    out.method = AggregationMethod::kSingle;
    out.source = TimingSource::kApiStatistic;
    out.files = run.api_statistic;
    out.warnings.push_back(Cat("host API time: api_statistic node/launch Avg(us) over ", r.count,
                               " calls, not a device kernel time"));
    return out;
  }
  return absl::NotFoundError(Cat("no usable task_time row and no api_statistic node/launch row in ",
                                 run.table_dir.string()));
}

// A run whose only export is the unified db (msprof --type=db): the
// launches from TASK ⋈ COMPUTE_TASK_INFO, durations endNs - startNs.
absl::StatusOr<KernelTiming> QuickFromDb(const RunLayout& run, std::string_view op_name,
                                         const LaunchSelector& launch) {
  std::string name(op_name);
  std::vector<std::string> warnings;
  if (name.empty()) {
    absl::StatusOr<std::vector<OpCandidate>> all = ListDbCandidates(run.unified_db);
    if (!all.ok()) return all.status();
    absl::StatusOr<OpCandidate> pick = PickAutoCandidate(*all, run.unified_db.string());
    if (!pick.ok()) return pick.status();
    name = pick->op_name;
    warnings.push_back(Cat("no op name given: picked ", name,
                           ", the only kernel that is not a known incidental kernel"));
  }
  absl::StatusOr<SelectedTarget> t = SelectDbTarget(run.unified_db, name, launch);
  if (!t.ok()) return t.status();
  KernelTiming out;
  out.kernel_name = name;
  out.kernel_type = t->row.task_type;
  out.launches = t->launches;
  out.used = t->used;
  out.selector = LaunchSelectorText(launch);
  out.launches_us = t->durations_us;
  Aggregate agg = AggregateSamples(out.launches_us);
  out.aggregate_us = agg.value;
  out.method = agg.method;
  out.source = TimingSource::kMsprofDb;
  out.files = {run.unified_db};
  out.warnings = std::move(warnings);
  return out;
}

}  // namespace

Aggregate AggregateSamples(std::vector<double> samples) {
  if (samples.empty()) return {0, AggregationMethod::kNone};
  if (samples.size() == 1) return {samples[0], AggregationMethod::kSingle};
  if (samples.size() == 2) return {(samples[0] + samples[1]) / 2, AggregationMethod::kMedian};
  std::sort(samples.begin(), samples.end());
  double sum = std::accumulate(samples.begin() + 1, samples.end() - 1, 0.0);
  return {sum / static_cast<double>(samples.size() - 2), AggregationMethod::kTrimmedMean};
}

absl::StatusOr<std::vector<OpCandidate>> ListTaskTimeCandidates(
    const std::vector<fs::path>& parts) {
  bool aggregated = false;
  return Candidates(parts, &aggregated);
}

absl::StatusOr<KernelTiming> ReadQuickTiming(const fs::path& output_dir, std::string_view op_name,
                                             const LaunchSelector& launch) {
  absl::StatusOr<RunLayout> run = DetectRun(output_dir);
  if (!run.ok()) return run.status();
  if (run->task_time.empty() && !run->unified_db.empty()) return QuickFromDb(*run, op_name, launch);
  bool aggregated = false;
  std::vector<OpCandidate> kernels;
  if (!run->task_time.empty()) {
    absl::StatusOr<std::vector<OpCandidate>> k = Candidates(run->task_time, &aggregated);
    if (!k.ok()) return k.status();
    kernels = *std::move(k);
  }
  std::string where = run->task_time.empty()
                          ? Cat("(no task_time csv in ", run->table_dir.string(), ")")
                          : run->task_time.front().string();
  if (!op_name.empty()) {
    // Several task types of one name are one kernel here (types joined).
    OpCandidate merged;
    for (const OpCandidate& k : kernels) {
      if (k.op_name != op_name) continue;
      merged.op_name = k.op_name;
      merged.task_type += Cat(merged.task_type.empty() ? "" : "|", k.task_type);
      merged.count += k.count;
      merged.launches.insert(merged.launches.end(), k.launches.begin(), k.launches.end());
    }
    if (merged.count == 0) {
      return absl::NotFoundError(Cat("no task_time entry for op_name=", op_name, " in ", where,
                                     "; kernels present: ", ListKernels(kernels),
                                     OtherNameHint(*run, op_name)));
    }
    OrderLaunches(&merged.launches);
    return FromCandidate(merged, launch, run->task_time, aggregated);
  }
  if (kernels.empty()) return ReadApiLaunch(*run);
  absl::StatusOr<OpCandidate> pick = PickAutoCandidate(kernels, where);
  if (!pick.ok()) return pick.status();
  absl::StatusOr<KernelTiming> t = FromCandidate(*pick, launch, run->task_time, aggregated);
  if (t.ok()) {
    t->warnings.push_back(Cat("no op name given: picked ", t->kernel_name,
                              ", the only kernel that is not a known incidental kernel"));
  }
  return t;
}

}  // namespace npuperf::evidence
