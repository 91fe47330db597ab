#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

// A measured roofline of one target kernel from its PMU counters
// (docs/evidence.md "Roofline"): operations from ArithmeticUtilization
// (aic_cube_fops + aiv_vector_fops), bytes moved from the MemoryAccess
// `*_datas(KB)` fields (main memory read + write; msprof op: Memory.csv), the
// kernel's duration and the SoC's ceilings (CeilingsFor, every figure with its
// source). Then the one terminal-state rule (TerminalRule) and the reference's
// completion rule (reference-scripts.md §2.11). Bandwidth fields
// (main_mem_*_bw, A5 / CANN 9.2) are never integrated into traffic. Pure
// functions; thread-safe.
namespace npuperf::evidence {

// The SoC's ceilings, ops/s and bytes/s (0: unknown), each with its source.
struct PlatformCeilings {
  std::string soc;
  double cube_fp16_ops_per_s = 0, cube_int8_ops_per_s = 0;
  double vector_fp16_ops_per_s = 0, vector_fp32_ops_per_s = 0;
  std::string compute_source;
  double hbm_bytes_per_s = 0;
  std::string hbm_source;
  // "third_party", "unverified_external_historical" or "" (unknown).
  std::string hbm_verification;
  double l2_bytes_per_s = 0;
  std::string l2_source;
};

// The ceilings of table SoC `soc` at the rated clock `rated_mhz` (the
// capture's own when it has one; 0: the table's). nullopt for an unknown SoC
// (never another SoC's numbers).
std::optional<PlatformCeilings> CeilingsFor(std::string_view soc, double rated_mhz);

// A Tile-DAG attestation the user supplies (never inferred): the file, its
// SHA-256 and the pipeline status it claims.
struct TileDagAttestation {
  std::filesystem::path path;
  std::string sha256;
  std::string status;  // proven | not_applicable_with_dag
  std::string tile_dag;
};

// Reads an attestation: JSON {"schema_version": 1, "target_op_name": NAME,
// "pipeline_evidence_status": "proven"|"not_applicable_with_dag",
// "tile_dag": "<how adjacent tiles' load/compute/store map to the lanes>"}.
// InvalidArgument naming the field when it is malformed or names another op.
absl::StatusOr<TileDagAttestation> ReadTileDagAttestation(const std::filesystem::path& path,
                                                          std::string_view op_name);
// The same rule over the attestation's text; `name` is how errors call it
// (a path, or a request field). path is left empty.
absl::StatusOr<TileDagAttestation> ParseTileDagAttestation(std::string_view text,
                                                           std::string_view op_name,
                                                           std::string_view name);

// The §2.11 completion rule for a formal round closed through the service
// (docs/evidence.md "When a round may be closed"): its roofline (terminal
// status and scalar dominance, read from the round's evidence.json), with the
// pipeline evidence its instruction timeline and the user's attestation give.
// Pipeline: proven needs the attestation's "proven", a unique target window
// and same-lane compute+movement overlap (overlap_ns > 0);
// not_applicable_with_dag the attestation's claim and a unique window; else
// unverified. Each unmet condition is a blocker. Pure.
struct Completion {
  std::string terminal_status = "insufficient_evidence";
  std::string pipeline_status = "unverified";
  bool eligible = false;
  std::vector<std::string> blockers;
};
Completion DecideCompletion(std::string_view formal_evidence_json,
                            std::string_view attribution_status, int64_t overlap_ns,
                            const std::optional<TileDagAttestation>& attestation);

// What the roofline is computed from.
struct RooflineInputs {
  // The merged counters of the target (Evidence::merged).
  std::map<std::string, double> merged;
  // True for msprof op rows (per-block averages: totals = average x blocks).
  bool per_block_averages = false;
  double blocks = 0;  // Block Num / Dim, for per_block_averages
  double duration_us = 0;
  std::string duration_source;
  std::string soc;  // resolved table SoC ("" unknown)
  double rated_mhz = 0;
  // Scalar dominance (the ratio route's scalar family); nullopt: unknown.
  std::optional<bool> scalar_dominant;
  std::optional<TileDagAttestation> attestation;
};

struct Roofline {
  // measured | insufficient_evidence
  std::string status = "insufficient_evidence";
  std::vector<std::string> missing;  // the inputs that cannot be measured, named
  std::vector<std::string> notes;
  // Inputs, and input -> where it came from.
  double cube_ops = 0, vector_ops = 0, ops = 0;
  double read_bytes = 0, write_bytes = 0, bytes = 0;  // main memory (HBM)
  double duration_us = 0;
  std::map<std::string, std::string> sources;
  // Ceilings used.
  std::string compute_ceiling;  // cube_fp16, cube_int8, vector_fp16, vector_fp32
  double peak_ops_per_s = 0, peak_bytes_per_s = 0;
  // Results (valid when status is measured).
  double arithmetic_intensity = 0;  // ops per byte of main memory traffic
  double achieved_ops_per_s = 0, achieved_bytes_per_s = 0;
  double ridge_point = 0;     // ops per byte where the roofs meet
  double roof_ops_per_s = 0;  // min(peak ops, peak bytes x intensity)
  double percent_of_roof = 0;
  double compute_utilization_pct = 0, bandwidth_utilization_pct = 0;
  std::string binding_ceiling;  // compute | memory_bandwidth
  // TerminalRule's verdict and the §2.11 completion rule.
  std::string terminal_status = "insufficient_evidence";
  std::optional<bool> scalar_dominant;
  std::string pipeline_status = "unverified";
  std::optional<TileDagAttestation> attestation;
  bool completion_eligible = false;
  std::vector<std::string> completion_blockers;
};

// The one terminal-state rule, in words (evidence.json and the docs).
std::string_view TerminalRule();

// The roofline of `in`: every input present and every ceiling known gives
// status measured; otherwise insufficient_evidence with `missing` naming
// each absent field (and the bandwidth-only case explained in notes).
Roofline ComputeRoofline(const RooflineInputs& in);

}  // namespace npuperf::evidence

namespace npuperf::evidence {

struct Evidence;  // evidence.h

// Sets ev->roofline from the evidence's merged counters, duration (the
// repeats' aggregate, else the canonical row's Task Duration), resolved SoC
// and rated clock, scalar route and `attestation`. Called by BuildEvidence,
// CombineRepeats and QuickEvidence.
void ApplyRoofline(Evidence* ev, const std::optional<TileDagAttestation>& attestation);

}  // namespace npuperf::evidence
