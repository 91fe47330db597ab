#pragma once

#include <filesystem>
#include <vector>

#include "absl/status/status.h"
#include "sim/device_model.h"
#include "sim/launch.h"
#include "sim/pmu_columns.h"
#include "sim/soc.h"

namespace npuperf::sim {

// Where and what an msprof op run writes.
struct OpprofConfig {
  std::filesystem::path dir;        // the OPPROF_<ts14>_<16 upper> directory
  std::vector<MetricGroup> groups;  // one <Metric>.csv each
  SocSpec soc;
  int device = 0;       // Device Id
  double freq_mhz = 0;  // the clock the kernel ran at (Current Freq)
};

// Writes msprof op's flattened layout (msprof-output.md §2.7 / §3.8) for one
// launch: OpBasicInfo.csv (Op Name, Op Type vector/cube/mix, Task Duration,
// Block Dim, Mix Block Dim, Device Id, Pid, Current Freq, Rated Freq),
// dump/op_basic_info.txt (Run Soc Version) and per group a per-block CSV
// (block_id, sub_block_id cube0 / vector0 / vector1, the group's op_summary
// PMU columns of that core side under msprof op's names, `NA` for the other
// side, a trailing comma on every line). Each block's row is the task's PMU
// counts scaled to that block's share of its busy cycles, so the block mean of
// aiv_time(us) is op_summary's aiv_time(us) of the same launch.
absl::Status WriteOpprof(const OpprofConfig& config, const Launch& launch,
                         const KernelResult& result);

}  // namespace npuperf::sim
