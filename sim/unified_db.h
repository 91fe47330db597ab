#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "SQLiteCpp/SQLiteCpp.h"
#include "absl/status/status.h"
#include "sim/report_writer.h"
#include "sim/soc.h"

namespace npuperf::sim {

// The PROF root's unified msprof_<ts>.db (schema 1.2.0, msprof-output.md
// §5.4), reduced to what the simulator knows: STRING_IDS, META_DATA,
// NPU_INFO, SESSION_TIME_INFO, AICORE_FREQ, TASK and COMPUTE_TASK_INFO
// (no TASK_PMU_INFO / SAMPLE_PMU_* tables). Strings are interned. Rows are
// inserted in one transaction as tasks arrive. Not thread-safe.
class UnifiedDb {
 public:
  // Creates `path` (replacing an old file). Throws nothing; errors surface in Finish().
  UnifiedDb(const std::filesystem::path& path, const SocSpec& soc, int device);
  ~UnifiedDb();

  void AddTask(const TaskRecord& task);
  // Writes the session span and clock, commits and closes.
  absl::Status Finish(int64_t start_ns, int64_t end_ns, double freq_mhz);

 private:
  int64_t Intern(const std::string& text);
  void CreateTables();

  std::unique_ptr<SQLite::Database> db_;
  std::unique_ptr<SQLite::Transaction> tx_;
  std::unique_ptr<SQLite::Statement> task_, info_;
  std::map<std::string, int64_t> strings_;
  SocSpec soc_;
  int device_;
  int64_t next_task_ = 0;
  std::string error_;
};

}  // namespace npuperf::sim
