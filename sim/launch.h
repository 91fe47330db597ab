#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuperf::sim {

// Task types a runner may launch (op_summary `Task Type`).
enum class TaskType { kAiCore, kAiVectorCore, kMixAic, kMixAiv, kAiCpu };

absl::string_view TaskTypeName(TaskType type);
absl::StatusOr<TaskType> ParseTaskType(absl::string_view name);

// What one kernel does, summed over all its blocks. Bytes and operation counts
// are totals; the device model splits them over blocks. Defaults are "none".
struct Workload {
  double gm_to_ub = 0;   // bytes GM -> UB (vector MTE2)
  double gm_to_l1 = 0;   // bytes GM -> L1 (cube MTE2)
  double ub_to_gm = 0;   // bytes UB -> GM (vector MTE3)
  double l0c_to_gm = 0;  // bytes L0C -> GM/UB (cube FIXPIPE)
  double cube_fp16 = 0;  // multiply-accumulates, fp16/bf16
  double cube_int8 = 0;  // multiply-accumulates, int8
  double vec_fp32 = 0;   // vector element operations by dtype
  double vec_fp16 = 0;
  double vec_int32 = 0;
  double vec_misc = 0;
  double scalar = 0;         // scalar instructions
  double l2_hit = -1;        // L2 read hit fraction; <0: derived from the footprint
  double bank_conflict = 0;  // UB bank-conflict pressure, 0..1 (stalls the vector pipe)
  double skew = 0;           // per-block work spread, 0..1 (block i gets 1 +- skew)
  double icache_miss = -1;   // icache miss rate; <0: derived from scalar share
  double overlap = -1;       // pipe overlap 0..1; <0: 0.75 (double-buffered)
};

// One kernel launch reported by the application through the launch channel.
struct Launch {
  std::string op_name;
  std::string op_type;  // empty: same as op_name
  std::string op_state = "dynamic";
  std::string hf32 = "NO";
  TaskType task_type = TaskType::kAiVectorCore;
  int block_num = 1;
  int mix_block_num = 0;
  // op_summary shape/dtype/format cells; empty means N/A.
  std::string in_shapes, in_dtypes, in_formats;
  std::string out_shapes, out_dtypes, out_formats;
  Workload work;
  int64_t host_ns = 0;  // host wall time of the launch call (0: unknown)
  int count = 1;        // the same launch repeated back to back
  // PyPTO's kernel (`pypto=<n>`, MIX_AIC only; -1: not one). CANN 9 names it
  // twice: op_summary (and op_statistic, kernel_details) `PYPTO_<op>` with
  // kPyptoRows rows per launch, each with the launch's Stream/Task ID, and
  // every PMU cell N/A; task_time, the unified db, the timeline and msprof op
  // `tilefwk_<n>_mix_aic`, one row per launch (docs/simulator.md §2).
  int pypto = -1;
};

// op_summary rows of one PyPTO launch.
inline constexpr int kPyptoRows = 3;

// The name op_summary prints: PYPTO_<op> for a PyPTO kernel, else op_name.
std::string SummaryName(const Launch& l);

// The device kernel's name (task_time kernel_name, the unified db's
// COMPUTE_TASK_INFO name, the timeline, msprof op): tilefwk_<n>_mix_aic for a
// PyPTO kernel, else op_name.
std::string KernelName(const Launch& l);

// Parses one channel line: `launch key=value ...` (see docs/simulator.md).
// Values contain no whitespace. Returns NotFound for blank and `#` lines.
absl::StatusOr<Launch> ParseLaunchLine(absl::string_view line);

// Reads every launch in the channel file, in order. A missing file means the
// application launched nothing it told us about (empty result). Errors name
// the line number.
absl::StatusOr<std::vector<Launch>> ReadLaunchFile(const std::filesystem::path& path);

}  // namespace npuperf::sim
