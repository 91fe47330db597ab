#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/integration/process_harness.h"

namespace npuperf::chaos {

// The teams of the soak's batches: their names and bearer tokens (the
// servers' --tokens-file holds their sha256).
struct Team {
  std::string name;
  std::string token;
};

// One npuperf-server replica: restarted on the same gRPC address after a
// kill, so its agents reconnect to it.
struct Replica {
  std::unique_ptr<testing::Process> process;
  std::string address;          // gRPC HOST:PORT, fixed at the first start
  std::string metrics_address;  // /metrics and /healthz of the running process
  int incarnation = 0;
};

// One npuperf-agent on simulated host `host` (hosts share a lock dir, a
// msprof-sim state dir and conflict log), talking to replica `replica`.
// Its --msprof is a wrapper script that hands a pending fault (the file
// fault_dir/pending, taken atomically by the next run) to msprof-sim.
struct AgentSlot {
  std::unique_ptr<testing::Process> process;
  std::string host;
  int first_device = 0;
  int last_device = 0;
  int replica = 0;
  std::filesystem::path work_dir;  // a tmpfs of its own when mounted
  std::filesystem::path fault_dir;
  bool tmpfs = false;
  bool paused = false;
  int incarnation = 0;
};

// Two replicas on one database and the agents, all real binaries, in `dir`.
// Not thread-safe: the soak's driver thread owns it (the submitter only reads
// the addresses, which never change after Start).
class Fleet {
 public:
  struct Options {
    std::string db_url;
    int agents = 4;
    int devices_per_agent = 2;
    int lease_ttl_ms = 5'000;
    int heartbeat_ms = 1'000;
    // Each agent's work directory is a tmpfs of this size (the full-disk
    // fault fills it); 0: plain directories.
    int tmpfs_mib = 64;
  };
  Fleet(std::filesystem::path dir, Options options);
  ~Fleet();

  // Tokens, wrappers and mounts; both replicas, then every agent.
  absl::Status Start();
  // SIGTERM to agents, then replicas; unmounts the work dirs.
  void Stop();

  absl::Status StartReplica(int i);
  void KillReplica(int i);  // SIGKILL
  absl::Status StartAgent(int i);
  void KillAgent(int i);    // SIGKILL
  void PauseAgent(int i);   // SIGSTOP
  void ResumeAgent(int i);  // SIGCONT

  // Polls the replica's /healthz until it answers 200; false at the timeout.
  bool WaitReplicaHealthy(int i, std::chrono::seconds timeout);

  const std::vector<Team>& teams() const { return teams_; }
  std::vector<Replica>& replicas() { return replicas_; }
  const std::vector<Replica>& replicas() const { return replicas_; }
  std::vector<AgentSlot>& agents() { return agents_; }
  const std::vector<AgentSlot>& agents() const { return agents_; }
  const std::filesystem::path& dir() const { return dir_; }
  // Where msprof-sim of a host logs double-booked devices.
  std::filesystem::path ConflictLog(const std::string& host) const;
  // Whether every agent's work directory is a tmpfs.
  bool all_tmpfs() const;

 private:
  absl::Status WriteTokens();
  absl::Status PrepareAgent(int i);
  std::vector<std::string> ReplicaArgv(const std::string& listen) const;

  const std::filesystem::path dir_;
  const Options options_;
  std::vector<Team> teams_;
  std::vector<Replica> replicas_;
  std::vector<AgentSlot> agents_;
};

}  // namespace npuperf::chaos
