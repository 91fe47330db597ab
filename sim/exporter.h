#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/fault.h"
#include "sim/launch.h"
#include "sim/options.h"
#include "sim/sim_env.h"
#include "sim/soc.h"

namespace npuperf::sim {

// Everything needed to turn reported launches into a PROF tree's exports.
struct ExportInput {
  SimOptions options;
  SimEnv env;
  SocSpec soc;
  std::filesystem::path prof_dir;  // .../PROF_000001_<ts17>_<id>
  std::string ts14;                // CSV file-name timestamp
  int64_t process_start_ns = 0;    // unix ns the application started
  int64_t process_end_ns = 0;      // unix ns it exited
  std::vector<Fault> faults;       // active faults of this run
  uint64_t seed = 0;               // noise/skew/DVFS seed
};

// What the export decided, for the console and the log.
struct ExportSummary {
  int64_t tasks = 0;
  double freq_mhz = 0;  // clock the run executed at (below rated = DVFS episode)
  int64_t samples = 0;  // AICoreOriginalData rows (sample-based)
};

// Simulates every launch on the device timeline and writes
// mindstudio_profiler_output/*.csv, device_<id>/sqlite/*.db (sample-based)
// and device_<id>/sample.json. Deterministic for a given seed and launch list
// (timestamps aside, which follow the process clock).
absl::StatusOr<ExportSummary> ExportProfile(const ExportInput& in,
                                            const std::vector<Launch>& launches);

// msprof op: simulates the launches exactly as ExportProfile does (the same
// random draws, so one seed gives op_summary's figures for the same launch)
// and writes OPPROF files into in.prof_dir (the OPPROF_* directory) for the
// first AI Core launch of options.kernel_name (the first one when empty), a
// device kernel name (KernelName: tilefwk_<n>_mix_aic for a PyPTO kernel).
// NotFound when there is none.
absl::StatusOr<ExportSummary> ExportOpprof(const ExportInput& in,
                                           const std::vector<Launch>& launches);

}  // namespace npuperf::sim
