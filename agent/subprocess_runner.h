#pragma once

#include "agent/profiler_runner.h"
#include "common/clock.h"

namespace npuperf::agent {

// fork + execve in a new process group, stdout/stderr appended to files,
// waited through a pidfd. The child gets PR_SET_PDEATHSIG(SIGKILL): it dies
// when the thread that started it (the job's thread) or the agent dies, even
// by SIGKILL. It inherits no descriptor but stdin (/dev/null), stdout and
// stderr, whatever O_CLOEXEC says, and starts with default signal handling.
// With ProfilerSpec::contain a keeper sits between the agent and the program
// (agent/child_process.h). Start must be called from a thread that outlives
// the child.
// Wait deadlines and the Terminate grace are measured on the injected clock (the
// time left is recomputed from it between pidfd polls). Thread-safe.
class SubprocessRunner final : public ProfilerRunner {
 public:
  explicit SubprocessRunner(Clock& clock) : clock_(clock) {}

  absl::StatusOr<std::unique_ptr<ProfilerProcess>> Start(const ProfilerSpec& spec) override;

 private:
  Clock& clock_;
};

}  // namespace npuperf::agent
