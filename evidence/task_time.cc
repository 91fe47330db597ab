#include "evidence/task_time.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "absl/strings/str_join.h"
#include "evidence/csv_reader.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;

struct KernelLaunches {
  std::vector<double> launches_us;
  std::vector<std::string> types;
  double total_us = 0;
  size_t first_seen = 0;
};

bool IgnoredType(std::string_view type) {
  return type.empty() || type == "N/A" || type == "PROFILING_ENABLE" ||
         type == "PROFILING_DISABLE" || type == "TASK_TIMEOUT_SET";
}

absl::Status ScanTaskTime(const std::vector<fs::path>& parts,
                          std::map<std::string, KernelLaunches, std::less<>>* kernels) {
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(parts);
  if (!opened.ok()) return opened.status();
  CsvSliceReader& csv = **opened;
  int name_col = csv.Find("kernel_name");
  int type_col = csv.Find("kernel_type");
  int time_col = csv.Find("task_time(us)");
  if (name_col < 0 || type_col < 0 || time_col < 0) {
    return absl::InvalidArgumentError(
        internal::Cat(parts.front().string(),
                      ": task_time header lacks kernel_name, kernel_type or task_time(us)"));
  }
  size_t order = 0;
  while (true) {
    absl::StatusOr<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    std::string_view type = csv.Cell(type_col);
    std::string_view name = csv.Cell(name_col);
    if (IgnoredType(type) || name.empty() || name == "N/A") continue;
    absl::StatusOr<std::optional<double>> t = csv.Number(time_col);
    if (!t.ok()) return t.status();
    if (!t->has_value() || **t <= 0) continue;
    auto it = kernels->find(name);
    if (it == kernels->end()) {
      it = kernels->emplace(std::string(name), KernelLaunches{}).first;
      it->second.first_seen = order++;
    }
    KernelLaunches& k = it->second;
    k.launches_us.push_back(**t);
    k.total_us += **t;
    if (std::find(k.types.begin(), k.types.end(), type) == k.types.end()) {
      k.types.emplace_back(type);
    }
  }
  return absl::OkStatus();
}

std::string ListKernels(const std::map<std::string, KernelLaunches, std::less<>>& kernels) {
  if (kernels.empty()) return "none";
  std::vector<std::string> names;
  for (const auto& [name, k] : kernels) {
    names.push_back(internal::Cat(name, " (", k.launches_us.size(), " launches)"));
    if (names.size() == 20) break;
  }
  return absl::StrJoin(names, ", ");
}

KernelTiming FromLaunches(const std::string& name, const KernelLaunches& k,
                          std::vector<fs::path> files) {
  KernelTiming out;
  out.kernel_name = name;
  out.kernel_type = absl::StrJoin(k.types, "|");
  out.launches_us = k.launches_us;
  Aggregate agg = AggregateSamples(k.launches_us);
  out.aggregate_us = agg.value;
  out.method = agg.method;
  out.source = TimingSource::kTaskTime;
  out.files = std::move(files);
  return out;
}

// api_statistic fallback: the `node`/`launch` row.
absl::StatusOr<KernelTiming> ReadApiLaunch(const fs::path& out_dir) {
  absl::StatusOr<std::vector<fs::path>> parts = FindCsvParts(out_dir, "api_statistic");
  if (!parts.ok()) return parts.status();
  if (parts->empty()) {
    return absl::NotFoundError(
        internal::Cat("no task_time or api_statistic csv in ", out_dir.string()));
  }
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(*parts);
  if (!opened.ok()) return opened.status();
  CsvSliceReader& csv = **opened;
  int level = csv.Find("Level"), api = csv.Find("API Name"), avg = csv.Find("Avg(us)");
  if (level < 0 || api < 0 || avg < 0) {
    return absl::InvalidArgumentError(internal::Cat(
        parts->front().string(), ": api_statistic header lacks Level, API Name or Avg(us)"));
  }
  while (true) {
    absl::StatusOr<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (csv.Cell(level) != "node" || csv.Cell(api) != "launch") continue;
    absl::StatusOr<std::optional<double>> v = csv.Number(avg);
    if (!v.ok()) return v.status();
    if (!v->has_value() || **v <= 0) continue;
    KernelTiming out;
    out.kernel_name = "launch";
    out.kernel_type = "node";
    out.launches_us = {**v};
    out.aggregate_us = **v;
    out.method = AggregationMethod::kSingle;
    out.source = TimingSource::kApiStatistic;
    out.files = *parts;
    return out;
  }
  return absl::NotFoundError(
      internal::Cat("no usable task_time row and no api_statistic node/launch"
                    " row in ",
                    out_dir.string()));
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

absl::StatusOr<KernelTiming> ReadQuickTiming(const fs::path& output_dir, std::string_view op_name) {
  absl::StatusOr<fs::path> prof = FindSingleProfDir(output_dir);
  if (!prof.ok()) return prof.status();
  absl::StatusOr<fs::path> out_dir = ProfilerOutputDir(*prof);
  if (!out_dir.ok()) return out_dir.status();
  absl::StatusOr<std::vector<fs::path>> parts = FindCsvParts(*out_dir, "task_time");
  if (!parts.ok()) return parts.status();
  std::map<std::string, KernelLaunches, std::less<>> kernels;
  if (!parts->empty()) {
    absl::Status s = ScanTaskTime(*parts, &kernels);
    if (!s.ok()) return s;
  }
  if (!op_name.empty()) {
    auto it = kernels.find(op_name);
    if (it == kernels.end()) {
      std::string where = parts->empty()
                              ? internal::Cat("(no task_time csv in ", out_dir->string(), ")")
                              : parts->front().string();
      return absl::NotFoundError(internal::Cat("no task_time entry for op_name=", op_name, " in ",
                                               where, "; kernels present: ", ListKernels(kernels)));
    }
    return FromLaunches(it->first, it->second, *parts);
  }
  if (kernels.empty()) return ReadApiLaunch(*out_dir);
  auto best = kernels.begin();
  for (auto it = kernels.begin(); it != kernels.end(); ++it) {
    const KernelLaunches& a = it->second;
    const KernelLaunches& b = best->second;
    if (a.total_us > b.total_us ||
        (a.total_us == b.total_us && a.launches_us.size() > b.launches_us.size())) {
      best = it;
    }
  }
  return FromLaunches(best->first, best->second, *parts);
}

}  // namespace npuperf::evidence
