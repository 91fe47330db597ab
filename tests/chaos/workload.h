#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tests/chaos/fleet.h"

namespace npuperf::chaos {

// One submitted collection of the soak.
struct Submitted {
  std::string id;
  std::string team;
  std::string kind;  // "quick-batch", "quick", "standard"
  int priority = 0;
  int jobs = 0;  // as the server answered the submission
  bool cancel_requested = false;
};

// The soak's batches: a thread that submits collections through the CLI
// (alternating replicas, retrying the other one with the same idempotency key
// while a replica is down) until `target_jobs` jobs are queued, spread over
// `spread`; about one collection in 15 is cancelled a few seconds later.
// Teams and priorities rotate (seeded). Thread-safe accessors.
class Workload {
 public:
  Workload(const Fleet& fleet, std::filesystem::path dir, uint64_t seed, int target_jobs,
           std::chrono::seconds spread);
  ~Workload();

  void Start();
  // Waits for the thread (it ends once the target is reached or stop is set).
  void Join();
  void RequestStop() { stop_ = true; }

  std::vector<Submitted> submitted();
  int submit_failures();
  // The team token of `team`.
  std::string TokenOf(const std::string& team) const;

 private:
  void Loop();
  // One collection; false when no replica took it within the retry window.
  bool SubmitOne(int n);
  void CancelDue(bool all);
  std::vector<std::string> SubmitArgs(int variant, int priority, int n) const;

  struct PendingCancel {
    std::string id;
    std::string token;
    Clock::MonotonicTime at;
  };

  const Fleet& fleet_;
  const std::filesystem::path dir_;
  const uint64_t seed_;
  const int target_jobs_;
  const std::chrono::seconds spread_;
  std::mt19937_64 rng_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::string> addresses_;
  std::vector<PendingCancel> cancels_;  // the thread's own

  absl::Mutex mu_;
  std::vector<Submitted> submitted_ ABSL_GUARDED_BY(mu_);
  int submit_failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace npuperf::chaos
