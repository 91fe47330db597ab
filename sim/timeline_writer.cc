#include "sim/timeline_writer.h"

#include <algorithm>
#include <cmath>
#include <system_error>

#include "SQLiteCpp/SQLiteCpp.h"
#include "absl/strings/str_cat.h"

namespace npuperf::sim {
namespace {

constexpr int kHardwarePid = 1000;  // "Ascend Hardware": one lane per stream
constexpr int kBiuPid = 2000;       // "BIU Perf": the Group lanes
constexpr int kMaxGroups = 4;       // monitored (sampled) groups per core type
constexpr int64_t kTileNs = 2000;   // about one tile per 2 us of lane time

std::string Micros(int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return buf;
}

double Ratio(const CoreStats& c, Pipe p) {
  if (c.total_cycles <= 0) return 0;
  return std::clamp(c.pipe[p] / c.total_cycles, 0.0, 1.0);
}

}  // namespace

// One BIU lane: a core of a monitored group.
struct TimelineWriter::Lane {
  int group = 0;
  bool cube = false;
  int k = 0;  // aiv0/aiv1, aic0
  int block = 0;
  int Tid() const { return group * 3 + (cube ? 2 : k); }
  std::string Name() const { return absl::StrCat("Group", group, cube ? "-aic" : "-aiv", k); }
};

TimelineWriter::TimelineWriter(TimelineConfig config) : config_(std::move(config)) {}

TimelineWriter::~TimelineWriter() {
  if (out_ != nullptr) std::fclose(out_);
}

absl::Status TimelineWriter::Open() {
  std::error_code ec;
  std::filesystem::create_directories(config_.json.parent_path(), ec);
  std::filesystem::create_directories(config_.biu_db.parent_path(), ec);
  out_ = std::fopen(config_.json.c_str(), "wb");
  if (out_ == nullptr) return absl::InternalError("cannot write " + config_.json.string());
  std::fprintf(out_,
               "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":"
               "\"Ascend Hardware\"}},\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
               "\"tid\":0,\"args\":{\"name\":\"BIU Perf\"}}",
               kHardwarePid, kBiuPid);
  try {
    db_ = std::make_unique<SQLite::Database>(config_.biu_db.string(),
                                             SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db_->exec(
        "DROP TABLE IF EXISTS BiuInstrStatus; CREATE TABLE BiuInstrStatus (group_id INTEGER, "
        "core_type TEXT, block_id INTEGER, instruction TEXT, timestamp INTEGER, duration "
        "INTEGER, checkpoint_info INTEGER); BEGIN");
    insert_ = std::make_unique<SQLite::Statement>(
        *db_, "INSERT INTO BiuInstrStatus VALUES (?, ?, ?, ?, ?, ?, ?)");
    task_db_ = std::make_unique<SQLite::Database>(
        (config_.biu_db.parent_path() / "ascend_task.db").string(),
        SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    task_db_->exec(
        "DROP TABLE IF EXISTS AscendTask; CREATE TABLE AscendTask (model_id INTEGER, index_id "
        "INTEGER, stream_id INTEGER, task_id INTEGER, context_id INTEGER, batch_id INTEGER, "
        "start_time INTEGER, duration REAL, host_task_type TEXT, device_task_type TEXT, "
        "connection_id INTEGER); BEGIN");
    task_insert_ = std::make_unique<SQLite::Statement>(
        *task_db_,
        "INSERT INTO AscendTask VALUES (4294967295, 0, ?, ?, 4294967295, 0, ?, ?, ?, ?, ?)");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("biu_perf.db: ", e.what()));
  }
  return absl::OkStatus();
}

void TimelineWriter::WriteLaneMetadata(const Lane& lane) {
  const uint64_t bit = uint64_t{1} << lane.Tid();
  if ((lanes_written_ & bit) != 0) return;
  lanes_written_ |= bit;
  std::fprintf(out_,
               ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{"
               "\"name\":\"%s\"}}",
               kBiuPid, lane.Tid(), lane.Name().c_str());
}

void TimelineWriter::Event(const Lane& lane, const char* name, int64_t start_ns, int64_t dur_ns,
                           int tile) {
  if (dur_ns <= 0) return;
  std::fprintf(out_,
               ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":\"%s\",\"dur\":"
               "\"%s\",\"args\":{\"Core Type\":\"%s\",\"Block Id\":\"%d\",\"Checkpoint "
               "Info\":\"%d\"}}",
               name, kBiuPid, lane.Tid(), Micros(start_ns).c_str(), Micros(dur_ns).c_str(),
               lane.cube ? "AIC" : "AIV", lane.block, tile);
  if (!status_.ok()) return;
  try {
    insert_->bind(1, lane.group);
    insert_->bind(2, lane.cube ? "AIC" : "AIV");
    insert_->bind(3, lane.block);
    insert_->bind(4, name);
    insert_->bind(5, static_cast<int64_t>(start_ns));
    insert_->bind(6, static_cast<int64_t>(dur_ns));
    insert_->bind(7, tile);
    insert_->exec();
    insert_->reset();
  } catch (const std::exception& e) {
    status_ = absl::InternalError(absl::StrCat("biu_perf.db: ", e.what()));
  }
}

// Tiles back to back over the lane's busy time; per tile each pipe is busy
// its ratio of the tile. Pipelined: compute starts once (1 - overlap) of the
// tile's load is in, the store follows compute, the scalar unit runs from the
// tile's start. Serial: load, compute, store, scalar one after the other
// (scaled to fit the tile when the model's ratios add up to more than 1).
void TimelineWriter::AddLaneEvents(const TaskRecord& task, const Lane& lane, bool pipelined) {
  const KernelResult& r = *task.result;
  const CoreStats& c = lane.cube ? r.aic : r.aiv;
  const int64_t task_ns = std::llround(r.duration_us * 1000.0);
  int64_t span = r.freq_mhz > 0 ? std::llround(c.makespan_cycles / r.freq_mhz * 1000.0) : 0;
  span = span <= 0 ? task_ns : std::min(span, task_ns);
  const int64_t tiles = std::clamp<int64_t>(span / kTileNs, 2, 32);
  const double tile = static_cast<double>(span) / static_cast<double>(tiles);
  const double in = Ratio(c, kPipeMte2), mte1 = lane.cube ? Ratio(c, kPipeMte1) : 0;
  const double comp = Ratio(c, lane.cube ? kPipeMac : kPipeVec);
  const double out = Ratio(c, lane.cube ? kPipeFixpipe : kPipeMte3), sc = Ratio(c, kPipeScalar);
  const double overlap = task.launch->work.overlap < 0 ? 0.75 : task.launch->work.overlap;
  const double fit =
      pipelined ? 1.0 : std::min(1.0, 1.0 / std::max(1e-9, in + mte1 + comp + out + sc));
  const int64_t end = task.start_ns + task_ns;
  auto emit = [&](const char* name, double at, double len, int k) {
    // Absolute offsets rounded once, so back-to-back events touch, never overlap.
    const int64_t s = task.start_ns + std::llround(at);
    const int64_t e = std::min<int64_t>(end, task.start_ns + std::llround(at + len));
    Event(lane, name, s, e - s, k);
  };
  for (int64_t k = 0; k < tiles; ++k) {
    const double t = static_cast<double>(k) * tile;
    const int ki = static_cast<int>(k);
    emit("MTE2", t, in * tile * fit, ki);
    double at = t + in * tile * fit;
    if (lane.cube) emit("MTE1", at, mte1 * tile * fit, ki);
    at += mte1 * tile * fit;
    if (pipelined) at = t + (1.0 - std::clamp(overlap, 0.0, 1.0)) * (in + mte1) * tile;
    emit(lane.cube ? "CUBE" : "VEC", at, comp * tile * fit, ki);
    at += comp * tile * fit;
    emit(lane.cube ? "FIXP" : "MTE3", at, out * tile * fit, ki);
    emit("SCALAR", pipelined ? t : at + out * tile * fit, sc * tile * fit, ki);
  }
}

void TimelineWriter::AddTask(const TaskRecord& task) {
  if (out_ == nullptr) return;
  const KernelResult& r = *task.result;
  const Launch& l = *task.launch;
  if (first_) {
    std::fprintf(out_,
                 ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{"
                 "\"name\":\"Stream %d\"}}",
                 kHardwarePid, task.stream_id, task.stream_id);
    first_ = false;
  }
  std::fprintf(out_,
               ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":\"%s\",\"dur\":"
               "\"%s\",\"args\":{\"Task Type\":\"%s\",\"Stream Id\":%d,\"Task Id\":%d,\"Block "
               "Num\":%d}}",
               KernelName(l).c_str(), kHardwarePid, task.stream_id, Micros(task.start_ns).c_str(),
               Micros(std::llround(r.duration_us * 1000.0)).c_str(),
               std::string(TaskTypeName(l.task_type)).c_str(), task.stream_id, task.task_id,
               l.block_num);
  if (status_.ok()) {
    try {
      task_insert_->bind(1, task.stream_id);
      task_insert_->bind(2, task.task_id);
      task_insert_->bind(3, static_cast<int64_t>(task.start_ns));
      task_insert_->bind(4, r.duration_us * 1000.0);
      task_insert_->bind(5, "KERNEL_AICORE");
      task_insert_->bind(6, std::string(TaskTypeName(l.task_type)));
      task_insert_->bind(7, task.task_id);
      task_insert_->exec();
      task_insert_->reset();
    } catch (const std::exception& e) {
      status_ = absl::InternalError(absl::StrCat("ascend_task.db: ", e.what()));
    }
  }
  if (!r.has_pmu) return;
  const bool pipelined = config_.layout == TimelineLayout::kPipelined ||
                         (config_.layout == TimelineLayout::kFromWorkload && l.work.overlap != 0);
  for (const bool cube : {false, true}) {
    const CoreStats& c = cube ? r.aic : r.aiv;
    const int per_group = cube ? 1 : 2;
    const int groups = std::min(kMaxGroups, (c.blocks + per_group - 1) / per_group);
    for (int g = 0; g < groups; ++g) {
      for (int k = 0; k < per_group && g * per_group + k < c.blocks; ++k) {
        const Lane lane{g, cube, k, g * per_group + k};
        WriteLaneMetadata(lane);
        AddLaneEvents(task, lane, pipelined);
      }
    }
  }
}

absl::Status TimelineWriter::Finish() {
  if (out_ == nullptr) return absl::InternalError("timeline writer was not opened");
  std::fprintf(out_, "\n]\n");
  const bool ok = std::fclose(out_) == 0;
  out_ = nullptr;
  if (!ok && status_.ok()) status_ = absl::InternalError("cannot write " + config_.json.string());
  if (status_.ok()) {
    try {
      insert_.reset();
      db_->exec("COMMIT");
      task_insert_.reset();
      task_db_->exec("COMMIT");
    } catch (const std::exception& e) {
      status_ = absl::InternalError(absl::StrCat("biu_perf.db: ", e.what()));
    }
  }
  return status_;
}

}  // namespace npuperf::sim
