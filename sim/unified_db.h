#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "SQLiteCpp/SQLiteCpp.h"
#include "absl/status/status.h"
#include "sim/pmu_columns.h"
#include "sim/report_writer.h"
#include "sim/soc.h"

namespace npuperf::sim {

// The PROF root's unified msprof_<ts>.db (schema 1.2.0, msprof-output.md
// §5.4), reduced to what the simulator knows: STRING_IDS, META_DATA,
// NPU_INFO, SESSION_TIME_INFO, AICORE_FREQ, TASK, COMPUTE_TASK_INFO and
// TASK_PMU_INFO (no SAMPLE_PMU_* tables). TASK_PMU_INFO holds every PMU cell
// op_summary prints, under the db's names (aicore_time(us) ->
// aic_total_time, aiv_mte2_time(us) -> aiv_mte2_time, ...) and with the very
// value printed (N/A cells have no row). AICORE_FREQ has the rated clock at
// the session start and, when the run is DVFS-lowered, the lower clock from
// the first task on. A PyPTO launch (Launch::pypto) is its device kernel,
// tilefwk_<n>_mix_aic (name and opType), with no TASK_PMU_INFO rows, as its
// op_summary rows print N/A. Strings are interned. Rows are inserted in one
// transaction as tasks arrive. Not thread-safe.
class UnifiedDb {
 public:
  // Creates `path` (replacing an old file). Throws nothing; errors surface in Finish().
  // `pmu`: op_summary's PMU columns (empty: no TASK_PMU_INFO rows);
  // `rated_mhz` feeds cube_utilization as in op_summary. `cann9`: TASK.taskType
  // spelled KERNEL_* (Cann9TaskType); `level0_times`: the PMU rows as CANN 9
  // level0 op_summary prints them (Cann9Level0Cells: zero *_time).
  UnifiedDb(const std::filesystem::path& path, const SocSpec& soc, int device,
            std::vector<PmuColumn> pmu = {}, double rated_mhz = 0, bool cann9 = false,
            bool level0_times = false);
  ~UnifiedDb();

  void AddTask(const TaskRecord& task);
  // Writes the session span and clock, commits and closes.
  absl::Status Finish(int64_t start_ns, int64_t end_ns, double freq_mhz);

 private:
  int64_t Intern(const std::string& text);
  void CreateTables();
  void AddPmu(int64_t global_task_id, const KernelResult& k);

  std::unique_ptr<SQLite::Database> db_;
  std::unique_ptr<SQLite::Transaction> tx_;
  std::unique_ptr<SQLite::Statement> task_, info_, pmu_row_;
  std::vector<PmuColumn> pmu_;
  std::vector<int64_t> pmu_names_;  // interned db name per column
  double rated_mhz_ = 0;
  bool cann9_ = false, level0_times_ = false;
  int64_t first_task_ns_ = -1;
  std::map<std::string, int64_t> strings_;
  SocSpec soc_;
  int device_;
  int64_t next_task_ = 0;
  std::string error_;
};

}  // namespace npuperf::sim
