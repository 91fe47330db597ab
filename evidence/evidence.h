#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/labels.h"
#include "evidence/launch.h"
#include "evidence/roofline.h"
#include "evidence/soc_table.h"
#include "evidence/statistic.h"

// The evidence of one profiled target kernel, and the standard-mode entry
// point that builds it from a PROF_GROUP. Start here (see evidence/README.md).
namespace npuperf::evidence {

// Target Task Duration across repeats.
struct DurationStats {
  // One duration (us) per repeat, in run order.
  std::vector<double> samples_us;
  // The primary core time (us) of the same repeats, max(aicore_time,
  // aiv_time) of each launch row; empty when a repeat has none (quick mode,
  // task_time and api_statistic sources).
  std::vector<double> core_samples_us;
  double aggregate_us = 0;
  // AggregateSamples over samples_us.
  AggregationMethod method = AggregationMethod::kNone;
  // op_summary Task Duration, task_time or the api_statistic node/launch row.
  TimingSource source = TimingSource::kUnset;
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
// of the process, so a valid table is always kProcessScopeUnattributed.
struct PerCore {
  PerCoreStatus status = PerCoreStatus::kNoSampleRun;
  // The count of kAmbiguousAicoreDb, the message of kSqliteError; else empty.
  std::string status_detail;
  int device_id = -1;
  // kAic (aicore.db) or kAiv (ai_vector_core.db).
  CoreType core_type = CoreType::kNone;
  std::filesystem::path db;
  std::vector<CoreCycles> cores;  // by core_id
  double freq_ghz = 0;            // back-calculated: max_cycles / core time
  double ns_per_cycle = 0;
  double min_us = 0, avg_us = 0, max_us = 0;
  double spread_pct = 0;                           // (max - min) / max * 100
  BalanceVerdict verdict = BalanceVerdict::kNone;  // by spread_pct: <10, 10-30, >=30
  double half_gap_pct = 0;
  bool half_gap_hint = false;  // n >= 4 and half_gap_pct >= 2
  double first_half_avg_us = 0, second_half_avg_us = 0;
  std::vector<int> slowest_cores;  // up to 3, slowest first
  std::vector<int> fastest_cores;  // up to 3, fastest first
  // The implied clock (max cycles / core time) cannot be real: the cycles
  // are not the target's (the db is process-scoped) or the time base is
  // wrong; every figure above is marked so where it is shown.
  bool clock_implausible = false;
  std::string clock_note;  // why, when clock_implausible

  bool ok() const { return status == PerCoreStatus::kProcessScopeUnattributed; }
};

// "process_scope_unattributed" or "unavailable:<status>[:<detail>]" (the edge
// spelling: evidence.json, the proto, warnings).
std::string StatusText(const PerCore& p);

// Bound diagnosis from pipe ratios. Ratio-derived only: it schedules the next
// experiment, it never proves a roofline or pipeline overlap.
struct BoundDiagnosis {
  // kUnknown when there is no core time or a ratio is invalid.
  PipeBound label = PipeBound::kUnknown;
  // max(aicore_time, aiv_time), ties to kAic; kNone without core time.
  CoreType primary_core = CoreType::kNone;
  RoutingLabel routing_label = RoutingLabel::kInsufficientEvidence;
  std::vector<RatioFamily> triggered_families;
  // family -> field -> ratio, families always present.
  std::vector<std::pair<RatioFamily, std::vector<std::pair<std::string, double>>>> ratios;
  std::optional<bool> scalar_route_triggered;
  double aicore_time_us = 0, aiv_time_us = 0;
  std::vector<std::string> caveats;
};

// Whether the AI Core clock ran at its rated frequency.
struct DvfsCheck {
  DvfsStatus status = DvfsStatus::kUnknown;
  double observed_mhz = 0;
  double rated_mhz = 0;
  double deviation_pct = 0;  // (observed - rated) / rated * 100
  double tolerance_pct = 5;
  ClockSource source = ClockSource::kNone;
  std::string note;
  // The SoC row used ("" when none was resolved) and where the rated clock
  // came from ("capture: <where>", "soc table: <name>", "option", "").
  std::string soc;
  std::string rated_source;
  // SoC resolution warnings (unknown, ambiguous, capture vs table).
  std::vector<std::string> warnings;
};

// Which launches of the target the evidence used (launch.h).
struct LaunchRecord {
  std::string selector = "unique";
  // Launches of the target in the canonical run (PipeUtilization, or the
  // quick run of the first repeat).
  int total = 0;
  // The used launches of that run, start order.
  std::vector<LaunchInfo> used;
  // How metric fields were reduced: kSingle (one launch) or kMedian (all).
  AggregationMethod metric_method = AggregationMethod::kSingle;
  // `all`: group -> field -> (min, max) across the used launches.
  std::vector<
      std::pair<std::string, std::vector<std::pair<std::string, std::pair<double, double>>>>>
      spread;
};

// What was read, as the layout detector (layout.h) found it.
struct InputRecord {
  std::string kind;  // Name(InputKind): prof_group, prof_run, ascend_pt, opprof
  // One sentence each: files found, skipped with the reason.
  std::vector<std::string> notes;
};

// Golden per-iteration E2E / target-kernel time: a cross-scope reference,
// never an optimisation speed-up.
struct GoldenRatio {
  GoldenStatus status = GoldenStatus::kNotProvided;
  std::string mismatch;  // why, for kMismatch
  double golden_us = 0;
  double kernel_us = 0;
  double ratio = 0;
  std::string label = "golden_reference_ratio";
};

// "joined", "not_provided" or "mismatch: <why>" (the edge spelling).
std::string StatusText(const GoldenRatio& g);

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
  double head_overhead_us = 0;   // duration - max core time (negative: see status)
  double head_overhead_pct = 0;  // of duration
  HeadOverheadStatus head_overhead_status = HeadOverheadStatus::kNotApplicable;
  std::string head_overhead_note;  // why not applicable / why negative
  double cube_utilization_pct = 0;
  std::vector<MetricGroup> metrics;  // fixed metric order
  // Merged row: per column the first non-zero value in metric order.
  std::map<std::string, double> merged;
  std::vector<std::string> missing_metrics;
  SevenMetricStatus seven_metric_status = SevenMetricStatus::kNotCollected;
  // "aic_read" / "aic_write" / "aiv_read" / "aiv_write" -> hit rate percent.
  std::map<std::string, double> l2_hit_rate_pct;
  PerCore per_core;            // dominant core type
  PerCore per_core_secondary;  // the other type, when collected
  BoundDiagnosis bound;
  DvfsCheck dvfs;
  GoldenRatio golden;
  LaunchRecord launch;
  InputRecord input;
  // What the capture says about its device (info.json, msprof op
  // HardwareInfo / Rated Freq); feeds the SoC resolution.
  SocFacts device_facts;
  // The op_statistic row of the target's OP Type and core type, when the
  // canonical run has one.
  std::optional<OpStatisticRow> op_statistic;
  // Measured roofline, terminal state and completion rule (roofline.h).
  Roofline roofline;
  std::vector<EvidenceError> errors;
  std::vector<std::string> warnings;
  std::filesystem::path prof_group;
  // Which source each figure came from (evidence.json "sources"): keys
  // "identity", "duration", "pmu", "aicore_time_us", "aiv_time_us", "clock";
  // values "op_summary <file>", "msprof_db <file>", "task_time <file>", or
  // "cycles: ..." for a core time derived from *_total_cycles (docs/evidence.md
  // "Sources"). Empty for a figure nobody gave.
  std::map<std::string, std::string> sources;
  // The run's unified msprof_<ts>.db, when it has one (read or not).
  std::filesystem::path unified_db;
  // The AI Core clock over the target's used launches (AICORE_FREQ of the
  // unified db), when the db has it: lowest, highest, time-weighted mean MHz.
  struct ClockWindow {
    double min_mhz = 0, max_mhz = 0, mean_mhz = 0;
    int changes = 0;
  };
  std::optional<ClockWindow> db_clock;
};

// Inputs of BuildEvidence besides the group directory.
struct BuildOptions {
  // Exact op_summary "Op Name" of the target. Required.
  std::string op_name;
  // Which launches of the target to use (launch.h). Default: unique.
  LaunchSelector launch;
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
  // kNotProvided).
  std::optional<double> golden_per_iteration_us;
  // A Tile-DAG attestation the user supplied (ReadTileDagAttestation): the
  // only way the pipeline evidence becomes proven / not_applicable_with_dag.
  // Default: none (unverified).
  std::optional<TileDagAttestation> tile_dag;
  // Threads reading the metric runs of a group (parallel.h). Default: 0
  // (DefaultFileThreads()). The evidence is the same for any count.
  int file_threads = 0;
};

// Builds the evidence of `options.op_name` from what `input` holds (reads
// files only; no shared state, so concurrent calls are safe), as the layout
// detector (layout.h) classifies it:
//   a standard group   <input>/PROF_<Metric>/PROF_*/... for the seven metric
//                      runs, <input>/PROF_Sample/PROF_*/device_<id>/sqlite/*.db
//   one msprof run     a PROF_* (any layout) or the --output holding one:
//                      its own metric group; the others listed as not
//                      collected (a warning, not MISSING_GROUP)
//   torch_npu          *_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv
//   msprof op          OPPROF_* (opprof.h), Current/Rated Freq for the DVFS check
// `options.launch` picks the target's launches in every run (launch.h).
// Fails (InvalidArgument / NotFound / FailedPrecondition, message naming
// files) when the input is unreadable, no run is present, the target is
// absent from or (with `unique`) launched several times in a present run, or
// a cell is malformed. Problems that leave the rest usable (missing groups,
// ratio out of range, no sample db) are recorded in Evidence::errors /
// warnings instead.
absl::StatusOr<Evidence> BuildEvidence(const std::filesystem::path& input,
                                       const BuildOptions& options);

// Combines per-repeat evidence of the same target (run order): figures of the
// first repeat, Task Duration samples of all, aggregated by AggregateSamples
// (the golden ratio is recomputed on the aggregate); errors and warnings of
// all repeats. REQUIRES: !repeats.empty().
Evidence CombineRepeats(std::vector<Evidence> repeats);

struct KernelTiming;  // task_time.h

// Evidence of a quick-mode job: one KernelTiming per repeat (run order). Every
// used launch of every repeat is one duration sample (one per repeat unless
// the selector is `all`), reduced by AggregateSamples; identity and the
// launch record from the first repeat; seven_metric_status kNotCollected; the
// repeats' source (task_time, or the api_statistic fallback).
// REQUIRES: !repeats.empty().
Evidence QuickEvidence(const std::vector<KernelTiming>& repeats,
                       std::optional<double> golden_per_iteration_us = std::nullopt);

}  // namespace npuperf::evidence
