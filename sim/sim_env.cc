#include "sim/sim_env.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/device_range.h"
#include "sim/soc.h"

namespace npuperf::sim {
namespace {

std::string Get(const EnvLookup& env, absl::string_view name) {
  std::optional<std::string> v = env(name);
  return v ? std::string(absl::StripAsciiWhitespace(*v)) : std::string();
}

absl::StatusOr<std::string> SocFor(const EnvLookup& env, int physical) {
  std::string map = Get(env, "MSPROF_SIM_SOC_MAP");
  std::string soc = "Ascend910B2";
  if (!map.empty()) {
    absl::StatusOr<std::map<int, std::string>> parsed = ParseDeviceMap(map);
    if (!parsed.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("MSPROF_SIM_SOC_MAP: ", parsed.status().message()));
    auto it = parsed->find(physical);
    if (it == parsed->end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("MSPROF_SIM_SOC_MAP='", map, "' does not name device ", physical));
    }
    soc = it->second;
  }
  absl::StatusOr<SocSpec> spec = FindSoc(soc);
  if (!spec.ok()) return spec.status();
  return soc;
}

absl::Status ReadDvfs(const EnvLookup& env, SimEnv& out) {
  std::string v = Get(env, "MSPROF_SIM_DVFS");
  if (v.empty()) return absl::OkStatus();
  std::vector<std::string> parts = absl::StrSplit(v, ':');
  out.dvfs_probability = 1.0;
  bool ok = parts.size() <= 2 && absl::SimpleAtod(parts[0], &out.dvfs_mhz) && out.dvfs_mhz > 0 &&
            (parts.size() == 1 || absl::SimpleAtod(parts[1], &out.dvfs_probability));
  if (!ok || out.dvfs_probability < 0 || out.dvfs_probability > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MSPROF_SIM_DVFS='", v, "' (want <MHz>[:<probability 0..1>])"));
  }
  return absl::OkStatus();
}

absl::Status ReadNoiseAndSeed(const EnvLookup& env, SimEnv& out) {
  std::string seed = Get(env, "MSPROF_SIM_SEED");
  if (!seed.empty()) {
    uint64_t s = 0;
    if (!absl::SimpleAtoi(seed, &s))
      return absl::InvalidArgumentError(
          absl::StrCat("MSPROF_SIM_SEED='", seed, "' is not an integer"));
    out.seed = s;
  }
  std::string noise = Get(env, "MSPROF_SIM_NOISE");
  if (!noise.empty() &&
      (!absl::SimpleAtod(noise, &out.noise) || out.noise < 0 || out.noise > 0.3)) {
    return absl::InvalidArgumentError(absl::StrCat("MSPROF_SIM_NOISE='", noise, "' (want 0..0.3)"));
  }
  return absl::OkStatus();
}

std::filesystem::path DefaultStateDir(const EnvLookup& env) {
  std::string tmp = Get(env, "TMPDIR");
  if (tmp.empty()) tmp = "/tmp";
  return std::filesystem::path(tmp) / absl::StrCat("msprof-sim-state-", getuid());
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](absl::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

absl::StatusOr<int> ResolvePhysicalDevice(const EnvLookup& env, int* logical_out) {
  int logical = 0;
  std::string tile = Get(env, "TILE_FWK_DEVICE_ID");
  if (!tile.empty()) {
    std::string first = std::string(absl::StripAsciiWhitespace(tile.substr(0, tile.find(','))));
    if (!absl::SimpleAtoi(first, &logical) || logical < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("TILE_FWK_DEVICE_ID='", tile, "' is not a device id"));
    }
  }
  if (logical_out) *logical_out = logical;
  std::string visible = Get(env, "ASCEND_RT_VISIBLE_DEVICES");
  if (visible.empty()) return logical;
  std::vector<int> ids;
  for (absl::string_view item : absl::StrSplit(visible, ',')) {
    int id = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(item), &id) || id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ASCEND_RT_VISIBLE_DEVICES='", visible, "' is not a device list"));
    }
    ids.push_back(id);
  }
  if (logical >= static_cast<int>(ids.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logical device ", logical, " is not visible (ASCEND_RT_VISIBLE_DEVICES='", visible, "')"));
  }
  return ids[logical];
}

absl::StatusOr<SimEnv> ReadSimEnv(const EnvLookup& env) {
  SimEnv out;
  absl::StatusOr<int> physical = ResolvePhysicalDevice(env, &out.logical_device);
  if (!physical.ok()) return physical.status();
  out.physical_device = *physical;
  absl::StatusOr<std::string> soc = SocFor(env, out.physical_device);
  if (!soc.ok()) return soc.status();
  out.soc = *soc;
  absl::Status s = ReadNoiseAndSeed(env, out);
  if (s.ok()) s = ReadDvfs(env, out);
  if (!s.ok()) return s;
  out.fault_spec = Get(env, "MSPROF_SIM_FAULT");
  std::string state = Get(env, "MSPROF_SIM_STATE_DIR");
  out.state_dir = state.empty() ? DefaultStateDir(env) : std::filesystem::path(state);
  out.conflict_log = Get(env, "MSPROF_SIM_CONFLICT_LOG");
  out.device_nodes = Get(env, "MSPROF_SIM_DEVICE_NODES");
  std::string naming = Get(env, "MSPROF_SIM_BLOCK_NAMING");
  if (!naming.empty() && naming != "dim" && naming != "num") {
    return absl::InvalidArgumentError(
        absl::StrCat("MSPROF_SIM_BLOCK_NAMING='", naming, "' (want num or dim)"));
  }
  out.block_dim_naming = naming == "dim";
  std::string layout = Get(env, "MSPROF_SIM_LAYOUT");
  if (!layout.empty() && layout != "cann8" && layout != "cann7" && layout != "torch_npu" &&
      layout != "cann9") {
    return absl::InvalidArgumentError(
        absl::StrCat("MSPROF_SIM_LAYOUT='", layout, "' (want cann8, cann9, cann7 or torch_npu)"));
  }
  out.pre8_layout = layout == "cann7";
  out.torch_npu_layout = layout == "torch_npu";
  out.cann9_layout = layout == "cann9";
  return out;
}

std::filesystem::path TablesDir(const SimEnv& env, const std::filesystem::path& prof_dir) {
  if (env.pre8_layout) return prof_dir / absl::StrCat("device_", env.physical_device) / "summary";
  if (env.torch_npu_layout) return prof_dir.parent_path() / "ASCEND_PROFILER_OUTPUT";
  return prof_dir / "mindstudio_profiler_output";
}

std::string TableSuffix(const SimEnv& env, const std::string& ts14) {
  if (env.pre8_layout) return absl::StrCat("_", env.physical_device, "_1_1_", ts14);
  if (env.torch_npu_layout) return "";
  return "_" + ts14;
}

}  // namespace npuperf::sim
