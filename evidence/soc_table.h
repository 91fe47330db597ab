#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npuperf::evidence {

// The platform table: rated AI Core clock, core counts and L2 of every
// Ascend 910B, 910_93, 950, 310P and 350 SoC, from the CANN
// platform_config/<SoC>.ini files (soc_table.cc names the source of every
// row), and the resolution of a SoC name plus what a capture says about its
// device into the rated clock the DVFS check uses. Pure data and functions;
// thread-safe.
struct SocInfo {
  std::string_view name;        // SoC_version, e.g. "Ascend910B3"
  std::string_view short_name;  // Short_SoC_version (family), e.g. "Ascend910B"
  int ai_cores;                 // ai_core_cnt (310P: the unified AI Cores)
  int cube_cores;               // cube_core_cnt (0: absent, 310P)
  int vector_cores;             // vector_core_cnt
  double rated_mhz;             // [AICoreSpec] cube_freq
  double vector_mhz;            // [VectorCoreSpec] vec_freq (0: absent)
  int l2_mib;                   // l2_size

  // Cores running the cube side (AIC): cube_core_cnt, or ai_core_cnt when
  // the chip has one core type (310P).
  int CubeSide() const { return cube_cores > 0 ? cube_cores : ai_cores; }
};

// Every row, in table order.
const std::vector<SocInfo>& SocTable();

// By exact name; nullopt when unknown (never another SoC's numbers).
std::optional<SocInfo> LookupSoc(std::string_view name);

// Whether msprof has the optional eighth --aic-metrics group, MemoryAccess
// (the bytes the roofline needs), on this SoC: the A2/A3 rows (Ascend910B*,
// Ascend910_93*; msprof-output.md "MemoryAccess (A2/A3 only)"). False for an
// unknown name.
bool HasMemoryAccessGroup(std::string_view soc);

// What a capture says about its device (any may be absent).
struct SocFacts {
  // The capture's own rated clock: msprof op Rated Freq, HardwareInfo
  // "ai cube frequency(MHZ)", info.json aic_frequency. Wins over the table.
  std::optional<double> rated_mhz;
  std::string rated_source;
  std::optional<int> cube_cores, vector_cores;
  // rated clock x cube cores, implied by an op_summary row's
  // cube_utilization(%) = aic_total_cycles / (MHz x cores x duration) x 100.
  std::optional<double> rated_times_cube_cores;
};

// The SoC and rated clock the checks use.
struct SocResolution {
  // The table row: the requested name, or the one left after narrowing a
  // family name ("Ascend910B") or an empty request by the facts; also a
  // representative when all remaining rows share clock and core counts.
  std::optional<SocInfo> soc;
  // Rated clock for the DVFS check (0: none): the capture's own, else the
  // row's.
  double rated_mhz = 0;
  // "capture: <where>", "soc table: <name>", or "" without a clock.
  std::string rated_source;
  // Unknown name, ambiguity (with every candidate's clock, cores and L2),
  // capture vs table disagreement. One sentence each.
  std::vector<std::string> warnings;
  // Why nothing was resolved when no SoC was requested (ambiguous facts).
  std::string note;
};

// Resolves `requested` (exact SoC, family or prefix, or "" when not given)
// against the table and `facts`: facts narrow the candidates (core counts,
// rated clock within 1 %, clock x cores within 1 %); a single remaining row
// is the SoC; several with different clocks are ambiguous (warning, no table
// clock); an unknown name is a warning, never a fallback. With "" and no
// facts nothing is resolved (and nothing is warned: no SoC was claimed).
SocResolution ResolveSoc(std::string_view requested, const SocFacts& facts);

// The highest rated clock in the table (MHz): above it (plus tolerance) an
// implied clock is implausible on any SoC.
double MaxRatedMhz();

}  // namespace npuperf::evidence
