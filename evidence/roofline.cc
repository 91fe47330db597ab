#include "evidence/roofline.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "evidence/cases.h"
#include "evidence/soc_table.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;
using internal::EndsWith;
using internal::StartsWith;

constexpr double kTau = 0.80;  // the reference's BOUND_ROUTE_HIGH

// Main-memory bandwidth of the SoCs that have a published figure
// (msprof-output.md §6.2). Every other SoC: unknown.
struct HbmRow {
  const char* soc;
  double bytes_per_s;
  const char* source;
  const char* verification;
};
constexpr HbmRow kHbm[] = {
    {"Ascend910B2", 1.6e12,
     "msprof-output.md 6.2: ~1.6 TB/s, third-party model config (platform_config/Ascend910B2.ini "
     "quoted in public tutorials)",
     "third_party"},
    {"Ascend910B3", 1.6e12, "msprof-output.md 6.2: 1.6 TB/s, HWConf (public source, third party)",
     "third_party"},
    {"Ascend950PR_9589", 1.7e12,
     "msprof-output.md 6.2: measured aligned MTE2 read ~1.7 TB/s ([A5-REPORT], a5-roofline)",
     "unverified_external_historical"},
    {"Ascend950PR_9579", 1.6e12,
     "msprof-output.md 6.2: weight-streaming roof ~1.6 TB/s (a5-roofline-and-levers.md)",
     "unverified_external_historical"},
};

double Get(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

// Sum of the present fields among `names`; false when none is present.
bool SumOf(const RooflineInputs& in, const std::vector<std::string>& names, double scale,
           double* out, std::string* source) {
  bool any = false;
  *out = 0;
  for (const std::string& n : names) {
    auto it = in.merged.find(n);
    if (it == in.merged.end()) continue;
    any = true;
    *out += it->second * scale;
    *source += Cat(source->empty() ? "" : " + ", n);
  }
  if (any && in.per_block_averages) {
    *out *= in.blocks;
    *source += Cat(" (msprof op per-block average x ", in.blocks, " blocks)");
  }
  return any;
}

void ReadOps(const RooflineInputs& in, Roofline& r) {
  std::string cube_src, vec_src;
  const bool cube = SumOf(in, {"aic_cube_fops", "cube_fops"}, 1, &r.cube_ops, &cube_src);
  const bool vec = SumOf(in, {"aiv_vector_fops", "vector_fops"}, 1, &r.vector_ops, &vec_src);
  if (!cube && !vec) {
    r.missing.push_back("aic_cube_fops / aiv_vector_fops (ArithmeticUtilization)");
    return;
  }
  r.ops = r.cube_ops + r.vector_ops;
  r.sources["ops"] = Cat("ArithmeticUtilization: ", cube_src, cube && vec ? " + " : "", vec_src);
}

void ReadBytes(const RooflineInputs& in, Roofline& r) {
  std::string rs, ws;
  const bool rd = SumOf(in,
                        {"aic_read_main_memory_datas(KB)", "aiv_read_main_memory_datas(KB)",
                         "read_main_memory_datas(KB)"},
                        1024, &r.read_bytes, &rs);
  const bool wr = SumOf(in,
                        {"aic_write_main_memory_datas(KB)", "aiv_write_main_memory_datas(KB)",
                         "write_main_memory_datas(KB)"},
                        1024, &r.write_bytes, &ws);
  if (rd && wr) {
    r.bytes = r.read_bytes + r.write_bytes;
    r.sources["bytes"] =
        Cat("MemoryAccess (msprof op: Memory.csv), KB taken as 1024 B: ", rs, " + ", ws);
    return;
  }
  r.missing.push_back(
      "read_main_memory_datas(KB) / write_main_memory_datas(KB) (MemoryAccess group; msprof op "
      "Memory.csv)");
  const bool bandwidth_only = std::any_of(in.merged.begin(), in.merged.end(), [](const auto& kv) {
    return kv.first.find("main_mem_") != std::string::npos && EndsWith(kv.first, "_bw(GB/s)");
  });
  if (bandwidth_only) {
    r.notes.push_back(
        "this capture has only main_mem_*_bw(GB/s) bandwidth fields (A5 / CANN 9.2 has no "
        "MemoryAccess group): bandwidth is never integrated into traffic (it undercounts by "
        "about an order of magnitude), so no byte count and no roofline");
  }
}

void ChooseCeilings(const RooflineInputs& in, Roofline& r) {
  std::optional<PlatformCeilings> c = CeilingsFor(in.soc, in.rated_mhz);
  if (!c) {
    r.missing.push_back(in.soc.empty()
                            ? "soc (no SoC resolved: pass --soc)"
                            : Cat("platform ceilings of ", in.soc, " (not in the table)"));
    return;
  }
  const bool cube = r.cube_ops >= r.vector_ops;
  if (cube) {
    const bool int8 = Get(in.merged, "aic_mac_int8_ratio") > Get(in.merged, "aic_mac_fp16_ratio");
    r.compute_ceiling = int8 ? "cube_int8" : "cube_fp16";
    r.peak_ops_per_s = int8 ? c->cube_int8_ops_per_s : c->cube_fp16_ops_per_s;
  } else {
    const bool fp32 = Get(in.merged, "aiv_vec_fp32_ratio") > Get(in.merged, "aiv_vec_fp16_ratio");
    r.compute_ceiling = fp32 ? "vector_fp32" : "vector_fp16";
    r.peak_ops_per_s = fp32 ? c->vector_fp32_ops_per_s : c->vector_fp16_ops_per_s;
  }
  r.sources["peak_ops_per_s"] = Cat(
      c->compute_source, "; the unit doing most of the ops, in the dtype with the larger ratio");
  if (c->hbm_bytes_per_s <= 0) {
    r.missing.push_back(Cat("HBM bandwidth of ", c->soc, " (no published figure in the table)"));
  } else {
    r.peak_bytes_per_s = c->hbm_bytes_per_s;
    r.sources["peak_bytes_per_s"] = Cat(c->hbm_source, " [", c->hbm_verification, "]");
  }
  r.sources["l2_bytes_per_s"] = c->l2_source;
}

void Measure(Roofline& r) {
  const double seconds = r.duration_us * 1e-6;
  r.arithmetic_intensity = r.ops / r.bytes;
  r.achieved_ops_per_s = r.ops / seconds;
  r.achieved_bytes_per_s = r.bytes / seconds;
  r.ridge_point = r.peak_ops_per_s / r.peak_bytes_per_s;
  r.roof_ops_per_s = std::min(r.peak_ops_per_s, r.peak_bytes_per_s * r.arithmetic_intensity);
  r.percent_of_roof = r.achieved_ops_per_s / r.roof_ops_per_s * 100;
  r.compute_utilization_pct = r.achieved_ops_per_s / r.peak_ops_per_s * 100;
  r.bandwidth_utilization_pct = r.achieved_bytes_per_s / r.peak_bytes_per_s * 100;
  r.binding_ceiling = r.arithmetic_intensity < r.ridge_point ? "memory_bandwidth" : "compute";
  r.status = "measured";
}

void Decide(Roofline& r) {
  if (r.status == "measured") {
    const bool c = r.compute_utilization_pct >= kTau * 100;
    const bool m = r.bandwidth_utilization_pct >= kTau * 100;
    r.terminal_status = c && m                              ? "balanced_compute_movement"
                        : c                                 ? "compute_bound"
                        : m                                 ? "data_movement_bound"
                        : r.scalar_dominant.value_or(false) ? "scalar_bound"
                                                            : "residual_not_overlapped";
  }
  static const char* kTerminal[] = {"compute_bound", "data_movement_bound",
                                    "balanced_compute_movement"};
  if (std::find(std::begin(kTerminal), std::end(kTerminal), r.terminal_status) ==
      std::end(kTerminal)) {
    r.completion_blockers.push_back(Cat("roofline_terminal_status is ", r.terminal_status));
  }
  if (r.pipeline_status != "proven" && r.pipeline_status != "not_applicable_with_dag") {
    r.completion_blockers.push_back(
        Cat("pipeline evidence is ", r.pipeline_status,
            " (proven or not_applicable_with_dag needs a Tile-DAG attestation)"));
  }
  if (!r.scalar_dominant.has_value()) {
    r.completion_blockers.push_back("scalar dominance unknown (no PipeUtilization ratios)");
  } else if (*r.scalar_dominant) {
    r.completion_blockers.push_back("scalar is dominant");
  }
  r.completion_eligible = r.completion_blockers.empty();
}

}  // namespace

std::optional<PlatformCeilings> CeilingsFor(std::string_view soc, double rated_mhz) {
  std::optional<SocInfo> info = LookupSoc(soc);
  if (!info) return std::nullopt;
  PlatformCeilings c;
  c.soc = std::string(info->name);
  const double cube_hz = (rated_mhz > 0 ? rated_mhz : info->rated_mhz) * 1e6;
  const double vec_hz = info->vector_mhz > 0 ? info->vector_mhz * 1e6 : cube_hz;
  const double cubes = info->CubeSide(), vectors = info->vector_cores;
  c.cube_fp16_ops_per_s = 16.0 * 16 * 16 * 2 * cubes * cube_hz;
  c.cube_int8_ops_per_s = 16.0 * 32 * 16 * 2 * cubes * cube_hz;
  c.vector_fp16_ops_per_s = 128.0 * vectors * vec_hz;
  c.vector_fp32_ops_per_s = 64.0 * vectors * vec_hz;
  c.compute_source =
      Cat("derived from the platform table (", c.soc, ": ", cubes, " cube / ", vectors,
          " vector cores, ", cube_hz / 1e6,
          " MHz): cube M x N x K x 2 per cycle per core (fp16 "
          "16,16,16; int8 16,32,16; msprof-output.md 6.2), vector 128 fp16 / 64 fp32 lanes per "
          "cycle per core (msprof's vector_fops weights, 3.7) - upper bounds, not vendor figures");
  for (const HbmRow& row : kHbm) {
    if (c.soc != row.soc) continue;
    c.hbm_bytes_per_s = row.bytes_per_s;
    c.hbm_source = row.source;
    c.hbm_verification = row.verification;
  }
  c.l2_source = "unknown: no published L2 bandwidth (the ini's l2_rate has no known unit)";
  return c;
}

std::string_view TerminalRule() {
  return "insufficient_evidence unless the roofline is measured; else with c = achieved ops/s / "
         "peak ops/s and m = achieved bytes/s / peak HBM bytes/s and tau = 0.80 (the "
         "reference's BOUND_ROUTE_HIGH): c >= tau and m >= tau: balanced_compute_movement; "
         "c >= tau: compute_bound; m >= tau: data_movement_bound; otherwise scalar_bound when "
         "the scalar route is triggered, else residual_not_overlapped (neither roof reached)";
}

Roofline ComputeRoofline(const RooflineInputs& in) {
  Roofline r;
  r.scalar_dominant = in.scalar_dominant;
  r.attestation = in.attestation;
  if (in.attestation) r.pipeline_status = in.attestation->status;
  ReadOps(in, r);
  ReadBytes(in, r);
  if (in.duration_us > 0) {
    r.duration_us = in.duration_us;
    r.sources["duration_us"] = in.duration_source;
  } else {
    r.missing.push_back("kernel duration");
  }
  if (in.per_block_averages && in.blocks <= 0) r.missing.push_back("block count (msprof op)");
  ChooseCeilings(in, r);
  if (r.missing.empty() && r.ops > 0 && r.bytes > 0) {
    Measure(r);
  } else if (r.missing.empty()) {
    r.missing.push_back(r.ops > 0 ? "main memory bytes (0 KB moved)" : "operations (0 fops)");
  }
  Decide(r);
  return r;
}

absl::StatusOr<TileDagAttestation> ReadTileDagAttestation(const std::filesystem::path& path,
                                                          std::string_view op_name) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (!in) return absl::NotFoundError(Cat("cannot read Tile-DAG attestation ", path.string()));
  absl::StatusOr<TileDagAttestation> a =
      ParseTileDagAttestation(bytes.str(), op_name, path.string());
  if (a.ok()) a->path = path;
  return a;
}

absl::StatusOr<TileDagAttestation> ParseTileDagAttestation(std::string_view text,
                                                           std::string_view op_name,
                                                           std::string_view name) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat("Tile-DAG attestation ", name, ": ", why));
  };
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return bad("not a JSON object");
  auto str = [&j](const char* k) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  if (!j.contains("schema_version") || j["schema_version"] != 1)
    return bad("schema_version must be 1");
  if (str("target_op_name") != op_name) {
    return bad(Cat("target_op_name must be '", op_name, "', got '", str("target_op_name"), "'"));
  }
  const std::string status = str("pipeline_evidence_status");
  if (status != "proven" && status != "not_applicable_with_dag") {
    return bad("pipeline_evidence_status must be proven or not_applicable_with_dag");
  }
  if (str("tile_dag").empty()) return bad("tile_dag must describe the Tile DAG mapping");
  return TileDagAttestation{{}, Sha256Hex(text), status, str("tile_dag")};
}

Completion DecideCompletion(std::string_view formal_evidence_json,
                            std::string_view attribution_status, int64_t overlap_ns,
                            const std::optional<TileDagAttestation>& attestation) {
  Roofline r;  // not measured here: Decide keeps the formal round's terminal status
  const nlohmann::json j =
      nlohmann::json::parse(formal_evidence_json, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json roofline =
      j.is_object() && j.contains("roofline") && j["roofline"].is_object() ? j["roofline"]
                                                                           : nlohmann::json();
  if (roofline.contains("roofline_terminal_status") &&
      roofline["roofline_terminal_status"].is_string()) {
    r.terminal_status = roofline["roofline_terminal_status"].get<std::string>();
  }
  if (roofline.contains("scalar_dominant") && roofline["scalar_dominant"].is_boolean()) {
    r.scalar_dominant = roofline["scalar_dominant"].get<bool>();
  }
  const bool unique = attribution_status == "unique_exact_target_window";
  std::vector<std::string> pipeline_blockers;
  if (!attestation) {
    pipeline_blockers.push_back(
        "no Tile-DAG attestation (npuperf timeline --tile-dag-attestation)");
  } else if (!unique) {
    pipeline_blockers.push_back(Cat("the timeline's target window is ", attribution_status));
  } else if (attestation->status == "proven" && overlap_ns <= 0) {
    pipeline_blockers.push_back(
        "the attestation claims proven but the timeline shows no same-lane compute+movement "
        "overlap");
  } else {
    r.pipeline_status = attestation->status;
  }
  Decide(r);
  Completion c;
  c.terminal_status = r.terminal_status;
  c.pipeline_status = r.pipeline_status;
  c.blockers = std::move(r.completion_blockers);
  c.blockers.insert(c.blockers.end(), pipeline_blockers.begin(), pipeline_blockers.end());
  c.eligible = c.blockers.empty();
  return c;
}

}  // namespace npuperf::evidence
