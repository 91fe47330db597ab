#include "tests/chaos/faults.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"

namespace npuperf::chaos {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::WallClock;

int64_t NowMs() {
  return WallClock().SystemNow().time_since_epoch() / std::chrono::milliseconds(1);
}

const char* FaultName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kAgentKill: return "agent kill -9";
    case FaultKind::kReplicaKill: return "server kill -9";
    case FaultKind::kPgRestart: return "postgres restart -m immediate";
    case FaultKind::kAgentPause: return "agent SIGSTOP > lease TTL";
    case FaultKind::kSimCrash: return "msprof-sim crash";
    case FaultKind::kSimHang: return "msprof-sim hang";
    case FaultKind::kSimTruncate: return "msprof-sim truncated output";
    case FaultKind::kFullDisk: return "agent work dir full";
  }
  return "?";
}

std::vector<PlannedFault> PlanFaults(uint64_t seed, std::chrono::seconds window, int agents,
                                     milliseconds lease_ttl) {
  std::mt19937_64 rng(seed);
  const int64_t window_ms = window.count() * 1000;
  const int count = std::max<int>(kFaultKinds, static_cast<int>(window.count() / 12));
  const int64_t gap = window_ms / (count + 1);
  std::vector<FaultKind> kinds;
  while (static_cast<int>(kinds.size()) < count) {
    std::vector<FaultKind> round;
    for (int k = 0; k < kFaultKinds; ++k) round.push_back(static_cast<FaultKind>(k));
    std::shuffle(round.begin(), round.end(), rng);
    kinds.insert(kinds.end(), round.begin(), round.end());
  }
  std::vector<PlannedFault> plan;
  int64_t at = gap / 2;
  for (int i = 0; i < count; ++i) {
    PlannedFault f;
    f.kind = kinds[i];
    f.at = milliseconds(at);
    const bool replica = f.kind == FaultKind::kReplicaKill;
    f.target = static_cast<int>(rng() % (replica ? 2 : agents));
    switch (f.kind) {
      case FaultKind::kAgentKill: f.hold = milliseconds(1000 + rng() % 2000); break;
      case FaultKind::kReplicaKill: f.hold = milliseconds(1000 + rng() % 3000); break;
      case FaultKind::kAgentPause: f.hold = lease_ttl + milliseconds(2000 + rng() % 3000); break;
      case FaultKind::kFullDisk: f.hold = milliseconds(6000 + rng() % 6000); break;
      default: break;
    }
    plan.push_back(f);
    at += gap / 2 + static_cast<int64_t>(rng() % static_cast<uint64_t>(gap));  // mean: gap
  }
  return plan;
}

bool Injector::TargetFree(FaultRecord& r) {
  switch (r.plan.kind) {
    case FaultKind::kPgRestart: return true;
    case FaultKind::kReplicaKill: return !replica_busy_[r.plan.target];
    case FaultKind::kSimCrash:
    case FaultKind::kSimHang:
    case FaultKind::kSimTruncate:
      return !fs::exists(fleet_.agents()[r.plan.target].fault_dir / "pending");
    default: return !agent_busy_[r.plan.target];
  }
}

void Injector::FillDisk(FaultRecord& r) {
  const AgentSlot& a = fleet_.agents()[r.plan.target];
  if (!a.tmpfs) {
    r.skipped = true;
    r.note = "no tmpfs on its work dir";
    return;
  }
  const fs::path fill = a.work_dir / "chaos-fill";
  const int fd = ::open(fill.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  std::string chunk(1 << 20, 'x');
  int64_t written = 0;
  while (fd >= 0) {
    const ssize_t n = ::write(fd, chunk.data(), chunk.size());
    if (n <= 0) break;
    written += n;
  }
  if (fd >= 0) ::close(fd);
  r.note = absl::StrCat(written >> 20, " MiB written until ", std::strerror(ENOSPC));
}

void Injector::Inject(FaultRecord& r, std::vector<Action>& queue, size_t index) {
  const int t = r.plan.target;
  r.start_ms = NowMs();
  switch (r.plan.kind) {
    case FaultKind::kAgentKill: fleet_.KillAgent(t); break;
    case FaultKind::kReplicaKill: fleet_.KillReplica(t); break;
    case FaultKind::kAgentPause: fleet_.PauseAgent(t); break;
    case FaultKind::kFullDisk: FillDisk(r); break;
    case FaultKind::kPgRestart: {
      absl::Status s = pg_.RestartImmediate();
      r.end_ms = NowMs();
      if (!s.ok()) r.note = s.ToString();
      return;
    }
    default: {
      const std::string spec = r.plan.kind == FaultKind::kSimCrash ? "crash"
                               : r.plan.kind == FaultKind::kSimHang
                                   ? absl::StrCat("hang:", job_timeout_s_ + 15)
                                   : "truncate";
      const AgentSlot& a = fleet_.agents()[t];
      std::ofstream(a.fault_dir / "pending.tmp") << spec;
      fs::rename(a.fault_dir / "pending.tmp", a.fault_dir / "pending");
      r.note = spec;
      return;
    }
  }
  if (r.skipped) return;
  if (r.plan.kind == FaultKind::kReplicaKill) {
    replica_busy_[t] = true;
  } else {
    agent_busy_[t] = true;
  }
  queue.push_back({r.start_ms + r.plan.hold.count(), index, true, 0});
}

bool Injector::Undo(FaultRecord& r) {
  const int t = r.plan.target;
  switch (r.plan.kind) {
    case FaultKind::kAgentKill:
      if (!fleet_.StartAgent(t).ok()) return false;
      break;
    case FaultKind::kReplicaKill: {
      absl::Status s = fleet_.StartReplica(t);
      if (!s.ok()) {
        r.note = s.ToString().substr(0, 200);
        return false;
      }
      if (fleet_.WaitReplicaHealthy(t, std::chrono::seconds(60))) r.answered_ms = NowMs();
      break;
    }
    case FaultKind::kAgentPause: fleet_.ResumeAgent(t); break;
    case FaultKind::kFullDisk: fs::remove(fleet_.agents()[t].work_dir / "chaos-fill"); break;
    default: break;
  }
  if (r.end_ms == 0) r.end_ms = NowMs();
  if (r.plan.kind == FaultKind::kReplicaKill) {
    replica_busy_[t] = false;
  } else {
    agent_busy_[t] = false;
  }
  return true;
}

std::vector<FaultRecord> Injector::Run(const std::vector<PlannedFault>& plan,
                                       const std::atomic<bool>& abort) {
  agent_busy_.assign(fleet_.agents().size(), false);
  replica_busy_.assign(fleet_.replicas().size(), false);
  std::vector<FaultRecord> records(plan.size());
  std::vector<Action> queue;
  const int64_t start = NowMs();
  for (size_t i = 0; i < plan.size(); ++i) {
    records[i].plan = plan[i];
    records[i].target = plan[i].kind == FaultKind::kPgRestart ? "postgres"
                        : plan[i].kind == FaultKind::kReplicaKill
                            ? absl::StrCat("server", plan[i].target)
                            : absl::StrCat("agent", plan[i].target);
    queue.push_back({start + plan[i].at.count(), i, false, 0});
  }
  while (!queue.empty()) {
    auto next = std::min_element(queue.begin(), queue.end(), [](const Action& a, const Action& b) {
      return a.due_ms < b.due_ms;
    });
    // An abort still undoes every fault in place (restarts, SIGCONT, disk).
    if (abort && !next->undo) {
      records[next->record].skipped = true;
      records[next->record].note = "aborted";
      queue.erase(next);
      continue;
    }
    if (const int64_t wait = next->due_ms - NowMs(); wait > 0 && !abort) {
      WallClock().SleepFor(milliseconds(std::min<int64_t>(wait, 200)));
      continue;
    }
    const Action a = *next;
    queue.erase(next);
    FaultRecord& r = records[a.record];
    if (!a.undo) {
      if (!TargetFree(r)) {
        r.skipped = true;
        r.note = "target busy with another fault";
        continue;
      }
      std::printf("chaos: t=%5.1fs %-30s %s %s\n", (NowMs() - start) / 1000.0,
                  FaultName(r.plan.kind), r.target.c_str(), r.note.c_str());
      std::fflush(stdout);
      Inject(r, queue, a.record);
    } else if (!Undo(r) && a.tries < 60) {
      queue.push_back({NowMs() + 1000, a.record, true, a.tries + 1});
    }
  }
  return records;
}

void Injector::ResolveSimFaults(std::vector<FaultRecord>& records) {
  std::map<int, std::vector<int64_t>> fired;  // by agent, in order
  for (size_t i = 0; i < fleet_.agents().size(); ++i) {
    const AgentSlot& a = fleet_.agents()[i];
    fs::remove(a.fault_dir / "pending");
    std::ifstream in(a.fault_dir / "fired.log");
    for (int64_t ms; in >> ms;) {
      fired[static_cast<int>(i)].push_back(ms);
      in.ignore(1 << 20, '\n');
    }
  }
  std::map<int, size_t> taken;
  for (auto& r : records) {
    const auto k = r.plan.kind;
    if (r.skipped ||
        (k != FaultKind::kSimCrash && k != FaultKind::kSimHang && k != FaultKind::kSimTruncate)) {
      continue;
    }
    auto& list = fired[r.plan.target];
    size_t& n = taken[r.plan.target];
    if (n < list.size()) {
      r.end_ms = list[n++];
    } else {
      r.note += " (never taken: no run on that agent before the end)";
    }
  }
}

}  // namespace npuperf::chaos
