#pragma once

#include "agent/profiler_runner.h"

namespace npuperf::agent {

// posix_spawn in a new process group, stdout/stderr appended to files,
// waited through a pidfd. Thread-safe.
class SubprocessRunner final : public ProfilerRunner {
 public:
  absl::StatusOr<std::unique_ptr<ProfilerProcess>> Start(const ProfilerSpec& spec) override;
};

}  // namespace npuperf::agent
