#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/clock.h"
#include "npuperf/v1/evidence.pb.h"
#include "tests/bench/fleet/job_log.h"

namespace npuperf::fleet {

class Reporter;      // fleet.cc
class VirtualAgent;  // virtual_agent.h

// What the simulated fleet is made of. Every field has its default.
struct FleetOptions {
  // gRPC HOST:PORT of each server replica; agent i talks to servers[i % n].
  std::vector<std::string> servers;
  // Virtual agents (hosts "fleet-<i>") and the devices of each (ids 0..n-1).
  // Default: 25 x 4 = 100 devices.
  int agents = 25;
  int devices_per_agent = 4;
  // SoC every device reports. Default: Ascend910B2.
  std::string soc = "Ascend910B2";
  // How long a leased job "runs" before its result is reported. Default: 1 s.
  std::chrono::milliseconds job_duration{1'000};
  // ReportProgress calls per job, spread over its run (the real agent sends
  // one per phase; at least the first moves the job to RUNNING). Default: 1.
  int progress_per_job = 1;
  // The evidence every succeeded result carries (CaptureEvidence). Required.
  v1::Evidence evidence;
  // Threads that send the progress reports and results when they fall due.
  // Default: 32.
  int reporters = 32;
  // Agents sharing one gRPC connection (each holds two streams, its session
  // and its lease poll; the server allows 100 per connection). Default: 40.
  int agents_per_connection = 40;
};

// Counters of what went wrong (all zero in a clean run).
struct FleetErrors {
  int64_t lease_errors = 0;     // LeaseJob calls that failed
  int64_t report_errors = 0;    // ReportResult calls refused or failed for good
  int64_t progress_errors = 0;  // ReportProgress calls that failed
  int64_t session_ends = 0;     // AgentSession streams that ended early
  // KILL directives on the session: a heartbeat built just before a result
  // was acknowledged names a lease that is gone (the real agent sees the same
  // race and ignores it; more means leases were lost).
  int64_t kills = 0;
  // KILL directives for a job whose result was not yet sent: a lease the
  // server dropped while the agent still ran it (0 in a sound run).
  int64_t kills_running = 0;
  int64_t cancels = 0;      // cancels pushed on the session or by ReportProgress
  std::string first_error;  // the first failed call's status, for the figures
  // Not an error: progress reports sent in heartbeats, not by ReportProgress
  // (a server that reads them there).
  int64_t progress_in_heartbeats = 0;
};

// Many virtual agents in one process over the real AgentService protocol:
// each registers like npuperf-agent (host, boot id, instance, slot, devices),
// keeps an AgentSession with heartbeats naming its running jobs and their
// lease secrets (agent::ServerChannel::RunSession), long-polls LeaseJob
// offering every free device at once (as Agent::LeaseOnce does), and in place
// of msprof waits job_duration on the clock, sending progress_per_job
// ReportProgress calls and then a ReportResult with `evidence` (which the
// server validates like any other). Thread-safe.
class Fleet {
 public:
  Fleet(FleetOptions options, Clock& clock);
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // Registers every agent, then starts their sessions and lease loops.
  absl::Status Start();
  // Stops offering devices (no new leases); running jobs go on to report.
  void StopLeasing();
  // Waits up to `timeout` for every running job's result to be sent; true
  // when none is left.
  bool Drain(std::chrono::milliseconds timeout);
  // Ends the sessions and joins every thread (also in the destructor).
  void Stop();

  int devices() const { return options_.agents * options_.devices_per_agent; }
  const JobLog& log() const { return log_; }
  FleetErrors errors() const;

 private:
  FleetOptions options_;
  Clock& clock_;
  JobLog log_;
  std::unique_ptr<Reporter> reporter_;
  std::vector<std::unique_ptr<VirtualAgent>> agents_;
  bool stopped_ = false;
};

}  // namespace npuperf::fleet
