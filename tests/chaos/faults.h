#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/chaos/fleet.h"
#include "tests/chaos/pg_cluster.h"

namespace npuperf::chaos {

enum class FaultKind {
  kAgentKill,    // SIGKILL of an agent, restarted 1-3 s later
  kReplicaKill,  // SIGKILL of a server replica, restarted 1-4 s later on its address
  kPgRestart,    // pg_ctl restart -m immediate
  kAgentPause,   // SIGSTOP of an agent for longer than the lease TTL, then SIGCONT
  kSimCrash,     // the agent's next msprof-sim run aborts (SIGABRT) after the app ran
  kSimHang,      // ... hangs past the job timeout before exporting
  kSimTruncate,  // ... cuts its last op_summary/task_time line
  kFullDisk,     // the agent's work directory (a tmpfs) filled for 6-12 s
};
inline constexpr int kFaultKinds = 8;
const char* FaultName(FaultKind kind);

// A fault of the seeded plan: when (from the start of the fault window), what,
// on which agent or replica, and for how long.
struct PlannedFault {
  std::chrono::milliseconds at{0};
  FaultKind kind = FaultKind::kAgentKill;
  int target = 0;
  std::chrono::milliseconds hold{0};
};

// Every kind in shuffled rounds, at random gaps averaging window / count,
// where count is at least one round of kinds and about one fault per 12 s.
std::vector<PlannedFault> PlanFaults(uint64_t seed, std::chrono::seconds window, int agents,
                                     std::chrono::milliseconds lease_ttl);

// What happened to one planned fault. Times are Unix milliseconds.
struct FaultRecord {
  PlannedFault plan;
  std::string target;    // "agent2", "server0", "postgres"
  int64_t start_ms = 0;  // injected
  int64_t end_ms = 0;    // undone (restart, SIGCONT, disk freed; a sim fault: when a run took it)
  int64_t answered_ms = 0;  // a restarted replica's first healthy /healthz
  bool skipped = false;     // not injected (target busy, no tmpfs, still pending)
  std::string note;
};

// Runs the plan against the fleet and the database in real time. Not
// thread-safe; the driver thread owns it.
class Injector {
 public:
  Injector(Fleet& fleet, PgCluster& pg, int job_timeout_s)
      : fleet_(fleet), pg_(pg), job_timeout_s_(job_timeout_s) {}

  // Returns once every fault was injected and undone (or abort is set).
  std::vector<FaultRecord> Run(const std::vector<PlannedFault>& plan,
                               const std::atomic<bool>& abort);
  // A sim fault's end is when a run took it (the wrapper's fired.log):
  // fills end_ms, or marks it "never taken" and removes the pending file.
  void ResolveSimFaults(std::vector<FaultRecord>& records);

 private:
  struct Action {
    int64_t due_ms;
    size_t record;
    bool undo;
    int tries;
  };
  void Inject(FaultRecord& r, std::vector<Action>& queue, size_t index);
  // False when it must be tried again (a restart that did not come up).
  bool Undo(FaultRecord& r);
  bool TargetFree(FaultRecord& r);
  void FillDisk(FaultRecord& r);

  Fleet& fleet_;
  PgCluster& pg_;
  const int job_timeout_s_;
  std::vector<bool> agent_busy_;
  std::vector<bool> replica_busy_;
};

int64_t NowMs();

}  // namespace npuperf::chaos
