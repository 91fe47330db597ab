// The canary's operator (docs/operations.md "Device health", "Canaries"):
// one small fixed vector kernel, an fp16 add of 8 Mi elements, built into the
// server, so that every device of a SoC runs exactly the same job and a slow
// one stands out. On an NPU host its runner calls torch.add through
// torch_npu; under msprof-sim it reports the same kernel to the simulator.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::server {

// The operator's name in the canary collections and rounds.
inline constexpr char kCanaryOperator[] = "npuperf_canary";
// Its runner and its one case.
inline constexpr char kCanaryRunner[] = "test_npuperf_canary.py";
inline constexpr char kCanaryCase[] = "p0";
// The target kernel's name as op_summary and task_time print it: what CANN 8
// and 9 name torch.add's fp16 kernel (the server's --canary-op-name when a
// host's CANN names it otherwise).
inline constexpr char kDefaultCanaryOpName[] = "aclnnAdd_AddAiCore_Add";

// The operator directory: (file name, content) of the runner and
// PERFORMANCE_CASES.json.
std::vector<std::pair<std::string, std::string>> CanaryOperatorFiles();

// The directory packed as a bundle (common/bundle_tar.h PackBundleFiles):
// the same bytes, so the same sha256, on every replica and every start.
absl::StatusOr<std::string> CanaryBundle();

}  // namespace npuperf::server
