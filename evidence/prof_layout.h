#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::evidence {

// Locating msprof's files on disk (msprof-output.md §2.4–2.5):
//
//   <--output>/PROF_<seq>_<ts17>_<RAND16>/
//     device_<id>/sqlite/{aicore.db, ai_vector_core.db}
//     mindstudio_profiler_output/<name>_<ts14>.csv
//                               /<name>_slice_<k>_<ts14>.csv   (> 1,000,000 rows)
//
// and npuperf's / the reference's standard group:
//
//   <PROF_GROUP>/PROF_<Metric>/PROF_*/mindstudio_profiler_output/...
//   <PROF_GROUP>/PROF_Sample/PROF_*/device_<id>/sqlite/aicore.db
//
// Every lookup is strict: several candidates where one is expected is an
// error that lists them (the reference silently took the last sorted hit).
// Stateless functions; thread-safe.

// The entries of `dir`, sorted by path; `ec` set when it cannot be listed.
std::vector<std::filesystem::path> SortedChildren(const std::filesystem::path& dir,
                                                  std::error_code& ec);

// The one `PROF_*` directory directly under `output_dir` (the --output given to
// msprof), or inside the one `*_ascend_pt` there when there is no `PROF_*`
// (torch_npu keeps its raw tree in its export). NotFound / FailedPrecondition
// (listing the candidates) otherwise.
absl::StatusOr<std::filesystem::path> FindSingleProfDir(const std::filesystem::path& output_dir);

// `<prof_dir>/mindstudio_profiler_output`, which must exist.
absl::StatusOr<std::filesystem::path> ProfilerOutputDir(const std::filesystem::path& prof_dir);

// The files of table `name` ("op_summary", "task_time", ...) in a table
// directory (mindstudio_profiler_output, device_<id>/summary or
// ASCEND_PROFILER_OUTPUT), slices in order. Names read: <name>.csv,
// <name>_<digits>[_<digits>...].csv (CANN 8.x <ts14>; CANN 6/7 0_1,
// 0_1_1_<ts>), <name>_slice_<k>[_<digits>...].csv. Empty when the table is
// absent. Error when two exports (different digit suffixes) are present or a
// slice is missing. Files that start with `name` but do not match are
// appended to `skipped` (when given) with the reason.
absl::StatusOr<std::vector<std::filesystem::path>> FindCsvParts(
    const std::filesystem::path& output_dir, std::string_view name,
    std::vector<std::string>* skipped = nullptr);

// The seven --aic-metrics groups, in the reference's fixed order.
const std::vector<std::string>& SevenMetrics();

// Sorted `device_<id>` directories under a PROF_* dir that hold
// sqlite/<db_name>, with their ids.
struct DeviceDb {
  int device_id = -1;
  std::filesystem::path path;
};
absl::StatusOr<std::vector<DeviceDb>> FindDeviceDbs(const std::filesystem::path& prof_dir,
                                                    std::string_view db_name);

}  // namespace npuperf::evidence
