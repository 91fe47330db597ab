#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/labels.h"

namespace npuperf::evidence {

// Quick-mode kernel timing (`msprof --task-time=on --ascendcl=on <app>`): the
// target kernel's launches read from task_time_*.csv.
struct KernelTiming {
  // Exact kernel name chosen (task_time kernel_name).
  std::string kernel_name;
  // Task type of its rows (MIX_AIC, AI_CORE, AI_VECTOR_CORE, ...). When the
  // launches disagree, the distinct types joined with '|'.
  std::string kernel_type;
  // Every launch of that kernel in this process, in run order (us).
  std::vector<double> launches_us;
  // AggregateSamples(launches_us).value.
  double aggregate_us = 0;
  // AggregateSamples(launches_us).method.
  AggregationMethod method = AggregationMethod::kNone;
  // kTaskTime, or kApiStatistic (the node/launch fallback).
  TimingSource source = TimingSource::kUnset;
  // The CSV file(s) read, for the evidence record.
  std::vector<std::filesystem::path> files;
};

// Reads the quick timing of one msprof run. Reads files only; thread-safe.
//
// `output_dir` is the --output given to msprof: it must hold exactly one
// PROF_* with a mindstudio_profiler_output (errors name the files found).
// task_time rows of type PROFILING_ENABLE, PROFILING_DISABLE,
// TASK_TIMEOUT_SET or empty type, rows without a kernel name ("N/A") and rows
// without a positive duration are ignored.
//
// op_name non-empty: exactly that kernel_name; absent → NotFound naming the op
// and listing the kernels present. Never falls back to host API time.
// op_name empty: the kernel with the largest summed time (then launch count);
// only then, when task_time has no usable row, the api_statistic
// `node`/`launch` row, whose per-call mean Avg(us) is used (the reference took
// Time(us), the sum over all calls).
absl::StatusOr<KernelTiming> ReadQuickTiming(const std::filesystem::path& output_dir,
                                             std::string_view op_name);

// Repeat / launch aggregation (evidence rules): >=3 samples drop one min and
// one max, then mean (kTrimmedMean); 2 samples their mean and 1 sample itself
// (kMedian / kSingle); none → {0, kNone}.
struct Aggregate {
  double value = 0;
  AggregationMethod method = AggregationMethod::kNone;
};
Aggregate AggregateSamples(std::vector<double> samples);

}  // namespace npuperf::evidence
