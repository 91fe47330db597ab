#pragma once
// Chip health from the host: what the driver's `npu-smi` says of one device
// (docs/operations.md, "Device health"). The agent runs exactly two queries
// per device, each with a 10 s timeout:
//
//   npu-smi info -t health -i <id>   -> "Health Status" (OK, Warning, Alarm,
//                                       Critical), "Error Code"
//   npu-smi info -t common -i <id>   -> "Aicore Freq(MHZ)" (rated),
//                                       "Aicore curFreq(MHZ)" (current),
//                                       "Temperature(C)" and "NPU Real-time
//                                       Power(W)" of the NPU chip (the first
//                                       chip section; the mcu's comes after)
//
// before a device is offered (at most every kChipProbeInterval) and around
// every job, whose evidence keeps the readings as covariates.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "agent/profiler_runner.h"
#include "common/chip_health.h"
#include "common/clock.h"
#include "npuperf/v1/evidence.pb.h"

namespace npuperf::agent {

// Fills reading's health and error_code from `npu-smi info -t health`
// output; a missing "Health Status" line sets problem.
void ParseHealthOutput(absl::string_view text, v1::DeviceReading* reading);
// Fills the clocks, temperature and power of the first chip section of
// `npu-smi info -t common` output; a missing clock sets problem.
void ParseCommonOutput(absl::string_view text, v1::DeviceReading* reading);

// Reads chips through npu-smi with the ProfilerRunner seam. A Read never
// fails: what could not be read is the reading's `problem`. Thread-safe.
class NpuSmiProbe {
 public:
  // npu_smi: the program (--npu-smi); empty = no probe (every Read says so).
  // scratch: a directory for the two queries' output files.
  NpuSmiProbe(ProfilerRunner& runner, Clock& clock, std::string npu_smi,
              std::filesystem::path scratch);

  bool enabled() const { return !npu_smi_.empty(); }
  // Both queries, now (and remembered for ReadCached).
  v1::DeviceReading Read(int device);
  // The device's last reading when it is younger than max_age, else a new
  // one.
  v1::DeviceReading ReadCached(int device, std::chrono::milliseconds max_age);

 private:
  // One query's stdout, or why not.
  absl::StatusOr<std::string> Query(const char* type, int device);

  ProfilerRunner& runner_;
  Clock& clock_;
  const std::string npu_smi_;
  const std::filesystem::path scratch_;
  absl::Mutex mu_;
  struct Cached {
    v1::DeviceReading reading;
    Clock::MonotonicTime at;
  };
  std::map<int, Cached> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::agent
