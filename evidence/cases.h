#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuperf::evidence {

// PERFORMANCE_CASES.json (schema 1) and the source records that pin files by
// path, size and sha256 (reference §2.1, §8.5, §9.11, §9.12). Error messages
// are the reference's, quoted. Stateless; thread-safe.

// Identity of a file the evidence depends on.
struct SourceRecord {
  std::string path;  // absolute, canonical
  std::string sha256;
  int64_t size_bytes = 0;
};

struct PerfCase {
  std::string id;
  std::string shape;
  std::string dtype;
  std::string test_function;  // "" when absent
};

struct CaseManifest {
  SourceRecord source;
  int schema_version = 1;
  std::vector<PerfCase> cases;
  // V-B `optimization_target` (empty when absent).
  std::vector<std::string> target_case_ids;
  std::string selection_mode;
};

// The largest case manifest read from an operator bundle (the server at
// submission; the agent's kMaxManifestBytes is the same 16 MiB).
inline constexpr int64_t kMaxCaseManifestBytes = int64_t{16} << 20;

// Parses and validates manifest bytes; `source` is copied into the result.
// The one manifest rule: the client (submit --manifest), the server (at
// submission) and the agent use it, and the Python client mirrors it; the
// fixtures of tests/fixtures/manifests hold every case. Errors name the
// field: "case manifest cases[1].dtype must be a non-empty string".
absl::StatusOr<CaseManifest> ParseCaseManifest(std::string_view bytes, SourceRecord source);

// Reads `path` (made absolute and canonical), records its size and sha256,
// then ParseCaseManifest. Errors: "cannot load case manifest '<p>': <e>", ...
absl::StatusOr<CaseManifest> LoadCaseManifest(const std::filesystem::path& path);

// The record of the file at `path` (canonical path, size, sha256).
absl::StatusOr<SourceRecord> RecordOf(const std::filesystem::path& path);

// Re-checks a stored record against the file on disk (§9.11): absolute,
// canonical, regular file, same size and sha256. `label` prefixes messages
// ("Golden source path is not absolute").
absl::Status VerifySourceRecord(std::string_view label, const SourceRecord& record);

// Lowercase hex sha256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

// Canonical shape: a sequence of (name or "", dims); empty dims = scalar.
// `[1, 32]` == `(1, 32)`, `x:(16,2048)` == `x:[16x2048]`, `()`/`[]`/`scalar`
// are scalar. nullopt when unparsable (which never equals anything).
using CanonicalShape = std::vector<std::pair<std::string, std::vector<int64_t>>>;
std::optional<CanonicalShape> CanonicalizeShape(std::string_view shape);
bool ShapesEqual(std::string_view a, std::string_view b);

// Canonical dtype: ordered (name or "", dtype) with aliases mapped
// (fp16/half -> float16, fp32/float -> float32, fp64/double -> float64,
// bf16 -> bfloat16) and an optional `torch.` prefix.
std::optional<std::vector<std::pair<std::string, std::string>>> CanonicalizeDtype(
    std::string_view dtype);
bool DtypesEqual(std::string_view a, std::string_view b);

// Reference `safe_case_dir_name`: "case_" + slug + "_" + sha256(id)[:8].
std::string CaseDirName(std::string_view case_id);

}  // namespace npuperf::evidence
