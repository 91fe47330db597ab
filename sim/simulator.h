#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "sim/device_lock.h"
#include "sim/fault.h"
#include "sim/options.h"
#include "sim/sim_env.h"
#include "sim/soc.h"

namespace npuperf::sim {

// Exit codes of msprof-sim besides the application's own.
inline constexpr int kExitUsage = 2;        // bad flags or environment
inline constexpr int kExitDeviceBusy = 16;  // another profiling task holds the device
inline constexpr int kExitCannotRun = 127;  // the application could not be started

// One msprof-sim collection: takes the device, creates the PROF tree, runs
// the application as a child with the launch channel, then exports. Owns the
// device lock for its lifetime. Not thread-safe; one per process.
class Simulator {
 public:
  // `python_dir` holds msprof_sim.py and is prepended to the child's PYTHONPATH.
  Simulator(SimOptions options, SimEnv env, Clock& clock, std::filesystem::path python_dir)
      : options_(std::move(options)),
        env_(std::move(env)),
        clock_(clock),
        python_dir_(std::move(python_dir)) {}

  // Runs everything and returns the process exit code; messages go to
  // stdout (msprof-style [INFO]) and stderr ([ERROR]).
  int Run();

 private:
  absl::Status Prepare();
  int ReportBusy(const absl::Status& busy);
  absl::Status CreateTree();
  std::map<std::string, std::string> ChildEnv() const;
  int RunApplication();
  int InjectPostRunFaults();
  int Export();
  void WriteLog(const std::string& text) const;

  SimOptions options_;
  SimEnv env_;
  Clock& clock_;
  std::filesystem::path python_dir_;
  SocSpec soc_;
  std::vector<Fault> faults_;
  std::unique_ptr<DeviceLock> lock_;
  std::filesystem::path prof_dir_;
  std::filesystem::path launch_file_;
  std::filesystem::path log_dir_;  // msprof_sim_<pid>.log goes here
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
};

// PROF directory name: PROF_000001_<local YYYYMMDDhhmmssmmm>_<16 upper alnum>.
std::string ProfDirName(Clock::SystemTime t, const std::string& random16);

// Local time as YYYYMMDDhhmmss (CSV file names).
std::string Timestamp14(Clock::SystemTime t);

}  // namespace npuperf::sim
