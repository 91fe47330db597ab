#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::sim {

// Runs `argv` as a child with the parent's environment plus `extra_env`
// (overriding), stdout/stderr inherited, and waits for it. SIGINT/SIGTERM
// received meanwhile are forwarded to the child. Returns the shell-style exit
// status: the exit code, or 128 + signal. NotFound when argv[0] cannot be run.
absl::StatusOr<int> RunChild(const std::vector<std::string>& argv,
                             const std::map<std::string, std::string>& extra_env);

}  // namespace npuperf::sim
