#pragma once
// npu-smi-sim: a stand-in for the driver's `npu-smi` with the same output
// format for the two queries npuperf-agent makes (docs/simulator.md,
// "npu-smi"), over the same device model and environment as msprof-sim
// (MSPROF_SIM_SOC_MAP), with faults:
//
//   npu-smi info -t health -i <id>   Health Status / Error Code lines
//   npu-smi info -t common -i <id>   NPU ID, Aicore Freq(MHZ), Aicore curFreq(MHZ),
//                                    Aicore Count, Temperature(C), NPU Real-time Power(W),
//                                    then the mcu chip's section
//
// NPU_SMI_SIM_FAULT holds items separated by ';', each limited to one device
// with `@dev=<id>` (else every device):
//   warning            Health Status Warning, error code 80E01801 (a minor alarm)
//   critical           Health Status Critical, error code 80CB8002
//   critical@after=<N> healthy for the first N health queries of the device, then
//                      Critical (a chip that goes critical mid-job; counted in
//                      MSPROF_SIM_STATE_DIR across processes)
//   lowclock:<MHz>     Aicore curFreq below the rated Aicore Freq (a throttled chip)
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/sim_env.h"

namespace npuperf::sim {

// One NPU_SMI_SIM_FAULT item.
struct NpuSmiFault {
  enum class Kind { kWarning, kCritical, kLowClock };
  Kind kind = Kind::kWarning;
  int device = -1;   // -1: every device
  int after = 0;     // kCritical: healthy for this many health queries first
  double mhz = 0;    // kLowClock: the current clock
  std::string text;  // the item as written (the counter's key)
};

// Parses "item[;item...]"; INVALID_ARGUMENT naming the bad item.
absl::StatusOr<std::vector<NpuSmiFault>> ParseNpuSmiFaults(absl::string_view spec);

// Runs one npu-smi command line (argv without the program name) against the
// environment: writes what npu-smi would print to out, errors to err, and
// returns the exit code (0; 1 for a command it does not know, a device the
// SoC map does not name or a bad fault spec, with npu-smi's kind of message).
int RunNpuSmi(const std::vector<std::string>& args, const EnvLookup& env, std::ostream& out,
              std::ostream& err);

}  // namespace npuperf::sim
