#include "sim/device_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/pmu_columns.h"

namespace npuperf::sim {
namespace {

constexpr double kScalarSetupCycles = 1100;   // per block: argument load, loop setup
constexpr double kBlockOverheadCycles = 300;  // per block: pipe barriers, not on any pipe
constexpr double kMte1CyclesPerFractal = 0.5;
constexpr double kFixpipeBytesPerCycle = 64;
constexpr double kL0FractalBytes = 512;    // 16x16 fp16
constexpr double kL0cFractalBytes = 1024;  // 16x16 fp32
constexpr double kUbVectorBytes = 256;     // one vector repeat
constexpr double kDefaultOverlap = 0.75;

bool IsMix(TaskType t) { return t == TaskType::kMixAic || t == TaskType::kMixAiv; }

int CubeBlocks(const Launch& l) {
  switch (l.task_type) {
    case TaskType::kAiCore:
    case TaskType::kMixAic: return l.block_num;
    case TaskType::kMixAiv: return l.mix_block_num;
    default: return 0;
  }
}

int VectorBlocks(const Launch& l) {
  switch (l.task_type) {
    case TaskType::kAiVectorCore:
    case TaskType::kMixAiv: return l.block_num;
    case TaskType::kMixAic: return l.mix_block_num;
    default: return 0;
  }
}

bool HasVectorWork(const Workload& w) {
  return w.vec_fp32 + w.vec_fp16 + w.vec_int32 + w.vec_misc + w.gm_to_ub + w.ub_to_gm > 0;
}

bool HasCubeWork(const Workload& w) {
  return w.cube_fp16 + w.cube_int8 + w.gm_to_l1 + w.l0c_to_gm > 0;
}

// Cycles of all pipes of one block run in parallel with partial overlap.
double Combine(const std::array<double, kPipeCount>& pipes, double overlap) {
  double sum = 0, max = 0;
  for (double p : pipes) {
    sum += p;
    max = std::max(max, p);
  }
  return max + (1.0 - overlap) * (sum - max);
}

// Relative work of each block: mean 1, spread `skew`, floor 0.05. The skew is
// the launch's own (uneven tokens per group are in the data, so every run of
// the same launch splits its work the same way): it is drawn from `shape`,
// seeded by the launch. Only the jitter comes from the run's `rng`. Drawing
// the skew per run made a kernel's run-to-run spread several times the
// task noise, and A/A comparisons of skewed kernels then flagged shifts.
std::vector<double> BlockFactors(int blocks, double skew, Rng shape, double jitter, Rng& rng) {
  std::vector<double> f(blocks);
  double mean = 0;
  for (double& x : f) {
    x = skew * (2 * shape.Uniform() - 1) + jitter * rng.Normal();
    mean += x / blocks;
  }
  for (double& x : f) x = std::max(0.05, 1.0 + x - mean);
  return f;
}

// Deals blocks to the least-busy core (lowest id on ties): the hardware's
// dynamic block dispatch. Fills per-core busy cycles; returns the makespan.
double DealBlocks(const std::vector<double>& block_cycles, std::vector<double>& core_cycles) {
  using Slot = std::pair<double, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free_at;
  int cores = static_cast<int>(core_cycles.size());
  for (int c = 0; c < cores; ++c) free_at.push({0.0, c});
  for (double cycles : block_cycles) {
    auto [busy, core] = free_at.top();
    free_at.pop();
    core_cycles[core] = busy + cycles;
    free_at.push({busy + cycles, core});
  }
  return *std::max_element(core_cycles.begin(), core_cycles.end());
}

}  // namespace

absl::Status DeviceModel::Check(const Launch& l) const {
  if (l.task_type == TaskType::kAiCore && HasVectorWork(l.work)) {
    return absl::InvalidArgumentError(absl::StrCat(
        l.op_name, ": AI_CORE tasks run on cube cores only; vector work needs MIX_AIC or MIX_AIV"));
  }
  if (l.task_type == TaskType::kAiVectorCore && HasCubeWork(l.work)) {
    return absl::InvalidArgumentError(
        absl::StrCat(l.op_name, ": AI_VECTOR_CORE tasks cannot carry cube work"));
  }
  return absl::OkStatus();
}

double DeviceModel::L2Hit(const Workload& w) const {
  if (w.l2_hit >= 0) return w.l2_hit;
  double footprint = w.gm_to_ub + w.gm_to_l1;
  double resident = static_cast<double>(soc_.l2_bytes) / 4;
  if (footprint <= resident) return 0.6;
  return std::max(0.05, 0.6 * resident / footprint);
}

KernelResult DeviceModel::Run(const Launch& l, double freq_mhz, Rng& rng) const {
  KernelResult r;
  r.freq_mhz = freq_mhz;
  r.aic.cores = soc_.cube_cores;
  r.aiv.cores = soc_.vector_cores;
  double factor = std::clamp(1.0 + noise_ * rng.Normal(), 1.0 - 3 * noise_, 1.0 + 3 * noise_);
  if (l.task_type == TaskType::kAiCpu) {
    r.has_pmu = false;
    r.duration_us = (18.0 + l.work.scalar / 2000.0) * factor;
    return r;
  }
  int cube_blocks = CubeBlocks(l);
  int vector_blocks = VectorBlocks(l);
  int active = std::min(cube_blocks, soc_.cube_cores) + std::min(vector_blocks, soc_.vector_cores);
  double hbm_per_core = soc_.hbm_bytes_per_s / (freq_mhz * 1e6 * std::max(active, 1));
  if (cube_blocks > 0) RunCores(l, true, cube_blocks, hbm_per_core, factor, rng, r.aic);
  if (vector_blocks > 0) RunCores(l, false, vector_blocks, hbm_per_core, factor, rng, r.aiv);
  // The slowest core, and never less than the formula core time msprof
  // reports, so head overhead (duration - core time) is never negative.
  double makespan = 0;
  for (const CoreStats* c : {&r.aic, &r.aiv}) {
    double formula = CoreTimeUs(*c, 1.0);  // in cycles at 1 MHz
    makespan = std::max({makespan, c->makespan_cycles, formula});
  }
  double head_us = 0.45 + 0.004 * (cube_blocks + vector_blocks) + (IsMix(l.task_type) ? 0.4 : 0);
  r.duration_us = makespan / freq_mhz + head_us * factor;
  return r;
}

void DeviceModel::RunCores(const Launch& l, bool cube, int blocks, double hbm_per_core,
                           double factor, Rng& rng, CoreStats& out) const {
  double link = cube ? soc_.aic_link_bytes_per_cycle : soc_.aiv_link_bytes_per_cycle;
  std::array<double, kPipeCount> whole{};
  AddBlockPipes(l, cube, link, std::min(link, hbm_per_core), out, whole);
  AddTraffic(l, cube, 1.0, out);
  double overlap = l.work.overlap >= 0 ? l.work.overlap : kDefaultOverlap;
  Rng shape(HashName(absl::StrCat(l.op_name, "|", l.in_shapes, "|", l.out_shapes, "|", blocks,
                                  cube ? "|aic" : "|aiv")));
  std::vector<double> f = BlockFactors(blocks, l.work.skew, shape, noise_ / 2, rng);
  std::vector<double> block_cycles(blocks);
  out.blocks = blocks;
  for (int b = 0; b < blocks; ++b) {
    std::array<double, kPipeCount> pipes{};
    for (int p = 0; p < kPipeCount; ++p) pipes[p] = whole[p] / blocks * f[b] * factor;
    pipes[kPipeScalar] += kScalarSetupCycles;
    block_cycles[b] = Combine(pipes, overlap) + kBlockOverheadCycles;
    for (int p = 0; p < kPipeCount; ++p) out.pipe[p] += pipes[p];
    out.total_cycles += block_cycles[b];
  }
  for (double* c : {&out.mac_fp16, &out.mac_int8, &out.vec_fp32, &out.vec_fp16, &out.vec_int32,
                    &out.vec_misc, &out.bank_stall, &out.bankgroup_stall, &out.resc_stall}) {
    *c *= factor;
  }
  out.icache_req += 64.0 * blocks;
  out.icache_miss += 64.0 * blocks * 0.02;
  out.core_cycles.assign(out.cores, 0.0);
  out.makespan_cycles = DealBlocks(block_cycles, out.core_cycles);
  out.block_cycles = std::move(block_cycles);
}

void DeviceModel::AddBlockPipes(const Launch& l, bool cube, double link_hit, double link_miss,
                                CoreStats& out, std::array<double, kPipeCount>& pipes) const {
  const Workload& w = l.work;
  double hit = L2Hit(w);
  // Reads and writes stream at the same time and share the HBM slice of this core.
  double read = cube ? w.gm_to_l1 : w.gm_to_ub;
  double write = cube ? w.l0c_to_gm : w.ub_to_gm;
  double both = std::max(read + write, 1.0);
  auto mem = [&](double bytes) {
    double slice = std::min(link_hit, link_miss * std::max(bytes / both, 0.05));
    return bytes * hit / link_hit + bytes * (1 - hit) / slice;
  };
  double scalar_share = IsMix(l.task_type) ? 0.5 : 1.0;
  double instr = 0;
  if (cube) {
    out.mac_fp16 = out.cube_fp16_instr = w.cube_fp16 / soc_.cube_fp16_macs_per_cycle;
    out.mac_int8 = out.cube_int8_instr = w.cube_int8 / soc_.cube_int8_macs_per_cycle;
    pipes[kPipeMac] = out.mac_fp16 + out.mac_int8;
    pipes[kPipeMte1] = pipes[kPipeMac] * kMte1CyclesPerFractal;
    pipes[kPipeMte2] = mem(w.gm_to_l1);
    pipes[kPipeFixpipe] = w.l0c_to_gm / kFixpipeBytesPerCycle;
    instr = pipes[kPipeMac];
  } else {
    instr = AddVectorWork(w, out, pipes);
    pipes[kPipeMte2] = mem(w.gm_to_ub);
    pipes[kPipeMte3] = mem(w.ub_to_gm);
  }
  double scalar = w.scalar * scalar_share;
  pipes[kPipeScalar] = scalar + 0.02 * instr;
  double rate = w.icache_miss >= 0 ? w.icache_miss
                                   : std::min(0.3, 0.004 + 0.25 * scalar / (scalar + instr + 1));
  out.icache_req = (scalar + instr) / 8;
  out.icache_miss = out.icache_req * rate;
}

double DeviceModel::AddVectorWork(const Workload& w, CoreStats& out,
                                  std::array<double, kPipeCount>& pipes) const {
  out.vec_fp32 = out.vec_fp32_instr = w.vec_fp32 / soc_.vec_fp32_per_cycle;
  out.vec_fp16 = out.vec_fp16_instr = w.vec_fp16 / soc_.vec_fp16_per_cycle;
  out.vec_int32 = out.vec_int32_instr = w.vec_int32 / soc_.vec_int32_per_cycle;
  out.vec_misc = out.vec_misc_instr = w.vec_misc / soc_.vec_misc_per_cycle;
  double base = out.vec_fp32 + out.vec_fp16 + out.vec_int32 + out.vec_misc;
  out.bank_stall = base * 0.8 * w.bank_conflict;
  out.bankgroup_stall = out.bank_stall * 0.35;
  out.resc_stall = base * (0.4 + 1.5 * w.bank_conflict);
  pipes[kPipeVec] = base + out.bank_stall;
  return base;
}

void DeviceModel::AddTraffic(const Launch& l, bool cube, double share, CoreStats& out) const {
  const Workload& w = l.work;
  auto& b = out.bytes;
  double hit = L2Hit(w);
  double in = (cube ? w.gm_to_l1 : w.gm_to_ub) * share;
  double outb = (cube ? w.l0c_to_gm : w.ub_to_gm) * share;
  double scalar = w.scalar * (IsMix(l.task_type) ? 0.5 : 1.0) * share;
  if (cube && IsMix(l.task_type)) {
    b[kFixp2Ub] = outb / 2;
    outb /= 2;
  }
  b[cube ? kGmToL1 : kGmToUb] = in;
  b[cube ? kL0cToGm : kUbToGm] = outb;
  b[kL2Read] = in;
  b[kL2ReadHit] = in * hit;
  b[kL2ReadMiss] = in * (1 - hit);
  b[kMainMemRead] = in * (1 - hit);
  b[kL2Write] = b[kMainMemWrite] = outb;
  b[kL2WriteHit] = outb * hit;
  b[kL2WriteMiss] = outb * (1 - hit);
  b[kUbReadScalar] = scalar * 0.25 * 8;
  b[kUbWriteScalar] = scalar * 0.10 * 8;
  if (cube) {
    double fractals = out.cube_fp16_instr + out.cube_int8_instr;
    b[kL1Write] = in;
    b[kL1Read] = fractals * kMte1CyclesPerFractal * 256;
    b[kL0aWrite] = b[kL0bWrite] = b[kL1Read] / 2;
    b[kL0aRead] = b[kL0bRead] = fractals * kL0FractalBytes;
    b[kL0cRead] = b[kL0cWrite] = fractals * kL0cFractalBytes;
    b[kL0cToL1] = 0;
  } else {
    double instr =
        out.vec_fp32_instr + out.vec_fp16_instr + out.vec_int32_instr + out.vec_misc_instr;
    b[kUbReadVec] = instr * kUbVectorBytes * 2;
    b[kUbWriteVec] = instr * kUbVectorBytes;
  }
}

}  // namespace npuperf::sim

namespace npuperf::sim {

void AddScaled(CoreStats& dst, const CoreStats& src, double share) {
  dst.total_cycles += src.total_cycles * share;
  for (int p = 0; p < kPipeCount; ++p) dst.pipe[p] += src.pipe[p] * share;
  for (int t = 0; t < kTrafficCount; ++t) dst.bytes[t] += src.bytes[t] * share;
  double CoreStats::*const fields[] = {
      &CoreStats::mac_fp16,        &CoreStats::mac_int8,        &CoreStats::vec_fp32,
      &CoreStats::vec_fp16,        &CoreStats::vec_int32,       &CoreStats::vec_misc,
      &CoreStats::cube_fp16_instr, &CoreStats::cube_int8_instr, &CoreStats::vec_fp32_instr,
      &CoreStats::vec_fp16_instr,  &CoreStats::vec_int32_instr, &CoreStats::vec_misc_instr,
      &CoreStats::icache_req,      &CoreStats::icache_miss,     &CoreStats::bankgroup_stall,
      &CoreStats::bank_stall,      &CoreStats::resc_stall};
  for (auto f : fields) dst.*f += src.*f * share;
}

}  // namespace npuperf::sim
