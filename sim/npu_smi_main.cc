// npu-smi-sim: the simulator's stand-in for the driver's npu-smi (health and
// the common chip facts of one device, with faults). See sim/npu_smi_sim.h.
#include <iostream>
#include <string>
#include <vector>

#include "sim/npu_smi_sim.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return npuperf::sim::RunNpuSmi(args, npuperf::sim::ProcessEnv(), std::cout, std::cerr);
}
