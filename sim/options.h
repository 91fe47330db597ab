#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/pmu_columns.h"

namespace npuperf::sim {

// --task-time level: l0 = durations only, l1 (= on, l2, l3) = with op basic info.
enum class TaskTimeLevel { kOff, kL0, kL1 };
enum class AicMode { kTaskBased, kSampleBased };

// One msprof-sim command line (msprof app mode, `--flag=value` syntax).
struct SimOptions {
  std::string output;   // --output; Default: the current directory
  bool ai_core = true;  // --ai-core; Default: on when --task-time is on/l1, off for off/l0
  MetricGroup group = MetricGroup::kPipeUtilization;  // --aic-metrics
  AicMode mode = AicMode::kTaskBased;                 // --aic-mode
  int aic_freq_hz = 100;                              // --aic-freq (1..100)
  TaskTimeLevel task_time = TaskTimeLevel::kL1;       // --task-time; Default: on
  bool ascendcl = true;                               // --ascendcl; Default: on
  // --instr-profiling: also write the instruction timeline (msprof_<ts>.json
  // with BIU Group lanes) and device_<id>/sqlite/biu_perf.db. Default: off.
  bool instr_profiling = false;
  // --export=on: no application; re-export the PROF_* named by --output (the
  // collection already exported everything: this checks it and reports).
  // --type=text only; --reports=<json file> selects timeline sections.
  bool export_only = false;
  std::string reports;  // --reports; Default: "" (every section)
  // --type=db: export the unified msprof_<ts>.db only (no CSV tables);
  // --type=text (Default) writes both.
  bool db_only = false;
  std::vector<std::string> app;  // trailing app (after `--` or first non-option) or --application
  bool help = false;
  bool version = false;
  // `msprof op ...` (first word "op"): operator tuning mode, one kernel profiled
  // into OPPROF_<ts14>_<16 upper>/ (docs/simulator.md §4.2). Flags: --output,
  // --aic-metrics (comma list), --kernel-name, --launch-count=1, --application.
  bool op_mode = false;
  std::vector<MetricGroup> op_groups;  // op mode --aic-metrics; Default: the seven groups
  std::string kernel_name;             // --kernel-name; Default: the first kernel launched
};

// Parses argv[1..]. Errors carry the message to print; flags of real msprof
// that the simulator does not implement say "not supported by msprof-sim".
absl::StatusOr<SimOptions> ParseOptions(const std::vector<std::string>& args);

// Splits an --application string like a shell would (quotes, backslashes).
absl::StatusOr<std::vector<std::string>> SplitCommandLine(const std::string& text);

std::string UsageText();

}  // namespace npuperf::sim
