#include "tests/bench/fleet/evidence_capture.h"

#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/msprof_modes.h"
#include "agent/subprocess_runner.h"
#include "evidence/evidence.h"
#include "evidence/evidence_proto.h"
#include "evidence/launch.h"
#include "evidence/task_time.h"

namespace npuperf::fleet {

absl::StatusOr<v1::Evidence> CaptureEvidence(const CaptureOptions& options, Clock& clock) {
  std::error_code ec;
  std::filesystem::create_directories(options.work_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat(options.work_dir.string(), ": ", ec.message()));
  const std::filesystem::path output = options.work_dir / "capture";
  agent::ProfilerSpec spec;
  spec.argv = agent::QuickArgv(options.msprof, output.string(),
                               {"python3", (options.operator_dir / options.runner).string()});
  spec.env = options.env;
  spec.cwd = options.operator_dir.string();
  spec.stdout_path = (options.work_dir / "capture.out").string();
  spec.stderr_path = (options.work_dir / "capture.err").string();
  agent::SubprocessRunner runner(clock);
  auto child = runner.Start(spec);
  if (!child.ok()) return child.status();
  const agent::ExitStatus exit = (*child)->Wait(clock.MonotonicNow() + std::chrono::minutes(2));
  if (!exit.ok()) {
    return absl::InternalError(
        absl::StrCat("msprof run ", exit.ToString(), " (see ", spec.stderr_path, ")"));
  }
  auto launch = evidence::ParseLaunchSelector("unique");
  if (!launch.ok()) return launch.status();
  auto timing = evidence::ReadQuickTiming(output, options.op_name, *launch);
  if (!timing.ok()) return timing.status();
  v1::Evidence e;
  evidence::ToProto(evidence::QuickEvidence({*std::move(timing)}), &e);
  return e;
}

}  // namespace npuperf::fleet
