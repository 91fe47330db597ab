#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "agent/server_channel.h"
#include "common/clock.h"
#include "grpcpp/channel.h"
#include "npuperf/v1/agent_service.pb.h"
#include "tests/bench/fleet/fleet.h"
#include "tests/bench/fleet/job_log.h"
#include "tests/bench/fleet/reporter.h"

namespace npuperf::fleet {

// One simulated npuperf-agent: host "fleet-<index>" with devices
// 0..devices_per_agent-1, on agent::ServerChannel (the agent's own gRPC
// code). Two threads: the session (heartbeats every interval the server
// asked for, naming the running jobs with their lease secrets) and the lease
// loop (one LeaseJob long-poll at a time offering every free device; a
// finished job's device is offered at once; agent i starts polling i/agents
// of a job duration late, so the fleet is not in step). A leased job's progress reports
// and result are queued on the shared Reporter for when they fall due; the
// reports go with the next heartbeat when the server reads them there
// (RegisterAgentResponse.progress_in_heartbeats), as npuperf-agent sends them.
// Thread-safe.
class VirtualAgent {
 public:
  VirtualAgent(int index, const FleetOptions& options, std::shared_ptr<grpc::Channel> channel,
               Clock& clock, JobLog& log, Reporter& reporter);
  ~VirtualAgent();
  VirtualAgent(const VirtualAgent&) = delete;
  VirtualAgent& operator=(const VirtualAgent&) = delete;

  absl::Status Register();
  // Starts the session and lease threads. REQUIRES: Register() succeeded.
  void Start();
  // No new lease polls; the pending one is cancelled.
  void StopLeasing();
  // Ends the session and joins both threads.
  void Stop();
  FleetErrors errors();

 private:
  struct Device {
    int id = 0;
    bool busy = false;
    bool reporting = false;  // its result is being sent
    v1::JobAssignment job;   // when busy
    int64_t record = -1;     // JobLog id, when busy
    // Its newest progress not yet sent, when the server reads progress from
    // heartbeats (the next heartbeat takes it, as npuperf-agent's does).
    std::optional<v1::JobProgress> news;
  };

  void SessionLoop();
  void LeaseLoop();
  v1::Heartbeat BuildHeartbeat();
  void OnSessionResponse(const v1::AgentSessionResponse& resp);
  // A lease for one of the offered devices: marks it busy and queues its
  // progress reports and result. called: when its LeaseJob call started.
  void Assigned(const v1::JobAssignment& a, Clock::MonotonicTime called);
  void SendProgress(int slot, int step);
  void SendResult(int slot);
  // The device's job is over: free for the next offer.
  void Release(int slot);
  // Waits up to d for stop_ (or leasing_ off, for the lease loop).
  void Pause(std::chrono::milliseconds d);

  const int index_;
  const FleetOptions& options_;
  Clock& clock_;
  JobLog& log_;
  Reporter& reporter_;
  agent::ServerChannel channel_;
  std::string agent_id_;
  int heartbeat_ms_ = 1000;
  bool progress_in_heartbeats_ = false;  // the registration's answer
  int64_t started_ms_ = 0;

  absl::Mutex mu_;
  std::vector<Device> devices_ ABSL_GUARDED_BY(mu_);
  bool leasing_ ABSL_GUARDED_BY(mu_) = true;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t results_sent_ ABSL_GUARDED_BY(mu_) = 0;
  FleetErrors errors_ ABSL_GUARDED_BY(mu_);
  std::thread session_;
  std::thread lease_;
};

}  // namespace npuperf::fleet
