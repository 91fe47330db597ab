#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

// The evidence of one profiled target kernel, and the standard-mode entry
// point that builds it from a PROF_GROUP. Start here (see evidence/README.md).
namespace npuperf::evidence {

// Target Task Duration across repeats.
struct DurationStats {
  // One duration (us) per repeat, in run order.
  std::vector<double> samples_us;
  double aggregate_us = 0;
  // "trimmed_mean" | "median" | "single" (AggregateSamples).
  std::string method;
  // "op_summary.Task Duration(us)", "task_time.task_time(us)" or
  // "api_statistic.node.launch".
  std::string source;
};

// One --aic-metrics group's numeric columns of the target row, CSV order.
struct MetricGroup {
  std::string group;
  std::vector<std::pair<std::string, double>> fields;
  // op_summary file and line of the target row.
  std::filesystem::path source;
  size_t line = 0;
};

// Summed task cycles of one core (sample-based run).
struct CoreCycles {
  int core_id = 0;
  int64_t cycles = 0;
  double time_us = 0;
};

// Per-core load balance of one core type. The sample db covers every kernel
// of the process, so a valid table is always "process_scope_unattributed".
struct PerCore {
  // "process_scope_unattributed" or "unavailable:<why>" (no_sample_run,
  // no_aicore_db, ambiguous_aicore_db:<n>, no_positive_core_cycles,
  // no_core_time, sqlite_error:<msg>).
  std::string status = "unavailable:no_sample_run";
  int device_id = -1;
  // "AIC" (aicore.db) or "AIV" (ai_vector_core.db).
  std::string core_type;
  std::filesystem::path db;
  std::vector<CoreCycles> cores;  // by core_id
  double freq_ghz = 0;            // back-calculated: max_cycles / core time
  double ns_per_cycle = 0;
  double min_us = 0, avg_us = 0, max_us = 0;
  double spread_pct = 0;  // (max - min) / max * 100
  std::string verdict;    // PASS (<10), WARNING (10-30), CRITICAL (>=30)
  double half_gap_pct = 0;
  bool half_gap_hint = false;  // n >= 4 and half_gap_pct >= 2
  double first_half_avg_us = 0, second_half_avg_us = 0;
  std::vector<int> slowest_cores;  // up to 3, slowest first
  std::vector<int> fastest_cores;  // up to 3, fastest first

  bool ok() const { return status == "process_scope_unattributed"; }
};

// Bound diagnosis from pipe ratios. Ratio-derived only: it schedules the next
// experiment, it never proves a roofline or pipeline overlap.
struct BoundDiagnosis {
  // MTE2_BOUND, CUBE_BOUND, VEC_BOUND, FIXP_BOUND, MTE3_BOUND, SCALAR_BOUND,
  // NO_BOUND, or UNKNOWN (no core time / invalid ratio).
  std::string label = "UNKNOWN";
  // "aic" | "aiv" | "" (max(aicore_time, aiv_time), ties to aic).
  std::string primary_core;
  // compute_candidate, data_movement_candidate, scalar_candidate, mixed,
  // no_dominant_pipe, insufficient_evidence.
  std::string routing_label = "insufficient_evidence";
  std::vector<std::string> triggered_families;  // compute, data_movement, scalar
  // family -> field -> ratio, families always present.
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, double>>>> ratios;
  std::optional<bool> scalar_route_triggered;
  double aicore_time_us = 0, aiv_time_us = 0;
  std::vector<std::string> caveats;
};

// Whether the AI Core clock ran at its rated frequency.
struct DvfsCheck {
  std::string status = "unknown";  // ok | suspect | unknown
  double observed_mhz = 0;
  double rated_mhz = 0;
  double deviation_pct = 0;  // (observed - rated) / rated * 100
  double tolerance_pct = 5;
  // "opprof.current_freq", "op_summary.cycles_back_calculated",
  // "aicore.db.back_calculated" or "none".
  std::string source = "none";
  std::string note;
};

// Golden per-iteration E2E / target-kernel time: a cross-scope reference,
// never an optimisation speed-up.
struct GoldenRatio {
  std::string status = "not_provided";  // joined | not_provided | mismatch: <why>
  double golden_us = 0;
  double kernel_us = 0;
  double ratio = 0;
  std::string label = "golden_reference_ratio";
};

// A problem found while building evidence; evidence with errors is kept.
struct EvidenceError {
  std::string code;     // RATIO_OUT_OF_RANGE, MISSING_GROUP, ...
  std::string message;  // names file / line / column where known
};

struct Evidence {
  std::string op_name, op_type, task_type;
  int64_t block_num = 0, mix_block_num = 0;
  std::string input_shapes, input_data_types, input_formats;
  DurationStats duration;
  // From the canonical (PipeUtilization) row when present.
  double task_duration_us = 0;
  double aicore_time_us = 0;
  double aiv_time_us = 0;
  double head_overhead_us = 0;   // max(0, duration - max core time)
  double head_overhead_pct = 0;  // of duration
  double cube_utilization_pct = 0;
  std::vector<MetricGroup> metrics;  // fixed metric order
  // Merged row: per column the first non-zero value in metric order.
  std::map<std::string, double> merged;
  std::vector<std::string> missing_metrics;
  std::string seven_metric_status = "not_collected";  // complete | partial | not_collected
  // "aic_read" / "aic_write" / "aiv_read" / "aiv_write" -> hit rate percent.
  std::map<std::string, double> l2_hit_rate_pct;
  PerCore per_core;            // dominant core type
  PerCore per_core_secondary;  // the other type, when collected
  BoundDiagnosis bound;
  DvfsCheck dvfs;
  GoldenRatio golden;
  std::vector<EvidenceError> errors;
  std::vector<std::string> warnings;
  std::filesystem::path prof_group;
};

// Inputs of BuildEvidence besides the group directory.
struct BuildOptions {
  // Exact op_summary "Op Name" of the target. Required.
  std::string op_name;
  // Device whose sample dbs to use when several device_<id> hold one.
  // Default: -1 (exactly one device must hold a db).
  int device_id = -1;
  // SoC name ("Ascend910B2", "Ascend950PR_9589", ...) for the DVFS check.
  // Default: "" (unknown; DVFS falls back to the per-core clock, unrated).
  std::string soc;
  // Rated AI Core clock override, MHz. Default: 0 (from the SoC table).
  double rated_mhz = 0;
  // Allowed clock deviation before "suspect", percent. Default: 5.
  double dvfs_tolerance_pct = 5;
  // Golden per-iteration E2E time of the case (from a joined
  // GOLDEN_PERF_REPORT.json, see golden.h). Default: none (golden.status
  // "not_provided").
  std::optional<double> golden_per_iteration_us;
};

// Builds the evidence of `options.op_name` from a standard group (reads files
// only; no shared state, so concurrent calls are safe):
//   <prof_group>/PROF_<Metric>/PROF_*/mindstudio_profiler_output/op_summary_*.csv
//   <prof_group>/PROF_Sample/PROF_*/device_<id>/sqlite/{aicore,ai_vector_core}.db
// Fails (InvalidArgument / NotFound / FailedPrecondition, message naming
// files) when the group is unreadable, no metric run is present, the target
// is absent from or ambiguous in a present run, or a cell is malformed.
// Problems that leave the rest usable (missing groups, ratio out of range,
// no sample db) are recorded in Evidence::errors / warnings instead.
absl::StatusOr<Evidence> BuildEvidence(const std::filesystem::path& prof_group,
                                       const BuildOptions& options);

// Combines per-repeat evidence of the same target (run order): figures of the
// first repeat, Task Duration samples of all, aggregated by AggregateSamples
// (the golden ratio is recomputed on the aggregate); errors and warnings of
// all repeats. REQUIRES: !repeats.empty().
Evidence CombineRepeats(std::vector<Evidence> repeats);

struct KernelTiming;  // task_time.h

// Evidence of a quick-mode job: one KernelTiming per repeat (run order). Each
// repeat contributes its own aggregate (the repeat's launches reduced by
// AggregateSamples) as one sample; identity from the first repeat;
// seven_metric_status "not_collected"; source "task_time.task_time(us)" (or
// the api_statistic fallback). REQUIRES: !repeats.empty().
Evidence QuickEvidence(const std::vector<KernelTiming>& repeats,
                       std::optional<double> golden_per_iteration_us = std::nullopt);

}  // namespace npuperf::evidence
