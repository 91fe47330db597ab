#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::evidence {

// The one layout detector: what an input directory holds, which files of it
// are read, and why others were skipped. Every reader of evidence/ (standard,
// quick, discovery, the archive) finds its files through it. Variants
// (docs/evidence.md "Inputs"):
//
//   PROF_*/mindstudio_profiler_output/<table>_<ts14>.csv     CANN 8.x export
//   PROF_*/mindstudio_profiler_output/<table>_0_1_1_<ts>.csv CANN 7
//   PROF_*/device_<id>/summary/<table>_0_1.csv               before CANN 8.0
//   *_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv    torch_npu profiler
//   PROF_*/msprof_<ts14>.db                                   unified db (unified_db.h):
//                                      beside an export, or alone (--type=db)
//   OPPROF_*/... (msprof op)                                  opprof.h reads it
//
// Stateless functions; thread-safe.

// What a directory given to summarize / list-op-names is.
enum class InputKind {
  kProfGroup,  // <G>/PROF_<Metric>/PROF_*/... (seven metric runs, PROF_Sample)
  kProfRun,    // one msprof run: a PROF_* dir or the --output holding exactly one
  kAscendPt,   // one torch_npu *_ascend_pt export (or its parent holding one)
  kOpprof,     // one msprof op OPPROF_* dir (or its parent holding one)
};
// "prof_group", "prof_run", "ascend_pt", "opprof".
std::string_view Name(InputKind k);

// Where the tables of one run live.
enum class RunLayoutKind {
  kMindstudioOutput,      // PROF_*/mindstudio_profiler_output
  kDeviceSummary,         // PROF_*/device_<id>/summary (pre-8.0)
  kAscendProfilerOutput,  // *_ascend_pt/ASCEND_PROFILER_OUTPUT (torch_npu)
  kUnifiedDbOnly,         // PROF_*/msprof_<ts>.db with no text export (--type=db)
};
// "mindstudio_profiler_output", "device_summary", "ascend_profiler_output",
// "msprof_db".
std::string_view Name(RunLayoutKind k);

// Platform facts a capture carries about its device: msprof's
// device_<id>/info.json.<id> DeviceInfo[0] (ai_core_num, aiv_num,
// aic_frequency). Unset when the file or the key is absent.
struct DeviceFacts {
  std::optional<double> aic_mhz;
  std::optional<int> cube_cores, vector_cores;
  std::filesystem::path source;
};

// The tables of one run, each a list of slices (empty when absent).
struct RunLayout {
  RunLayoutKind kind = RunLayoutKind::kMindstudioOutput;
  std::filesystem::path run_dir;    // the PROF_* or *_ascend_pt directory
  std::filesystem::path table_dir;  // the directory holding the CSVs
  int device_id = -1;               // device_<id> of a pre-8.0 summary, else -1
  // op_summary_*.csv, or kernel_details.csv for torch_npu.
  std::vector<std::filesystem::path> op_summary;
  std::vector<std::filesystem::path> task_time, op_statistic, api_statistic;
  // The run's unified msprof_<ts>.db (PROF root), empty when absent.
  std::filesystem::path unified_db;
  // The --aic-metrics group this run collected, when the run says so
  // (device_<id>/sample.json ai_core_metrics, torch_npu profiler_info
  // _aic_metrics); empty when unknown.
  std::string metric_group;
  DeviceFacts device;
  // What was found and why files were skipped, one sentence each.
  std::vector<std::string> notes;
};

// Reads one run: `dir` is a PROF_* / *_ascend_pt directory, or a directory
// (an msprof --output) holding exactly one of them. `device_id` >= 0 picks
// the device of a pre-8.0 tree with several summary dirs. NotFound when no
// variant is present (the message lists what was looked for and what the
// directory holds, e.g. raw data without an export); FailedPrecondition for
// several candidates, two exports of one table or two unified dbs. A run
// whose only export is msprof_<ts>.db is kUnifiedDbOnly (table_dir = run_dir,
// no CSV tables).
absl::StatusOr<RunLayout> DetectRun(const std::filesystem::path& dir, int device_id = -1);

// Classifies an input directory (see InputKind); `notes` gets one line on
// what was found. NotFound when it is none of them.
struct DetectedInput {
  InputKind kind = InputKind::kProfGroup;
  std::filesystem::path path;  // the directory to read (a PROF_* / OPPROF_* / *_ascend_pt
                               // found inside `dir` when `dir` holds exactly one)
  std::vector<std::string> notes;
};
// `dir` may also be a msprof_<ts>.db file (its PROF_* is read). Never throws:
// an empty or unreadable path is InvalidArgument / NotFound naming it.
absl::StatusOr<DetectedInput> DetectInput(const std::filesystem::path& dir);

// The run of metric `metric` in a PROF_GROUP: DetectRun(<group>/PROF_<metric>).
// nullopt (with the reason in `why`) when that run's directory, PROF_* or
// export is absent; an error when it is present but ambiguous or malformed.
absl::StatusOr<std::optional<RunLayout>> DetectGroupRun(const std::filesystem::path& group,
                                                        std::string_view metric, int device_id,
                                                        std::string* why);

// The aic-metrics group named by torch_npu's _aic_metrics value
// ("ACL_AICORE_PIPE_UTILIZATION" -> "PipeUtilization"), or "".
std::string GroupOfAclMetric(std::string_view acl);

}  // namespace npuperf::evidence
