#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sim/device_model.h"
#include "sim/launch.h"
#include "sim/options.h"
#include "sim/pmu_columns.h"

namespace npuperf::sim {

// What the CSV exports contain.
struct ReportConfig {
  std::filesystem::path output_dir;  // .../mindstudio_profiler_output (TablesDir)
  std::string table_suffix;          // after the table name: "_<ts14>" (TableSuffix)
  int device = 0;                    // physical id (Device_id column)
  SimOptions options;
  std::vector<PmuColumn> pmu;  // empty: op_summary without PMU columns
  double rated_mhz = 0;
  bool block_dim_naming = false;  // "Block Dim" instead of "Block Num"
  // torch_npu export (SimEnv::torch_npu_layout): kernel_details.csv with its
  // column names (Step Id first, no Device_id), no task_time, statistic
  // tables without Device_id.
  bool torch_npu = false;
  // SimEnv::cann9_layout: KERNEL_* task types in task_time; level0 PMU cells
  // with zero *_time(us) (Cann9Level0Cells).
  bool cann9 = false;
  bool garbage_row = false;  // fault: a malformed line after the first row
  bool truncate = false;     // fault: cut the last op_summary/task_time line
};

// One executed task on the device timeline.
struct TaskRecord {
  const Launch* launch = nullptr;
  const KernelResult* result = nullptr;
  int64_t start_ns = 0;  // unix ns
  int stream_id = 0;
  int task_id = 0;
};

// Streams op_summary and task_time rows as tasks arrive (chronological order)
// and writes op_statistic and api_statistic at the end, with msprof's headers
// and cell quirks (msprof-output.md §3-§4). Owns its files. Not thread-safe.
class ReportWriter {
 public:
  explicit ReportWriter(ReportConfig config) : config_(std::move(config)) {}
  ~ReportWriter();
  ReportWriter(const ReportWriter&) = delete;
  ReportWriter& operator=(const ReportWriter&) = delete;

  // Creates the files and writes headers plus the run-start control tasks.
  absl::Status Open(int64_t session_start_ns, int control_stream);
  void AddTask(const TaskRecord& task);
  // One host API call for api_statistic (level: acl, runtime, node).
  void AddApiCall(const std::string& level, const std::string& name, double duration_us);
  // Writes the statistic files and closes everything.
  absl::Status Finish();

 private:
  struct Stat {
    int64_t count = 0;
    double sum = 0, sum_sq = 0, min = 0, max = 0;
    void Add(double v);
  };
  // msprof's --task-time drives task_time, op_summary and op_statistic together: any level but
  // off writes both per-task files (l0 with N/A basic info), op_statistic only from l1 on
  // (msprof-output.md §2.2 note (a), §4.3). So there is one switch, not one per file.
  bool WritesTaskFiles() const { return config_.options.task_time != TaskTimeLevel::kOff; }
  std::string Path(const std::string& name) const;
  std::string OpSummaryHeader() const;
  // One op_summary row of `task` spanning [start_ns, start_ns + duration_us];
  // `context` is its Context ID (-1: the task's own, 0 for MIX, else N/A).
  void WriteOpSummaryRow(const TaskRecord& task, int64_t start_ns, double duration_us, int context);
  // A PyPTO launch's kPyptoRows rows: consecutive parts of the task (their
  // durations sum to its Task Duration), Context ID 0, 1, 2, PMU cells N/A.
  void WritePyptoRows(const TaskRecord& task, double duration_us);
  void WriteBasicInfo(const Launch& l, int context, std::string& line) const;
  void WriteTaskTimeRow(const std::string& name, const std::string& type, int stream, int task,
                        int64_t start_ns, double duration_us);
  absl::Status WriteOpStatistic();
  absl::Status WriteApiStatistic();
  static absl::Status TruncateLastLine(const std::string& path);

  ReportConfig config_;
  FILE* op_summary_ = nullptr;
  FILE* task_time_ = nullptr;
  std::string op_summary_path_, task_time_path_;
  int64_t rows_ = 0;  // op_summary rows written
  int64_t prev_start_ns_ = 0;
  double prev_duration_us_ = 0;
  std::map<std::pair<std::string, std::string>, Stat> op_stats_;
  std::map<std::pair<std::string, std::string>, Stat> api_stats_;
  std::string line_;  // reused row buffer
};

// CANN 9's task_time / TASK.taskType spelling: KERNEL_AICORE, KERNEL_AIVEC,
// KERNEL_MIX_AIC, KERNEL_MIX_AIV, KERNEL_AICPU (others unchanged).
std::string Cann9TaskType(TaskType type);

// The PMU cells of one task as CANN 9 level0 prints them (each preceded by a
// comma): every *_time(us) column 0.0, the others as AppendPmuCells.
void Cann9Level0Cells(const std::vector<PmuColumn>& columns, const KernelResult& k,
                      double rated_mhz, std::string& line);

// "1780676244313289.000" from unix ns (exact, no floating point).
std::string MicrosFromNs(int64_t ns);

}  // namespace npuperf::sim
