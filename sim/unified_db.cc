#include "sim/unified_db.h"

#include <cmath>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuperf::sim {
namespace {

constexpr const char* kTables[] = {
    "CREATE TABLE STRING_IDS(id INTEGER PRIMARY KEY, value TEXT)",
    "CREATE TABLE META_DATA(name TEXT, value TEXT)",
    "CREATE TABLE NPU_INFO(id INTEGER, name TEXT)",
    "CREATE TABLE SESSION_TIME_INFO(startTimeNs INTEGER, endTimeNs INTEGER)",
    "CREATE TABLE AICORE_FREQ(deviceId INTEGER, timestampNs INTEGER, freq INTEGER)",
    "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
    "globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId "
    "INTEGER, "
    "taskId INTEGER, modelId INTEGER)",
    "CREATE TABLE COMPUTE_TASK_INFO(name INTEGER, globalTaskId INTEGER, blockNum INTEGER, "
    "mixBlockNum INTEGER, "
    "taskType INTEGER, opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER, inputShapes "
    "INTEGER, "
    "outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER, "
    "opState INTEGER, "
    "hf32Eligible INTEGER, gridDim INTEGER, blockDim INTEGER)",
    "CREATE TABLE TASK_PMU_INFO(globalTaskId INTEGER, name INTEGER, value NUMERIC)",
};

// The db's name of an op_summary PMU column (msprof-output.md §3.3 step 5 undone).
std::string DbName(std::string name) {
  for (const char* unit : {"(us)", "(GB/s)", "(KB)", "(%)"}) {
    if (absl::EndsWith(name, unit)) name.resize(name.size() - std::strlen(unit));
  }
  if (name == "aicore_time") return "aic_total_time";
  if (name == "aiv_time") return "aiv_total_time";
  return name;
}

std::string ChipName(const SocSpec& soc) {
  return soc.chip_code == 15 ? "Ascend950" : "Ascend910B";
}

std::string OrNa(const std::string& s) { return s.empty() ? "N/A" : s; }

}  // namespace

UnifiedDb::UnifiedDb(const std::filesystem::path& path, const SocSpec& soc, int device,
                     std::vector<PmuColumn> pmu, double rated_mhz, bool cann9, bool level0_times)
    : pmu_(std::move(pmu)),
      rated_mhz_(rated_mhz),
      cann9_(cann9),
      level0_times_(level0_times),
      soc_(soc),
      device_(device) {
  try {
    std::filesystem::remove(path);
    db_ = std::make_unique<SQLite::Database>(path.string(),
                                             SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    CreateTables();
    tx_ = std::make_unique<SQLite::Transaction>(*db_);
    task_ =
        std::make_unique<SQLite::Statement>(*db_, "INSERT INTO TASK VALUES(?,?,?,?,?,?,?,?,?,?,?)");
    info_ = std::make_unique<SQLite::Statement>(
        *db_, "INSERT INTO COMPUTE_TASK_INFO VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    pmu_row_ = std::make_unique<SQLite::Statement>(*db_, "INSERT INTO TASK_PMU_INFO VALUES(?,?,?)");
    for (const PmuColumn& c : pmu_) pmu_names_.push_back(Intern(DbName(c.name)));
  } catch (const std::exception& e) {
    error_ = absl::StrCat("msprof db ", path.string(), ": ", e.what());
  }
}

UnifiedDb::~UnifiedDb() = default;

void UnifiedDb::CreateTables() {
  for (const char* sql : kTables) db_->exec(sql);
  db_->exec(
      "INSERT INTO META_DATA VALUES('SCHEMA_VERSION','1.2.0'),('SCHEMA_VERSION_MAJOR','1'),"
      "('SCHEMA_VERSION_MINOR','2'),('SCHEMA_VERSION_MICRO','0')");
  SQLite::Statement npu(*db_, "INSERT INTO NPU_INFO VALUES(?, ?)");
  npu.bind(1, device_);
  npu.bind(2, ChipName(soc_));
  npu.exec();
}

int64_t UnifiedDb::Intern(const std::string& text) {
  auto [it, fresh] = strings_.emplace(text, static_cast<int64_t>(strings_.size()));
  return it->second;
}

void UnifiedDb::AddTask(const TaskRecord& t) {
  if (!error_.empty()) return;
  const Launch& l = *t.launch;
  int64_t id = next_task_++;
  int64_t end = t.start_ns + std::llround(t.result->duration_us * 1000.0);
  int64_t type = Intern(std::string(TaskTypeName(l.task_type)));
  int64_t device_type =
      cann9_ ? Intern(Cann9TaskType(l.task_type)) : type;  // TASK: the device's spelling
  int64_t task_values[] = {t.start_ns,  end,          device_,     id,        id,          0,
                           device_type, 4294967295LL, t.stream_id, t.task_id, 4294967295LL};
  // A PyPTO kernel is known to the device by its tilefwk_<n>_mix_aic name only.
  int64_t name = Intern(KernelName(l));
  int64_t info_values[] = {name,
                           id,
                           l.block_num,
                           l.mix_block_num,
                           type,
                           l.pypto >= 0 ? name : Intern(l.op_type),
                           Intern(OrNa(l.in_formats)),
                           Intern(OrNa(l.in_dtypes)),
                           Intern(OrNa(l.in_shapes)),
                           Intern(OrNa(l.out_formats)),
                           Intern(OrNa(l.out_dtypes)),
                           Intern(OrNa(l.out_shapes)),
                           Intern("N/A"),
                           Intern(l.op_state),
                           Intern(l.hf32),
                           0,
                           0};
  try {
    for (int i = 0; i < 11; ++i) task_->bind(i + 1, task_values[i]);
    task_->exec();
    task_->reset();
    for (int i = 0; i < 17; ++i) info_->bind(i + 1, info_values[i]);
    info_->exec();
    info_->reset();
    if (l.pypto < 0) AddPmu(id, *t.result);  // PyPTO's cells are N/A: no rows
    if (first_task_ns_ < 0) first_task_ns_ = t.start_ns;
  } catch (const std::exception& e) {
    error_ = absl::StrCat("msprof db: ", e.what());
  }
}

// The cells op_summary prints for this task, parsed back: the same figures.
void UnifiedDb::AddPmu(int64_t global_task_id, const KernelResult& k) {
  if (pmu_.empty() || !k.has_pmu) return;
  std::string line;
  if (level0_times_) {
    Cann9Level0Cells(pmu_, k, rated_mhz_, line);
  } else {
    AppendPmuCells(pmu_, k, rated_mhz_, line);
  }
  std::vector<std::string> cells = absl::StrSplit(line.substr(1), ',');
  for (size_t i = 0; i < cells.size() && i < pmu_names_.size(); ++i) {
    double v = 0;
    if (!absl::SimpleAtod(cells[i], &v)) continue;  // N/A
    pmu_row_->bind(1, global_task_id);
    pmu_row_->bind(2, pmu_names_[i]);
    pmu_row_->bind(3, v);
    pmu_row_->exec();
    pmu_row_->reset();
  }
}

absl::Status UnifiedDb::Finish(int64_t start_ns, int64_t end_ns, double freq_mhz) {
  if (!error_.empty()) return absl::InternalError(error_);
  try {
    SQLite::Statement str(*db_, "INSERT INTO STRING_IDS VALUES(?, ?)");
    for (const auto& [text, id] : strings_) {
      str.bind(1, id);
      str.bind(2, text);
      str.exec();
      str.reset();
    }
    db_->exec(absl::StrCat("INSERT INTO SESSION_TIME_INFO VALUES(", start_ns, ",", end_ns, ")"));
    int64_t rated = std::llround(soc_.freq_mhz), run = std::llround(freq_mhz);
    db_->exec(absl::StrCat("INSERT INTO AICORE_FREQ VALUES(", device_, ",", start_ns, ",",
                           run < rated && first_task_ns_ > start_ns ? rated : run, ")"));
    if (run < rated && first_task_ns_ > start_ns) {  // the DVFS dip, from the first task on
      db_->exec(absl::StrCat("INSERT INTO AICORE_FREQ VALUES(", device_, ",", first_task_ns_, ",",
                             run, ")"));
    }
    tx_->commit();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("msprof db: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace npuperf::sim
