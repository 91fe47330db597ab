#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

// The instruction timeline of one target kernel (reference-scripts.md §2.10):
// msprof's Chrome-trace export of an --instr-profiling=on run
// (mindstudio_profiler_output/msprof_<ts>.json), read streaming (trace_stream.h),
// reduced to the reference's `timeline_evidence`: the target's window found
// exactly and uniquely, the BIU Group lanes, pipe classes, event counts and the
// same-lane compute+movement overlap deduplicated per lane. Timestamps are
// decimal microsecond strings (~1.8e15) parsed into exact integer nanoseconds,
// never binary floats. Pipeline overlap is never `proven` by the timeline
// alone. Pure functions; thread-safe.
namespace npuperf::evidence {

// A decimal microsecond value ("1780000000000000.123", or a JSON number such as
// 12.5 or 1.25e1) as exact integer nanoseconds. InvalidArgument (naming
// `field`) for anything else: a sign, a fraction finer than 1 ns, a value
// beyond int64 nanoseconds.
absl::StatusOr<int64_t> ParseMicrosAsNanos(std::string_view text, std::string_view field);

// Nanoseconds as a decimal microsecond string with 3 decimals ("1.500",
// "-0.250").
std::string FormatNanosAsMicros(int64_t ns);

enum class PipeClass { kCompute, kMovement, kScalar, kWait, kUnknown };
constexpr int kPipeClassCount = 5;
std::string_view PipeClassName(PipeClass c);

// The reference's naming rule: MTE1/MTE2/MTE3/FIX* movement; VEC*/CUBE*/MAC*/M
// compute; SU/SCALAR* scalar; WAIT*/BARRIER*/SYNC* wait; anything else unknown.
PipeClass ClassifyInstruction(std::string_view name);

struct TimelineOptions {
  // Exact name of the target task event (op_summary Op Name). Required.
  std::string op_name;
  // Instruction events listed in TimelineEvidence::events (earliest first).
  // Default: 1000. Counts and overlap always cover every event.
  size_t max_listed_events = 1000;
  // Events held per lane to put a locally unordered trace in start order.
  // Default: 4096. An event older than the window is counted as late.
  size_t reorder_window = 4096;
  // Bytes per read. Default: 1 MiB.
  size_t buffer_bytes = 1 << 20;
};

// A lane (pid, tid) named by thread_name metadata.
struct TimelineLane {
  std::string pid, tid, name;
};

struct LaneOverlap {
  TimelineLane lane;
  int64_t raw_event_pairs = 0;  // compute/movement event pairs whose intervals intersect
  int64_t overlap_ns = 0;       // |union(compute) ∩ union(movement)| inside the window
  int64_t events = 0;
  int64_t late_events = 0;  // out of start order beyond the reorder window (not in overlap)
};

struct TimelineEvent {
  std::string lane, pid, tid, instruction;
  PipeClass pipe_class = PipeClass::kUnknown;
  int64_t start_offset_ns = 0;  // from the target's start
  int64_t duration_ns = 0;
  std::vector<std::pair<std::string, std::string>> args;
};

struct TimelineEvidence {
  std::string target_op_name;
  // unique_exact_target_window, target_not_found, duplicate_target_window.
  std::string attribution_status;
  int target_candidates = 0;  // task events named exactly the target
  std::optional<TimelineLane> target_lane;
  int64_t target_start_ns = 0, target_duration_ns = 0;
  std::vector<TimelineLane> monitored_lanes;                // Group* lanes, (pid, tid) order
  std::map<std::string, int64_t> pipe_event_counts;         // by PipeClassName
  std::map<std::string, int64_t> instruction_event_counts;  // by instruction name
  std::vector<LaneOverlap> lanes;                           // monitored lanes
  int64_t raw_event_pairs = 0;
  int64_t overlap_ns = 0;             // sum over lanes of the per-lane deduplicated overlap
  std::vector<TimelineEvent> events;  // at most max_listed_events, earliest first
  int64_t events_in_window = 0;
  int64_t events_outside_window = 0;
  int64_t late_events = 0;
  // requires_tile_dag_correlation with a unique window and Group lanes, else
  // unverified; never proven.
  std::string pipeline_evidence_status;
  std::vector<std::string> limitations;
  // The file read, its size, and the passes made (2 when instruction events
  // precede the target event).
  std::filesystem::path trace;
  uint64_t trace_bytes = 0;
  uint64_t trace_events = 0;
  int passes = 0;
};

// The newest msprof_<ts>.json under `input` (a trace file itself, a PROF_*
// directory, its mindstudio_profiler_output, or a directory holding one
// PROF_*). NotFound naming `input` when there is none; FailedPrecondition when
// several PROF_* hold one.
absl::StatusOr<std::filesystem::path> FindTimelineTrace(const std::filesystem::path& input);

// Reads `trace` (streaming) into the timeline evidence of options.op_name. A
// missing or duplicated target is a status in the result, not an error;
// errors are an unreadable or malformed file (InvalidArgument naming the byte
// offset) or a malformed ts/dur (naming the event index).
absl::StatusOr<TimelineEvidence> SummarizeTimeline(const std::filesystem::path& trace,
                                                   const TimelineOptions& options);

// timeline_evidence.json (schema_version 1; docs/evidence.md "Timeline").
std::string TimelineToJson(const TimelineEvidence& t);

// The target window as a Chrome trace that Perfetto and chrome://tracing load
// as it is: the target task and the listed instruction events ("X"), each
// lane a thread with its thread_name, integer pids and tids, and `ts` in
// microseconds from the window's start as JSON numbers (exact to the ns; the
// absolute start is otherData.time_origin_us, a decimal string). Ascend's own
// traces carry absolute string timestamps near 1.8e15 us and ids beyond 2^53,
// which trace viewers nest wrongly.
std::string TimelineToChromeTrace(const TimelineEvidence& t);

// A few lines for a terminal.
std::string TimelineToText(const TimelineEvidence& t);

// What an --instr-profiling=on capture keeps beside its trace
// (reference-scripts.md §5.7): exactly one device_<id> directory in the PROF_*
// directory, of the expected physical id, with a regular sqlite/biu_perf.db;
// sqlite/ascend_task.db (task timing) when msprof wrote it.
struct TimelineDeviceFiles {
  std::filesystem::path prof_dir;
  std::filesystem::path biu_perf_db;
  std::filesystem::path ascend_task_db;  // empty when absent
  // Rows over every table of each db; -1 when absent.
  int64_t biu_rows = -1;
  int64_t ascend_task_rows = -1;
};

// `input` is a PROF_* directory or a directory holding exactly one.
// FailedPrecondition naming what is wrong: no PROF_*, several, no device_*
// directory, several, another id than device_id, no regular biu_perf.db, a
// db SQLite cannot read. Reads files only; thread-safe.
absl::StatusOr<TimelineDeviceFiles> FindTimelineDeviceFiles(const std::filesystem::path& input,
                                                            int device_id);

}  // namespace npuperf::evidence
