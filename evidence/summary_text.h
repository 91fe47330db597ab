#pragma once

#include <filesystem>
#include <string>

#include "evidence/evidence.h"

namespace npuperf::evidence {

enum class Lang { kEn, kZh };

struct SummaryOptions {
  // Default: English. kZh uses the reference script's Chinese wording.
  Lang lang = Lang::kEn;
  // The archive round shown in the footer. Default: empty (footer omits it).
  std::filesystem::path round_dir;
};

// Pure functions of the evidence; thread-safe.
//
// summary.txt: the reference's sections (§8.2), in order and each exactly
// once (the reference printed the pipe-ratio block twice): header, pipe
// ratios, bound routing, head overhead, Memory, MemoryL0, MemoryUB, L2Cache,
// ResourceConflict, ArithmeticUtilization, per-core (both core types, with
// their process scope stated), DVFS, evidence errors, raw-data footer.
// The "dominant core" of the pipe block is the routing primary core (max core
// time), not the reference's separate mac/mte2-vs-vec heuristic. Lines are
// joined by '\n' with no trailing newline, as the reference writes it.
std::string RenderSummary(const Evidence& ev, const SummaryOptions& options);

// A Markdown rendering of the same figures (for `--format md`).
std::string RenderMarkdown(const Evidence& ev);

// Shortest round-trip decimal form of `v` (Python repr style: 87139.38).
std::string ShortNumber(double v);

}  // namespace npuperf::evidence
