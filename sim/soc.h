#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuperf::sim {

// Column family of a SoC: A2/A3 (Ascend910B*, Ascend910_93*) or A5 (Ascend950*).
enum class SocFamily { kA2A3, kA5 };

// Static description of one simulated chip. Core counts, clocks, L2 and
// memory bandwidth follow msprof-output.md §6.2; per-cycle throughputs are the
// model's assumptions (documented in docs/simulator.md). Plain value type.
struct SocSpec {
  std::string name;
  SocFamily family = SocFamily::kA2A3;
  int cube_cores = 0;
  int vector_cores = 0;
  double freq_mhz = 0;  // rated AI Core clock
  int64_t l2_bytes = 0;
  double hbm_bytes_per_s = 0;              // device memory bandwidth shared by all cores
  double aic_link_bytes_per_cycle = 0;     // GM<->L1 per cube core
  double aiv_link_bytes_per_cycle = 0;     // GM<->UB per vector core
  double cube_fp16_macs_per_cycle = 4096;  // 16x16x16 fractal
  double cube_int8_macs_per_cycle = 8192;  // 16x32x16 fractal
  double vec_fp16_per_cycle = 128;
  double vec_fp32_per_cycle = 64;
  double vec_int32_per_cycle = 64;
  double vec_misc_per_cycle = 32;
  int pmu_events = 8;  // events per sample replay (A5: 10)
  int chip_code = 5;   // NPU_INFO chip code (5 Ascend910B, 15 Ascend950)
};

// The SoC called `name` (exact, e.g. "Ascend910B2"); NotFound lists the known ones.
absl::StatusOr<SocSpec> FindSoc(absl::string_view name);

// Names of every simulated SoC, in table order.
std::vector<std::string> KnownSocNames();

}  // namespace npuperf::sim
