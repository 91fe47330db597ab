#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "npuperf/v1/evidence.pb.h"

namespace npuperf::fleet {

// One msprof run to take the fleet's evidence from.
struct CaptureOptions {
  std::string msprof;                      // msprof binary (build/sim-bin/msprof)
  std::filesystem::path operator_dir;      // the runner's directory (cwd of the run)
  std::string runner;                      // runner file in operator_dir, run with python3
  std::string op_name;                     // exact target kernel name
  std::filesystem::path work_dir;          // the run's output goes below it
  std::map<std::string, std::string> env;  // the run's complete environment
};

// Runs the runner once under msprof task-time (agent::QuickArgv, through the
// agent's ProfilerRunner seam, SubprocessRunner) and turns its output into
// quick-mode evidence with the evidence library (ReadQuickTiming,
// QuickEvidence, ToProto), as npuperf-agent's quick mode does for one repeat:
// a real, ingest-valid Evidence, captured once and reported for every job of
// the fleet.
absl::StatusOr<v1::Evidence> CaptureEvidence(const CaptureOptions& options, Clock& clock);

}  // namespace npuperf::fleet
