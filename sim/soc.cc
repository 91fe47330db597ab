#include "sim/soc.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npuperf::sim {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

SocSpec A2(std::string name, int cube, int vec, double mhz, int64_t l2_mib, double hbm) {
  SocSpec s;
  s.name = std::move(name);
  s.family = SocFamily::kA2A3;
  s.cube_cores = cube;
  s.vector_cores = vec;
  s.freq_mhz = mhz;
  s.l2_bytes = l2_mib * kMiB;
  s.hbm_bytes_per_s = hbm;
  s.aic_link_bytes_per_cycle = 64;
  s.aiv_link_bytes_per_cycle = 32;
  s.pmu_events = 8;
  s.chip_code = 5;
  return s;
}

SocSpec A5(std::string name, int cube, int vec) {
  SocSpec s;
  s.name = std::move(name);
  s.family = SocFamily::kA5;
  s.cube_cores = cube;
  s.vector_cores = vec;
  s.freq_mhz = 1650;
  s.l2_bytes = 128 * kMiB;
  s.hbm_bytes_per_s = 2.8e12;
  s.aic_link_bytes_per_cycle = 31;  // ini ddr_rate (AICore)
  s.aiv_link_bytes_per_cycle = 16;  // ini ddr_rate (VectorCore): 64x16x1.65e9 = 1.69 TB/s
  s.pmu_events = 10;
  s.chip_code = 15;
  return s;
}

const std::vector<SocSpec>& Table() {
  static const std::vector<SocSpec>* table = new std::vector<SocSpec>{
      A2("Ascend910B1", 24, 48, 1850, 192, 1.6e12),
      A2("Ascend910B2", 24, 48, 1800, 192, 1.6e12),
      A2("Ascend910B3", 20, 40, 1800, 192, 1.6e12),
      A2("Ascend910B4", 20, 40, 1800, 96, 1.2e12),
      A2("Ascend910_9392", 24, 48, 1800, 192, 1.6e12),
      A2("Ascend910_9382", 24, 48, 1800, 192, 1.6e12),
      A5("Ascend950PR_9589", 32, 64),
      A5("Ascend950PR_9579", 28, 56),
  };
  return *table;
}

}  // namespace

absl::StatusOr<SocSpec> FindSoc(absl::string_view name) {
  for (const SocSpec& s : Table()) {
    if (s.name == name) return s;
  }
  return absl::NotFoundError(
      absl::StrCat("unknown SoC '", name, "' (known: ", absl::StrJoin(KnownSocNames(), ", "), ")"));
}

std::vector<std::string> KnownSocNames() {
  std::vector<std::string> out;
  for (const SocSpec& s : Table()) out.push_back(s.name);
  return out;
}

}  // namespace npuperf::sim
