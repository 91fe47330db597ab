#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agent/constants.h"

namespace npuperf::agent {

// Configuration of one agent process (the flags of npuperf-agent, filled by
// main.cc). A plain value; the Agent keeps its own copy.
struct AgentOptions {
  // Physical device ids served. Required.
  std::vector<int> devices;
  // SoC per device; every device in `devices` needs one. Default: none (main.cc fills
  // Ascend910B2 for every device unless --soc or --soc-map says otherwise).
  std::map<int, std::string> socs;
  // Host labels for device constraints. Default: none.
  std::map<std::string, std::string> labels;
  // Work directory: bundle cache, per-job scratch, result spool (layout in agent.h).
  // Default: /var/lib/npuperf-agent.
  std::filesystem::path work_dir = "/var/lib/npuperf-agent";
  // Identity sent with RegisterAgent: host name, kernel boot id and a random id of this
  // process. Default: empty (main.cc reads them from the host).
  std::string host;
  std::string boot_id;
  std::string instance_id;
  // Which installation of the host this agent is (RegisterAgentRequest.slot):
  // a hash of the work directory. Default: "" (set by main.cc).
  std::string slot;
  // npu-smi (--npu-smi): read before a device is offered (at most every
  // kChipProbeInterval) and around every job (docs/operations.md "Device
  // health"). Default: none (no chip readings; msprof-sim's stand-in is
  // build/sim-bin/npu-smi).
  std::string npu_smi;
  // Agent version sent with RegisterAgent (main.cc also hands it to the job runner for
  // the fingerprints). Default: 0.1.0.
  std::string version = "0.1.0";
  // How often one attempt's progress goes to the server at most (ProgressSender:
  // the newest report waits out the rest). Default: kProgressInterval (1 s); 0
  // sends every report as soon as the sender's thread gets to it.
  std::chrono::milliseconds progress_interval = kProgressInterval;
};

}  // namespace npuperf::agent
