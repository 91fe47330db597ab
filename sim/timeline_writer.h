#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "sim/report_writer.h"

namespace SQLite {
class Database;
class Statement;
}  // namespace SQLite

namespace npuperf::sim {

// How the instruction events of a task's tiles are laid out on each lane.
enum class TimelineLayout {
  kFromWorkload,  // pipelined when the launch's pipe overlap is > 0, else serial
  kPipelined,     // fault timeline:pipelined: compute of a tile overlaps its load (same lane)
  kSerial,        // fault timeline:serial: load, compute, store one after the other
};

struct TimelineConfig {
  std::filesystem::path json;    // mindstudio_profiler_output/msprof_<ts14>.json
  std::filesystem::path biu_db;  // device_<id>/sqlite/biu_perf.db
  int device = 0;
  TimelineLayout layout = TimelineLayout::kFromWorkload;
};

// The instruction timeline of an --instr-profiling=on run (msprof-output.md
// note (d), reference-scripts.md §2.10): a Chrome trace with each task as a
// `ph:"X"` event named by its op on the "Ascend Hardware" stream lane, and, on
// BIU lanes named by thread_name metadata `Group<N>-aiv<k>` / `Group<N>-aic<k>`,
// instruction events (MTE2, VEC, MTE3, MTE1, CUBE, FIXP, SCALAR) with decimal
// string ts/dur in µs and Core Type / Block Id / Checkpoint Info args; the same
// events in biu_perf.db (BiuInstrStatus). Each lane's busy time per pipe is the
// device model's pipe ratio times the task's duration, so the timeline agrees
// with op_summary's ratios. Beside biu_perf.db, ascend_task.db holds one
// AscendTask row per task (its stream, task id, start and duration in ns).
// Streams as tasks arrive. Not thread-safe.
class TimelineWriter {
 public:
  explicit TimelineWriter(TimelineConfig config);
  ~TimelineWriter();
  TimelineWriter(const TimelineWriter&) = delete;
  TimelineWriter& operator=(const TimelineWriter&) = delete;

  absl::Status Open();
  void AddTask(const TaskRecord& task);
  // Closes the trace and commits the db; the first write error, if any.
  absl::Status Finish();

 private:
  struct Lane;
  void WriteLaneMetadata(const Lane& lane);
  void AddLaneEvents(const TaskRecord& task, const Lane& lane, bool pipelined);
  void Event(const Lane& lane, const char* name, int64_t start_ns, int64_t dur_ns, int tile);

  TimelineConfig config_;
  std::FILE* out_ = nullptr;
  std::unique_ptr<SQLite::Database> db_;
  std::unique_ptr<SQLite::Statement> insert_;
  // device_<id>/sqlite/ascend_task.db beside biu_perf.db: one AscendTask row
  // per task (msprof-output.md §5.3, the task timing the archive keeps).
  std::unique_ptr<SQLite::Database> task_db_;
  std::unique_ptr<SQLite::Statement> task_insert_;
  bool first_ = true;
  uint64_t lanes_written_ = 0;  // bit per lane index whose metadata is out
  absl::Status status_;
};

}  // namespace npuperf::sim
