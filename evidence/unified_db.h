#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/candidates.h"
#include "evidence/launch.h"
#include "evidence/op_summary.h"

namespace npuperf::evidence {

// The PROF root's unified msprof_<ts>.db (msprof --type=db, or beside a text
// export; msprof-output.md §5.4, schema 1.2.0) read as a source in its own
// right. Every read is an SQL query over the file opened read-only, so memory
// does not grow with the capture (the target's launches and the candidate
// table are what is kept). Tables used:
//
//   TASK(startNs, endNs, deviceId, globalTaskId, taskType, streamId, taskId, ...)
//   COMPUTE_TASK_INFO(name, globalTaskId, blockNum|blockDim, mixBlockNum|mixBlockDim,
//                     taskType, opType, inputShapes, inputDataTypes, inputFormats, ...)
//   TASK_PMU_INFO(globalTaskId, name, value)     one row per metric
//   AICORE_FREQ(deviceId, timestampNs, freq)     clock changes, MHz
//   NPU_INFO(id, name), META_DATA(name, value), STRING_IDS(id, value)
//
// Launches are TASK ⋈ COMPUTE_TASK_INFO on globalTaskId; every string column
// is a STRING_IDS id. Stateless functions; thread-safe (each opens the file).

// The op_summary column a TASK_PMU_INFO metric name is printed as (msprof's
// renaming, msprof-output.md §3.3 step 5): aic_total_time and total_time ->
// aicore_time(us), aiv_total_time -> aiv_time(us), *time* -> +(us), *bw* ->
// +(GB/s), *datas* -> +(KB), cube_utilization -> cube_utilization(%), then
// columns.h canonical names (aic_cube_ratio -> aic_mac_ratio).
std::string OpSummaryNameOfDbMetric(std::string_view db_name);

// The task type a TASK.taskType / task_time kernel_type spells with the
// KERNEL_ prefix of CANN 9 (KERNEL_AICORE -> AI_CORE, KERNEL_AIVEC ->
// AI_VECTOR_CORE, KERNEL_MIX_AIC -> MIX_AIC, KERNEL_MIX_AIV -> MIX_AIV,
// KERNEL_AICPU -> AI_CPU); anything else unchanged.
std::string NormalizeTaskType(std::string_view type);

// Whether `file` is named msprof_<digits>.db (the unified db, not a device db).
bool IsUnifiedDbName(const std::filesystem::path& file);

// The target's launches from the db: COMPUTE_TASK_INFO rows named exactly
// `op_name`, joined with TASK, ordered by the exact integer startNs, then
// `selector` (launch.h) as SelectTarget does for op_summary. The row's fields
// are the TASK_PMU_INFO metrics of the used launches (op_summary names;
// median with `all`), its duration (endNs - startNs) / 1000, its task type
// COMPUTE_TASK_INFO.taskType, or TASK.taskType normalized when that is N/A.
// `row.file` is the db, `row.line` the first used globalTaskId. NotFound
// listing candidates when the name is absent; FailedPrecondition when the db
// lacks TASK or COMPUTE_TASK_INFO; Internal naming the db on an SQLite error.
absl::StatusOr<SelectedTarget> SelectDbTarget(const std::filesystem::path& db,
                                              std::string_view op_name,
                                              const LaunchSelector& selector = {});

// Every (name, task type) of the db's compute tasks (aggregated in SQL:
// count, summed duration; the first eight launches in start order), sorted as
// ListCandidates documents, incidental reasons set.
absl::StatusOr<std::vector<OpCandidate>> ListDbCandidates(const std::filesystem::path& db);

// The AI Core clock over [start_ns, end_ns] from AICORE_FREQ (the change in
// force at start_ns and every change inside): lowest, highest and
// time-weighted mean. nullopt when the table is absent or holds no row for
// `device_id` (-1: any device).
struct DbClockWindow {
  double min_mhz = 0, max_mhz = 0, mean_mhz = 0;
  int changes = 0;  // rows used
};
absl::StatusOr<std::optional<DbClockWindow>> ReadDbClock(const std::filesystem::path& db,
                                                         int device_id, int64_t start_ns,
                                                         int64_t end_ns);

// NPU_INFO and META_DATA: chip name per device id, and name -> value.
struct DbFacts {
  std::map<int, std::string> chips;
  std::map<std::string, std::string> meta;
};
absl::StatusOr<DbFacts> ReadDbFacts(const std::filesystem::path& db);

}  // namespace npuperf::evidence
