#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/cases.h"
#include "evidence/evidence.h"

namespace npuperf::evidence {

// Golden (torch_npu) reference data: the GOLDEN_PERF_REPORT.json machine
// contract (reference §2.4, §8.6), its join with the case manifest (§7.5),
// and the three GOLDEN_PERF_REPORT.md shapes (§3, §8.4). The Markdown is
// informational; only the JSON contract may decide a target. Stateless.

struct GoldenCase {
  std::string id, shape, dtype;
  std::vector<double> raw_repeat_e2e_us;
  double median_total_us = 0;
  double per_iteration_e2e_us = 0;
};

struct GoldenContract {
  SourceRecord source;  // of GOLDEN_PERF_REPORT.json itself
  int64_t device_id = 0, iterations = 1, warmup = 0, repeats = 1, seed = 42;
  std::string timing_scope;  // "all_golden_npu_kernels"
  std::string aggregation;   // "median_of_repeat_totals"
  SourceRecord golden_source;
  SourceRecord case_manifest_source;
  int case_manifest_schema_version = 1;
  std::vector<GoldenCase> cases;
};

// Parses and validates contract bytes. `verify_files` also re-hashes the
// golden_source file (false for fuzzing / offline inspection).
absl::StatusOr<GoldenContract> ParseGoldenContract(std::string_view bytes, bool verify_files);

// Reads `path`, records it, parses it and re-hashes the golden source: the
// file of the recorded name beside the contract when there is one (an operator
// directory unpacked elsewhere), else the recorded absolute path.
absl::StatusOr<GoldenContract> LoadGoldenContract(const std::filesystem::path& path);

// Joins a contract with a manifest: same id set, canonical shape and dtype per
// case, and the contract's case_manifest_source matching the manifest's record
// by file name, sha256, size and schema version (not by absolute path, so a
// relocated operator directory still joins). Returns case id -> golden
// per-iteration E2E (us).
absl::StatusOr<std::map<std::string, double>> JoinGolden(const CaseManifest& manifest,
                                                         const GoldenContract& contract);

// One case of a GOLDEN_PERF_REPORT.md.
struct GoldenMdCase {
  std::string id, shape, dtype;
  double e2e_us = 0;
};
// Table form (header row with "case" and "E2E", any of the three shapes),
// else the single-case fallback (`- **Input Shape**:`, `- **dtype**:`,
// `Total kernel duration ... <x> us`, id "P0"). Error
// "no golden E2E data found in GOLDEN_PERF_REPORT.md" when neither matches.
absl::StatusOr<std::vector<GoldenMdCase>> ParseGoldenMarkdown(std::string_view text);

// golden per-iteration E2E / kernel time, labelled golden_reference_ratio.
// status kJoined when both are positive finite, else kNotProvided (no golden)
// or kMismatch (with the reason).
GoldenRatio ComputeGoldenRatio(std::optional<double> golden_us, double kernel_us);

// Python math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6), the reference's test.
bool IsClose(double a, double b);

}  // namespace npuperf::evidence
