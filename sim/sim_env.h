#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuperf::sim {

// Reads one environment variable; tests pass a map-backed lookup.
using EnvLookup = std::function<std::optional<std::string>(absl::string_view)>;

// The process environment.
EnvLookup ProcessEnv();

// Everything msprof-sim takes from the environment (docs/simulator.md).
struct SimEnv {
  int logical_device = 0;        // TILE_FWK_DEVICE_ID; Default: 0 (the first visible device)
  int physical_device = 0;       // through ASCEND_RT_VISIBLE_DEVICES when set
  std::string soc;               // MSPROF_SIM_SOC_MAP entry; Default: Ascend910B2
  std::optional<uint64_t> seed;  // MSPROF_SIM_SEED; Default: unset (fresh noise per run)
  double noise = 0.01;           // MSPROF_SIM_NOISE relative sd; Default: 0.01
  double dvfs_mhz = 0;           // MSPROF_SIM_DVFS=<MHz>[:<probability>]; 0 = never
  double dvfs_probability = 0;
  std::string fault_spec;           // MSPROF_SIM_FAULT
  std::filesystem::path state_dir;  // MSPROF_SIM_STATE_DIR; Default: $TMPDIR/msprof-sim-state-<uid>
  std::string conflict_log;         // MSPROF_SIM_CONFLICT_LOG; Default: none
  // MSPROF_SIM_DEVICE_NODES: a directory standing in for /dev, holding a file
  // davinci<N> per device; msprof-sim opens the node of its physical device
  // (read-write) before it runs anything, as the real runtime opens /dev/davinciN.
  // Default: none (no node is checked).
  std::string device_nodes;
  bool block_dim_naming = false;  // MSPROF_SIM_BLOCK_NAMING=dim -> CANN 8.3 "Block Dim"
  // MSPROF_SIM_LAYOUT=cann7: the tree before CANN 8.0 (tables in
  // PROF_*/device_<id>/summary named <table>_<device>_1_1_<ts14>.csv, no
  // mindstudio_profiler_output). Default: cann8.
  bool pre8_layout = false;
  // MSPROF_SIM_LAYOUT=torch_npu: the export torch_npu.profiler writes with
  // tensorboard_trace_handler(<output>): <output>/<host>_<pid>_<ts17>_ascend_pt/
  // holding the PROF_* raw tree, profiler_info_<rank>.json and
  // ASCEND_PROFILER_OUTPUT/{kernel_details,op_statistic,api_statistic}.csv (no
  // task_time, no Device_id column). Default: off.
  bool torch_npu_layout = false;
  // MSPROF_SIM_LAYOUT=cann9: the CANN 8 tree as CANN 9 writes it: task_time
  // and the unified db's TASK.taskType spell KERNEL_AIVEC / KERNEL_MIX_AIC /
  // KERNEL_AICORE ..., and at --task-time=l0 with --ai-core=on op_summary has
  // N/A identity cells, Block Num 0 and every *_time(us) 0.0 while cycles and
  // ratios are filled (TASK_PMU_INFO the same; COMPUTE_TASK_INFO keeps the
  // identity). Default: off (cann8).
  bool cann9_layout = false;
};

// Where the CSV tables of a run go, and the part of their names after the
// table name ("_<ts14>", "_<device>_1_1_<ts14>" in the pre-8.0 layout, "" for
// torch_npu, whose tables sit next to the PROF_* dir in ASCEND_PROFILER_OUTPUT).
std::filesystem::path TablesDir(const SimEnv& env, const std::filesystem::path& prof_dir);
std::string TableSuffix(const SimEnv& env, const std::string& ts14);

absl::StatusOr<SimEnv> ReadSimEnv(const EnvLookup& env);

// Physical id of the device the application uses: TILE_FWK_DEVICE_ID (logical,
// default 0) mapped through ASCEND_RT_VISIBLE_DEVICES when that is set.
absl::StatusOr<int> ResolvePhysicalDevice(const EnvLookup& env, int* logical = nullptr);

}  // namespace npuperf::sim
