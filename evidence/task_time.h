#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/candidates.h"
#include "evidence/labels.h"
#include "evidence/launch.h"

namespace npuperf::evidence {

// Quick-mode kernel timing (`msprof --task-time=on --ascendcl=on <app>`): the
// target kernel's launches read from task_time_*.csv.
struct KernelTiming {
  // Exact kernel name chosen (task_time kernel_name).
  std::string kernel_name;
  // Task type of its rows (MIX_AIC, AI_CORE, AI_VECTOR_CORE, ...; CANN 9's
  // KERNEL_MIX_AIC etc. normalized, NormalizeTaskType). When the launches
  // disagree, the distinct types joined with '|'.
  std::string kernel_type;
  // Every launch of that kernel in this process, in start order.
  std::vector<LaunchInfo> launches;
  // Indexes into `launches` picked by the launch selector.
  std::vector<size_t> used;
  // The selector, as LaunchSelectorText spells it.
  std::string selector = "unique";
  // Durations of the used launches (us), start order.
  std::vector<double> launches_us;
  // AggregateSamples(launches_us).value.
  double aggregate_us = 0;
  // AggregateSamples(launches_us).method.
  AggregationMethod method = AggregationMethod::kNone;
  // kTaskTime, or kApiStatistic (the node/launch fallback).
  TimingSource source = TimingSource::kUnset;
  // The CSV file(s) read, for the evidence record.
  std::vector<std::filesystem::path> files;
  // Caveats (pre-CANN-6 rows that are per-task means, the kernel picked
  // without a name).
  std::vector<std::string> warnings;
};

// Reads the quick timing of one msprof run. Reads files only; thread-safe.
//
// `output_dir` is the --output given to msprof or the PROF_* itself (any
// layout of layout.h with a task_time table). task_time rows of type
// PROFILING_ENABLE, PROFILING_DISABLE, TASK_TIMEOUT_SET or empty type, rows
// without a kernel name ("N/A") and rows without a positive duration are
// ignored. Both headers are read: the current
// `kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us)` and
// the pre-CANN-6 `...,Count,Avg(us),...,Type,API,Task ID,Op Name,Stream ID`
// (one row per task: its Count launches each get the row's Avg(us), with a
// warning).
//
// A run whose only export is the unified msprof_<ts>.db (--type=db) is read
// from it (TASK ⋈ COMPUTE_TASK_INFO, source kMsprofDb), by the same rules.
// op_name non-empty: exactly that kernel_name, then `launch` picks its
// launches (launch.h; `unique` fails listing them); absent → NotFound naming
// the op, listing the kernels present and, when op_summary calls a task_time
// kernel by that name (PyPTO's PYPTO_<op> for tilefwk_<n>_mix_aic), the
// task_time name to use (OtherNameHint). Never falls back to host API time.
// op_name empty: the one kernel that is not a known incidental kernel
// (PickAutoCandidate; several or none is FailedPrecondition listing them);
// only when task_time has no usable row at all, the api_statistic
// `node`/`launch` row, whose per-call mean Avg(us) is used (the reference took
// Time(us), the sum over all calls).
absl::StatusOr<KernelTiming> ReadQuickTiming(const std::filesystem::path& output_dir,
                                             std::string_view op_name,
                                             const LaunchSelector& launch = {});

// The discovery candidates of a task_time table (both headers; task types
// normalized as in KernelTiming).
absl::StatusOr<std::vector<OpCandidate>> ListTaskTimeCandidates(
    const std::vector<std::filesystem::path>& parts);

// Repeat / launch aggregation (evidence rules): >=3 samples drop one min and
// one max, then mean (kTrimmedMean); 2 samples their mean and 1 sample itself
// (kMedian / kSingle); none → {0, kNone}.
struct Aggregate {
  double value = 0;
  AggregationMethod method = AggregationMethod::kNone;
};
Aggregate AggregateSamples(std::vector<double> samples);

}  // namespace npuperf::evidence
