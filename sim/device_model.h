#pragma once

#include <array>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/launch.h"
#include "sim/rng.h"
#include "sim/soc.h"

namespace npuperf::sim {

// Pipes whose busy cycles the PMU reports.
enum Pipe {
  kPipeMac,
  kPipeScalar,
  kPipeMte1,
  kPipeMte2,
  kPipeMte3,
  kPipeFixpipe,
  kPipeVec,
  kPipeCount
};

// Bytes moved, by path, summed over the blocks of one core type.
enum Traffic {
  kGmToUb,
  kGmToL1,
  kUbToGm,
  kL0cToGm,
  kL0cToL1,
  kFixp2Ub,
  kMainMemRead,
  kMainMemWrite,
  kL2Read,
  kL2Write,
  kL2ReadHit,
  kL2ReadMiss,
  kL2WriteHit,
  kL2WriteMiss,
  kL1Read,
  kL1Write,
  kL0aRead,
  kL0aWrite,
  kL0bRead,
  kL0bWrite,
  kL0cRead,
  kL0cWrite,
  kUbReadVec,
  kUbWriteVec,
  kUbReadScalar,
  kUbWriteScalar,
  kTrafficCount
};

// What the PMU of one core type (AIC or AIV) saw for one task, summed over its
// blocks. All cycle counts are at the clock the task ran at.
struct CoreStats {
  int blocks = 0;                         // blocks of this core type (0: not used by the task)
  int cores = 0;                          // cores of this type on the chip
  double total_cycles = 0;                // busy cycles summed over blocks (task_cyc)
  std::array<double, kPipeCount> pipe{};  // busy cycles per pipe (each <= total)
  double mac_fp16 = 0, mac_int8 = 0;      // cube cycles by dtype
  double vec_fp32 = 0, vec_fp16 = 0, vec_int32 = 0, vec_misc = 0;  // vector cycles by dtype
  double cube_fp16_instr = 0, cube_int8_instr = 0;                 // fractal instructions
  double vec_fp32_instr = 0, vec_fp16_instr = 0, vec_int32_instr = 0, vec_misc_instr = 0;
  double icache_req = 0, icache_miss = 0;
  double bankgroup_stall = 0, bank_stall = 0, resc_stall = 0;  // conflict cycles
  std::array<double, kTrafficCount> bytes{};
  std::vector<double> core_cycles;   // busy cycles per physical core (size = cores)
  std::vector<double> block_cycles;  // busy cycles per block (size = blocks; msprof op rows)
  double makespan_cycles = 0;        // busiest core
};

// One simulated task execution.
struct KernelResult {
  double freq_mhz = 0;     // clock the task ran at (DVFS-lowered when dipped)
  double duration_us = 0;  // Task Duration(us)
  bool has_pmu = true;     // false for AI_CPU tasks
  CoreStats aic;
  CoreStats aiv;
};

// Turns a launch into cycles, bytes and a duration on one SoC: work is split
// over blocks (with skew), blocks are dealt to the least-busy core of their
// type (so partial last waves leave cores idle), pipes overlap per the
// workload, and memory pipes are limited by the per-core link and by the
// device's shared HBM bandwidth. Stateless and thread-compatible.
class DeviceModel {
 public:
  // `noise` is the relative standard deviation of per-task run-to-run noise.
  DeviceModel(SocSpec soc, double noise) : soc_(std::move(soc)), noise_(noise) {}

  const SocSpec& soc() const { return soc_; }

  // Checks that the launch fits the SoC's core types (e.g. no vector work on
  // an AI_CORE task), before anything runs.
  absl::Status Check(const Launch& launch) const;

  // Simulates one execution at `freq_mhz`; `rng` supplies the run-to-run noise
  // (the per-block skew is the launch's own, the same on every run).
  KernelResult Run(const Launch& launch, double freq_mhz, Rng& rng) const;

 private:
  void RunCores(const Launch& launch, bool cube, int blocks, double hbm_per_core, double factor,
                Rng& rng, CoreStats& out) const;
  void AddBlockPipes(const Launch& launch, bool cube, double link_hit, double link_miss,
                     CoreStats& out, std::array<double, kPipeCount>& pipes) const;
  // The vector unit's instruction cycles and bank stalls of one block; sets the VEC pipe and
  // returns the instruction cycles.
  double AddVectorWork(const Workload& w, CoreStats& out,
                       std::array<double, kPipeCount>& pipes) const;
  void AddTraffic(const Launch& launch, bool cube, double share, CoreStats& out) const;
  double L2Hit(const Workload& w) const;

  SocSpec soc_;
  double noise_;
};

}  // namespace npuperf::sim

namespace npuperf::sim {

// dst += share * src, field by field (blocks/cores/core_cycles excepted).
// Used to attribute a task's PMU counts to the cores that ran it.
void AddScaled(CoreStats& dst, const CoreStats& src, double share);

}  // namespace npuperf::sim
