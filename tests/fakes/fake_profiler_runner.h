#pragma once

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/profiler_runner.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::testing {

// A ProfilerRunner whose children are scripted (agent/profiler_runner.h;
// style.md §4, seam 4). Each Start takes the outcome of the first rule (On)
// whose match accepts the spec, else a clean exit 0. A child that exits (with
// a code or by a signal) has done its work by the time Start returns: its
// stderr text is appended to the spec's stderr file and its prof_tree (a
// msprof output fixture such as tests/evidence/testdata/group_a2_e2/PROF_Memory)
// is copied into the --output= directory its argv names, so the real evidence
// parser reads it. A hanging child runs until Terminate (then it dies by
// SIGTERM) or, for one Wait, until that Wait's deadline on the FakeClock: a
// hang times out only when the test advances the clock, never in real time.
// Records every spec started. Children must not outlive the runner.
// Thread-safe.
class FakeProfilerRunner final : public agent::ProfilerRunner {
 public:
  // How a scripted child ends.
  struct Outcome {
    enum class Kind { kExit, kSignal, kHang };
    Kind kind = Kind::kExit;
    int code = 0;                     // the exit code (kExit) or signal (kSignal)
    std::filesystem::path prof_tree;  // copied into --output=DIR; empty: nothing
    std::string stderr_text;          // appended to the child's stderr file
  };
  static Outcome Exit(int code, std::filesystem::path prof_tree = {},
                      std::string stderr_text = "") {
    return {Outcome::Kind::kExit, code, std::move(prof_tree), std::move(stderr_text)};
  }
  static Outcome KilledBy(int signal) { return {Outcome::Kind::kSignal, signal, {}, ""}; }
  static Outcome Hang() { return {Outcome::Kind::kHang, 0, {}, ""}; }

  using Match = std::function<bool(const agent::ProfilerSpec&)>;
  // Specs whose argv has an element equal to arg.
  static Match HasArg(std::string arg) {
    return [arg = std::move(arg)](const agent::ProfilerSpec& spec) {
      return std::find(spec.argv.begin(), spec.argv.end(), arg) != spec.argv.end();
    };
  }

  explicit FakeProfilerRunner(FakeClock& clock) : clock_(clock) {}

  // Children that `match` accepts end as `outcome` (earlier rules win).
  void On(Match match, Outcome outcome) {
    absl::MutexLock lock(&mu_);
    rules_.emplace_back(std::move(match), std::move(outcome));
  }
  // Called on every Start, before the child's outcome (e.g. to see which
  // device locks are held while it runs).
  void set_on_start(std::function<void(const agent::ProfilerSpec&)> hook) {
    absl::MutexLock lock(&mu_);
    on_start_ = std::move(hook);
  }

  absl::StatusOr<std::unique_ptr<agent::ProfilerProcess>> Start(
      const agent::ProfilerSpec& spec) override {
    std::function<void(const agent::ProfilerSpec&)> hook;
    Outcome outcome;
    {
      absl::MutexLock lock(&mu_);
      started_.push_back(spec);
      hook = on_start_;
      outcome = Pick(spec);
    }
    if (hook) hook(spec);
    if (auto s = Produce(spec, outcome); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    const int pid = next_pid_++;
    Child& child = children_[pid];
    child.ended = outcome.kind != Outcome::Kind::kHang;
    if (!child.ended) ++live_hangs_;
    if (outcome.kind == Outcome::Kind::kExit) child.status.exit_code = outcome.code;
    if (outcome.kind == Outcome::Kind::kSignal) child.status.signal = outcome.code;
    return std::unique_ptr<agent::ProfilerProcess>(new Process(*this, pid));
  }

  // Every spec started so far, in order.
  std::vector<agent::ProfilerSpec> started() {
    absl::MutexLock lock(&mu_);
    return started_;
  }
  // Hanging children that Terminate (or their handle's destruction) ended.
  int terminated() {
    absl::MutexLock lock(&mu_);
    return terminated_;
  }
  // Blocks until at least `at_least` hanging children are alive and each live
  // one waits in Wait with a deadline after the clock's present time, so the
  // next Advance that reaches that deadline wakes it (at_least 0: also when no
  // hanging child is left). false if that takes a minute of real time (a
  // failing test ends instead of hanging).
  bool AwaitHangsParked(int at_least) {
    const Clock::MonotonicTime now = clock_.MonotonicNow();
    absl::MutexLock lock(&mu_);
    auto parked = [this, now, at_least]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      const auto armed = std::count_if(waits_.begin(), waits_.end(),
                                       [now](const auto& w) { return w.second > now; });
      return live_hangs_ >= at_least && armed == live_hangs_;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&parked), absl::Seconds(60));
  }

 private:
  struct Child {
    bool ended = false;
    agent::ExitStatus status;
  };

  class Process final : public agent::ProfilerProcess {
   public:
    Process(FakeProfilerRunner& runner, int pid) : runner_(runner), pid_(pid) {}
    ~Process() override { runner_.TerminateChild(pid_); }
    int pid() const override { return pid_; }
    agent::ExitStatus Wait(Clock::MonotonicTime deadline) override {
      return runner_.WaitChild(pid_, deadline);
    }
    agent::ExitStatus Terminate(std::chrono::milliseconds) override {
      return runner_.TerminateChild(pid_);
    }

   private:
    FakeProfilerRunner& runner_;
    const int pid_;
  };

  Outcome Pick(const agent::ProfilerSpec& spec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& [match, outcome] : rules_) {
      if (match(spec)) return outcome;
    }
    return Exit(0);
  }

  // What a real child leaves behind: its output files, and the msprof tree.
  static absl::Status Produce(const agent::ProfilerSpec& spec, const Outcome& outcome) {
    std::ofstream(spec.stdout_path, std::ios::app);
    std::ofstream(spec.stderr_path, std::ios::app) << outcome.stderr_text;
    if (outcome.prof_tree.empty() || outcome.kind == Outcome::Kind::kHang) return absl::OkStatus();
    auto output = std::find_if(spec.argv.begin(), spec.argv.end(), [](const std::string& a) {
      return absl::StartsWith(a, "--output=");
    });
    if (output == spec.argv.end()) {
      return absl::InternalError("fake profiler: a prof_tree for an argv without --output=");
    }
    const std::filesystem::path dir = output->substr(std::string("--output=").size());
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::copy(outcome.prof_tree, dir, std::filesystem::copy_options::recursive, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("fake profiler: copy ", outcome.prof_tree.string(), ": ", ec.message()));
    }
    return absl::OkStatus();
  }

  agent::ExitStatus WaitChild(int pid, Clock::MonotonicTime deadline) {
    absl::MutexLock lock(&mu_);
    Child& child = children_[pid];
    if (!child.ended) {
      auto wait = waits_.emplace(pid, deadline);
      auto ended = [&child]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return child.ended; };
      clock_.AwaitWithDeadline(mu_, absl::Condition(&ended), deadline);
      waits_.erase(wait);
    }
    if (!child.ended) return agent::ExitStatus{.timed_out = true};
    return child.status;
  }

  agent::ExitStatus TerminateChild(int pid) {
    absl::MutexLock lock(&mu_);
    Child& child = children_[pid];
    if (!child.ended) {
      child.ended = true;
      child.status.signal = SIGTERM;
      ++terminated_;
      --live_hangs_;
    }
    return child.status;
  }

  FakeClock& clock_;
  absl::Mutex mu_;
  std::vector<std::pair<Match, Outcome>> rules_ ABSL_GUARDED_BY(mu_);
  std::function<void(const agent::ProfilerSpec&)> on_start_ ABSL_GUARDED_BY(mu_);
  std::vector<agent::ProfilerSpec> started_ ABSL_GUARDED_BY(mu_);
  std::map<int, Child> children_ ABSL_GUARDED_BY(mu_);
  // The Waits in progress: pid and deadline.
  std::multimap<int, Clock::MonotonicTime> waits_ ABSL_GUARDED_BY(mu_);
  int next_pid_ ABSL_GUARDED_BY(mu_) = 10'000;
  int terminated_ ABSL_GUARDED_BY(mu_) = 0;
  // Hanging children not ended yet.
  int live_hangs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace npuperf::testing
