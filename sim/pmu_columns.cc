#include "sim/pmu_columns.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/format.h"

namespace npuperf::sim {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kL2LineBytes = 128.0;

enum class Kind { kCycles, kCoreTime, kFloat };
using MetricFn = double (*)(const CoreStats&, double);

struct Metric {
  absl::string_view name;
  Kind kind;
  MetricFn fn;
};

double Ratio(const CoreStats& c, double cycles) {
  return c.total_cycles > 0 ? cycles / c.total_cycles : 0;
}
double Bw(double bytes, double t_us) { return t_us > 0 ? bytes / t_us * 1e6 / kGiB : 0; }
double Lines(double bytes) { return std::round(bytes / kL2LineBytes); }

#define PIPE(name, p)                                                                              \
  {name "_ratio", Kind::kFloat, [](const CoreStats& c, double) { return Ratio(c, c.pipe[p]); }}, { \
    name "_time", Kind::kFloat,                                                                    \
        [](const CoreStats& c, double t) { return Ratio(c, c.pipe[p]) * t; }                       \
  }
#define BW(name, expr)                                     \
  {                                                        \
    name, Kind::kFloat, [](const CoreStats& c, double t) { \
      const auto& b = c.bytes;                             \
      (void)b;                                             \
      return Bw(expr, t);                                  \
    }                                                      \
  }
#define VAL(name, expr)                                    \
  {                                                        \
    name, Kind::kFloat, [](const CoreStats& c, double t) { \
      const auto& b = c.bytes;                             \
      (void)b;                                             \
      (void)t;                                             \
      return static_cast<double>(expr);                    \
    }                                                      \
  }

// Core time, cycles, pipe ratios and arithmetic figures, in table order.
std::vector<Metric> ComputeMetrics() {
  return {
      {"time", Kind::kCoreTime, [](const CoreStats&, double t) { return t; }},
      {"total_cycles", Kind::kCycles, [](const CoreStats& c, double) { return c.total_cycles; }},
      PIPE("mac", kPipeMac),
      PIPE("scalar", kPipeScalar),
      PIPE("mte1", kPipeMte1),
      PIPE("mte2", kPipeMte2),
      PIPE("mte3", kPipeMte3),
      PIPE("fixpipe", kPipeFixpipe),
      PIPE("vec", kPipeVec),
      VAL("icache_miss_rate", c.icache_req > 0 ? c.icache_miss / c.icache_req : 0),
      VAL("mac_fp16_ratio", Ratio(c, c.mac_fp16)),
      VAL("mac_int8_ratio", Ratio(c, c.mac_int8)),
      VAL("cube_fops", c.cube_fp16_instr * 16 * 16 * 16 * 2 + c.cube_int8_instr * 16 * 16 * 32 * 2),
      VAL("vec_fp32_ratio", Ratio(c, c.vec_fp32)),
      VAL("vec_fp16_ratio", Ratio(c, c.vec_fp16)),
      VAL("vec_int32_ratio", Ratio(c, c.vec_int32)),
      VAL("vec_misc_ratio", Ratio(c, c.vec_misc)),
      VAL("vector_fops", c.vec_fp32_instr * 64 + c.vec_fp16_instr * 128 + c.vec_int32_instr * 64 +
                             c.vec_misc_instr * 32),
  };
}

// Bandwidths, L2 cache counts, bank conflicts and memory-access volumes, in table order.
std::vector<Metric> MemoryMetrics() {
  return {
      BW("l1_read_bw", b[kL1Read]),
      BW("l1_write_bw", b[kL1Write]),
      BW("main_mem_read_bw", b[kMainMemRead]),
      BW("main_mem_write_bw", b[kMainMemWrite]),
      BW("l2_read_bw", b[kL2Read]),
      BW("l2_write_bw", b[kL2Write]),
      BW("ub_read_bw", b[kUbReadVec] + b[kUbReadScalar] + b[kUbToGm]),
      BW("ub_write_bw", b[kUbWriteVec] + b[kUbWriteScalar] + b[kGmToUb]),
      BW("l0a_read_bw", b[kL0aRead]),
      BW("l0a_write_bw", b[kL0aWrite]),
      BW("l0b_read_bw", b[kL0bRead]),
      BW("l0b_write_bw", b[kL0bWrite]),
      BW("l0c_read_bw_cube", b[kL0cRead]),
      BW("l0c_write_bw_cube", b[kL0cWrite]),
      BW("l0c_read_bw", 0.0),
      BW("l0c_write_bw", 0.0),
      BW("ub_read_bw_scalar", b[kUbReadScalar]),
      BW("ub_write_bw_scalar", b[kUbWriteScalar]),
      BW("ub_read_bw_vector", b[kUbReadVec]),
      BW("ub_write_bw_vector", b[kUbWriteVec]),
      BW("fixp2ub_write_bw", b[kFixp2Ub]),
      VAL("write_cache_hit", Lines(b[kL2WriteHit])),
      VAL("write_cache_miss_allocate", Lines(b[kL2WriteMiss])),
      VAL("r0_read_cache_hit", Lines(b[kL2ReadHit] * 0.6)),
      VAL("r0_read_cache_miss_allocate", Lines(b[kL2ReadMiss] * 0.6)),
      VAL("r1_read_cache_hit", Lines(b[kL2ReadHit] * 0.4)),
      VAL("r1_read_cache_miss_allocate", Lines(b[kL2ReadMiss] * 0.4)),
      VAL("read_local_l2_hit", Lines(b[kL2ReadHit])),
      VAL("read_local_l2_miss", Lines(b[kL2ReadMiss])),
      VAL("read_local_l2_victim", Lines(b[kL2ReadMiss] * 0.3)),
      VAL("write_local_l2_hit", Lines(b[kL2WriteHit])),
      VAL("write_local_l2_miss", Lines(b[kL2WriteMiss])),
      VAL("write_local_l2_victim", Lines(b[kL2WriteMiss] * 0.3)),
      VAL("vec_bankgroup_cflt_ratio", Ratio(c, c.bankgroup_stall)),
      VAL("vec_bank_cflt_ratio", Ratio(c, c.bank_stall)),
      VAL("vec_resc_cflt_ratio", Ratio(c, c.resc_stall)),
      VAL("read_main_memory_datas", b[kMainMemRead] / 1024),
      VAL("write_main_memory_datas", b[kMainMemWrite] / 1024),
      VAL("GM_to_L1_datas", b[kGmToL1] / 1024),
      VAL("L0C_to_L1_datas", b[kL0cToL1] / 1024),
      VAL("L0C_to_GM_datas", b[kL0cToGm] / 1024),
      VAL("GM_to_UB_datas", b[kGmToUb] / 1024),
      VAL("UB_to_GM_datas", b[kUbToGm] / 1024),
  };
}

// Every metric the simulator can fill; FindMetric indexes this table.
const std::vector<Metric>& Metrics() {
  static const auto* metrics = [] {
    auto* all = new std::vector<Metric>(ComputeMetrics());
    std::vector<Metric> memory = MemoryMetrics();
    all->insert(all->end(), memory.begin(), memory.end());
    return all;
  }();
  return *metrics;
}

#undef PIPE
#undef BW
#undef VAL

int FindMetric(absl::string_view bare) {
  const auto& m = Metrics();
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i].name == bare) return static_cast<int>(i);
  }
  return -1;
}

constexpr int kCubeUtilization = -2;

std::string FormatMetric(const Metric& m, const CoreStats& c, double t) {
  if (c.blocks == 0 && m.kind != Kind::kFloat) return "0";
  double v = m.fn(c, t);
  return m.kind == Kind::kCycles ? Integer(v) : Shortest3(v);
}

}  // namespace

double CoreTimeUs(const CoreStats& c, double freq_mhz) {
  if (c.blocks == 0 || c.cores == 0 || freq_mhz <= 0) return 0;
  double waves = std::ceil(static_cast<double>(c.blocks) / c.cores);
  return c.total_cycles / freq_mhz / c.blocks * waves;
}

absl::StatusOr<PmuColumn> ResolvePmuColumn(absl::string_view name) {
  PmuColumn col;
  col.name = std::string(name);
  if (name == "cube_utilization(%)") {
    col.metric = kCubeUtilization;
    return col;
  }
  absl::string_view bare = name;
  for (absl::string_view unit : {"(us)", "(GB/s)", "(KB)"}) absl::ConsumeSuffix(&bare, unit);
  if (bare == "aicore_time") bare = "aic_time";
  if (absl::ConsumePrefix(&bare, "aic_"))
    col.side = CoreSide::kAic;
  else if (absl::ConsumePrefix(&bare, "aiv_"))
    col.side = CoreSide::kAiv;
  col.metric = FindMetric(bare);
  if (col.side == CoreSide::kNone || col.metric < 0) {
    return absl::InvalidArgumentError(absl::StrCat("unknown PMU column '", name, "'"));
  }
  return col;
}

absl::StatusOr<double> CoreMetricByName(absl::string_view bare, const CoreStats& core,
                                        double core_time_us) {
  int m = FindMetric(bare);
  if (m < 0) return absl::InvalidArgumentError(absl::StrCat("unknown metric '", bare, "'"));
  return Metrics()[m].fn(core, core_time_us);
}

void AppendPmuCells(const std::vector<PmuColumn>& columns, const KernelResult& k, double rated_mhz,
                    std::string& line) {
  double aic_t = CoreTimeUs(k.aic, k.freq_mhz);
  double aiv_t = CoreTimeUs(k.aiv, k.freq_mhz);
  for (const PmuColumn& col : columns) {
    line += ',';
    if (!k.has_pmu) {
      line += "N/A";
    } else if (col.metric == kCubeUtilization) {
      double denom = rated_mhz * k.aic.cores * k.duration_us;
      line += Fixed(denom > 0 ? k.aic.total_cycles / denom * 100 : 0, 3);
    } else {
      bool aic = col.side == CoreSide::kAic;
      line += FormatMetric(Metrics()[col.metric], aic ? k.aic : k.aiv, aic ? aic_t : aiv_t);
    }
  }
}

}  // namespace npuperf::sim
