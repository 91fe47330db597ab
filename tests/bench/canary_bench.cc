// canary_bench: the canary rule (server/core/canary_rules.h) on simulated fleets, seeded, with
// msprof-sim's noise model: each canary's kernel time is the median of `repeats` task times whose
// relative noise is normal with sd MSPROF_SIM_NOISE (0.01 by default, as msprof-sim), and a run
// may be down-clocked (msprof-sim's MSPROF_SIM_DVFS=<MHz>:<p>), which the canary's own DVFS check
// sees (a clock-suspect canary is inconclusive). It prints:
//   detection: a fleet of 16 devices with one running `slow` (15 %) slower, canary rounds until
//              the rule quarantines it, in each of `trials` seeded trials (goal: <= 3 in 20 of 20)
//   false quarantines: healthy fleets of 16 over a simulated week of hourly canaries (goal: 0)
//   device time: the share a canary of `canary_s` device-seconds takes at the interval (goal < 2 %)
// and then the same through the service (what a fleet runs): the real Canaries driver
// (server/compare/canaries.h) over the real Scheduler and SQLite (":memory:") on a fake clock, 8
// agents of 2 devices leasing and reporting every canary, the store deciding quarantines:
//   service detection: rounds until the slow device is quarantined, in `trials` seeded trials
//   service false quarantines: healthy fleets over `week_trials` simulated weeks
//   server time: the wall time of one canary round (queue, 16 leases and results, judge)
// Usage: canary_bench [trials=20] [slow=0.15] [noise=0.01] [dvfs_p=0.01] [interval_s=3600]
//                     [canary_s=30] [week_trials=3]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "prometheus/registry.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/compare/canaries.h"
#include "server/compare/canary_operator.h"
#include "server/core/canary_rules.h"
#include "server/core/scheduler.h"
#include "tests/fakes/fake_clock.h"

namespace {

using npuperf::server::CanaryAction;
using npuperf::server::CanaryStreak;
using npuperf::server::CanaryVerdict;
using npuperf::server::JudgeCanary;
using npuperf::server::NextCanaryAction;

constexpr int kDevices = 16;
constexpr int kRepeats = 5;
constexpr double kBaseUs = 48.0;  // a small reference kernel

struct Canary {
  double kernel_us;
  bool clock_suspect;
};

// One canary of one device: the median of kRepeats noisy task times; with
// probability dvfs_p the whole run is at 800 of 1800 MHz and says so.
Canary Run(std::mt19937_64& rng, double slowdown, double noise, double dvfs_p) {
  std::normal_distribution<double> n(0, noise);
  std::bernoulli_distribution dip(dvfs_p);
  const bool down = dip(rng);
  std::vector<double> t;
  for (int r = 0; r < kRepeats; ++r) {
    t.push_back(kBaseUs * slowdown * (down ? 1800.0 / 800.0 : 1.0) * (1 + n(rng)));
  }
  std::nth_element(t.begin(), t.begin() + kRepeats / 2, t.end());
  return {t[kRepeats / 2], down};
}

// Rounds until device 0 (slow) is quarantined, or -1 (never within max_rounds);
// counts the others' false quarantines in *false_q.
int Simulate(uint64_t seed, double slow, double noise, double dvfs_p, int max_rounds,
             int* false_q) {
  std::mt19937_64 rng(seed);
  std::vector<CanaryStreak> streaks(kDevices);
  std::vector<bool> quarantined(kDevices, false);
  std::vector<std::vector<double>> history(kDevices);
  int detected = -1;
  for (int round = 1; round <= max_rounds; ++round) {
    std::vector<Canary> now;
    for (int d = 0; d < kDevices; ++d)
      now.push_back(Run(rng, d == 0 ? 1 + slow : 1, noise, dvfs_p));
    for (int d = 0; d < kDevices; ++d) {
      std::vector<double> peers;
      for (int o = 0; o < kDevices; ++o) {
        if (o != d && !now[o].clock_suspect) peers.push_back(now[o].kernel_us);
      }
      const auto j = JudgeCanary(now[d].kernel_us, peers, history[d], std::nullopt, "A2",
                                 now[d].clock_suspect);
      if (j.verdict == CanaryVerdict::kPass) history[d].push_back(now[d].kernel_us);
      if (history[d].size() > 5) history[d].erase(history[d].begin());
      const CanaryAction a = NextCanaryAction(quarantined[d], j.verdict, &streaks[d]);
      if (a == CanaryAction::kQuarantine) {
        quarantined[d] = true;
        if (d == 0 && slow > 0 && detected < 0) detected = round;
        if (d != 0 || slow == 0) ++*false_q;
      } else if (a == CanaryAction::kRelease) {
        quarantined[d] = false;
      }
    }
  }
  return detected;
}

// The fleet through the service: 8 agents of 2 Ascend910B2 devices, device h1:0 `slow` slower.
class ServiceFleet {
 public:
  ServiceFleet(uint64_t seed, double slow, double noise, double dvfs_p, double interval_s)
      : rng_(seed),
        slow_(slow),
        noise_(noise),
        dvfs_p_(dvfs_p),
        interval_(static_cast<int64_t>(interval_s * 1000)),
        store_(*npuperf::server::SqliteStore::Open(":memory:")),
        metrics_(registry_),
        scheduler_(*store_, clock_, metrics_, npuperf::server::SchedulerOptions()),
        canaries_(
            *store_, clock_, metrics_, scheduler_.device_health(),
            [this](const std::string& team, const npuperf::v1::SubmitCollectionRequest& req,
                   const std::map<std::string, std::string>& labels) {
              return scheduler_.SubmitForServer(team, req, labels);
            },
            [this](const std::string& team, const std::string& id, const std::string& reason) {
              return scheduler_.Cancel(team, id, reason).status();
            },
            npuperf::server::CanaryOptions{std::chrono::milliseconds(interval_),
                                           npuperf::server::kDefaultCanaryOpName}) {
    for (int h = 1; h <= kDevices / 2; ++h) {
      const std::string host = absl::StrCat("h", h);
      npuperf::v1::RegisterAgentRequest req;
      req.set_host(host);
      req.set_boot_id("boot");
      req.set_instance_id("i-" + host);
      for (int d = 0; d < 2; ++d) {
        auto* dev = req.add_devices();
        dev->set_device_id(d);
        dev->set_soc("Ascend910B2");
        dev->set_state(npuperf::v1::DEVICE_STATE_IDLE);
      }
      auto got = scheduler_.RegisterAgent(npuperf::server::AgentIdentity::ForHost(host), req);
      if (got.ok()) agents_.push_back({got->agent_id(), host});
    }
  }

  // One canary round; false when a call failed.
  bool Round() {
    if (!canaries_.Tick().ok()) return false;
    for (const auto& [agent, host] : agents_) {
      for (int d = 0; d < 2; ++d) {
        npuperf::v1::LeaseJobRequest lease;
        lease.set_agent_id(agent);
        auto* free = lease.add_free_devices();
        free->set_device_id(d);
        free->set_soc("Ascend910B2");
        const auto who = npuperf::server::AgentIdentity::ForHost(host);
        auto a = scheduler_.LeaseJob(who, lease, [] { return false; });
        if (!a.ok()) return false;
        if (!a->has_value()) continue;
        const Canary c = Run(rng_, host == "h1" && d == 0 ? 1 + slow_ : 1, noise_, dvfs_p_);
        npuperf::v1::ReportResultRequest r;
        r.set_agent_id(agent);
        r.set_job_id((*a)->job_id());
        r.set_attempt((*a)->attempt());
        r.set_fencing_token((*a)->fencing_token());
        r.set_lease_secret((*a)->lease_secret());
        r.set_update_uuid(absl::StrCat("u", (*a)->job_id()));
        r.set_outcome(npuperf::v1::ATTEMPT_OUTCOME_SUCCEEDED);
        auto* e = r.mutable_evidence();
        for (int i = 0; i < kRepeats; ++i) e->mutable_duration()->add_samples_us(c.kernel_us);
        e->mutable_duration()->set_aggregate_us(c.kernel_us);
        e->mutable_fingerprint()->set_soc("Ascend910B2");
        e->mutable_fingerprint()->set_host(host);
        e->mutable_fingerprint()->set_device_id(d);
        if (c.clock_suspect) e->mutable_dvfs()->set_status("suspect");
        if (!scheduler_.ReportResult(who, r).ok()) return false;
      }
    }
    if (!canaries_.Tick().ok()) return false;
    clock_.Advance(std::chrono::milliseconds(interval_));
    return true;
  }

  // Every quarantine the fleet ever had (released ones too).
  int EverQuarantined() {
    auto q = store_->ListQuarantines(true, 1000);
    return q.ok() ? static_cast<int>(q->size()) : -1;
  }

  // The devices quarantined now: whether h1:0 is, and how many others are.
  std::pair<bool, int> Quarantined() {
    auto q = store_->ListQuarantines(false, 100);
    bool slow = false;
    int others = 0;
    for (const auto& r : q.ok() ? *q : std::vector<npuperf::server::QuarantineRecord>()) {
      if (r.host == "h1" && r.device_id == 0) {
        slow = true;
      } else {
        ++others;
      }
    }
    return {slow, others};
  }

 private:
  std::mt19937_64 rng_;
  const double slow_, noise_, dvfs_p_;
  const int64_t interval_;
  npuperf::testing::FakeClock clock_;
  prometheus::Registry registry_;
  std::unique_ptr<npuperf::server::SqliteStore> store_;
  npuperf::server::ServerMetrics metrics_;
  npuperf::server::Scheduler scheduler_;
  npuperf::server::Canaries canaries_;
  std::vector<std::pair<std::string, std::string>> agents_;  // agent id, host
};

double Arg(int argc, char** argv, int i, double fallback) {
  return argc > i ? std::atof(argv[i]) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = static_cast<int>(Arg(argc, argv, 1, 20));
  const double slow = Arg(argc, argv, 2, 0.15);
  const double noise = Arg(argc, argv, 3, 0.01);
  const double dvfs_p = Arg(argc, argv, 4, 0.01);
  const double interval_s = Arg(argc, argv, 5, 3600);
  // A canary's device time: 7.7 s idle and 21 s in make demo under msprof-sim; real msprof starts
  // slower (docs/operations.md "Canaries").
  const double canary_s = Arg(argc, argv, 6, 30);
  const int week = static_cast<int>(7 * 24 * 3600 / interval_s);

  int within3 = 0, worst = 0, false_in_detection = 0;
  for (int t = 0; t < trials; ++t) {
    int false_q = 0;
    const int rounds = Simulate(1000 + t, slow, noise, dvfs_p, 10, &false_q);
    if (rounds > 0 && rounds <= 3) ++within3;
    worst = std::max(worst, rounds < 0 ? 99 : rounds);
    false_in_detection += false_q;
  }
  int false_week = 0;
  for (int t = 0; t < trials; ++t) Simulate(5000 + t, 0, noise, dvfs_p, week, &false_week);

  std::printf("canary_bench: %d devices, %d repeats per canary, noise sd %.3g, DVFS dips p=%.3g\n",
              kDevices, kRepeats, noise, dvfs_p);
  std::printf(
      "detection: one device %.0f %% slow quarantined within 3 canary rounds in %d of %d "
      "trials (worst %d rounds; goal 20 of 20); healthy devices quarantined meanwhile: %d\n",
      slow * 100, within3, trials, worst, false_in_detection);
  std::printf(
      "false quarantines: %d over %d healthy fleets x %d hourly canary rounds (a week; "
      "goal 0)\n",
      false_week, trials, week);
  std::printf("device time: a %.3g s canary every %.0f s is %.3f %% of device time (goal < 2 %%)\n",
              canary_s, interval_s, 100 * canary_s / interval_s);

  // Through the service.
  const int week_trials = static_cast<int>(Arg(argc, argv, 7, 3));
  int s_within3 = 0, s_worst = 0, s_false = 0, s_rounds = 0;
  npuperf::RealClock wall;
  const auto start = wall.MonotonicNow();
  for (int t = 0; t < trials; ++t) {
    ServiceFleet fleet(1000 + t, slow, noise, dvfs_p, interval_s);
    int rounds = -1;
    for (int r = 1; r <= 10; ++r) {
      if (!fleet.Round()) {
        std::fprintf(stderr, "canary_bench: a service call failed\n");
        return 1;
      }
      ++s_rounds;
      const auto [found, others] = fleet.Quarantined();
      if (found && rounds < 0) rounds = r;
      if (found) {
        s_false += others;
        break;
      }
    }
    if (rounds > 0 && rounds <= 3) ++s_within3;
    s_worst = std::max(s_worst, rounds < 0 ? 99 : rounds);
  }
  int s_false_week = 0;
  for (int t = 0; t < week_trials; ++t) {
    ServiceFleet fleet(5000 + t, 0, noise, dvfs_p, interval_s);
    for (int r = 0; r < week; ++r) {
      if (!fleet.Round()) return 1;
      ++s_rounds;
    }
    s_false_week += fleet.EverQuarantined();
  }
  const double wall_s = std::chrono::duration<double>(wall.MonotonicNow() - start).count();
  std::printf(
      "service detection: quarantined within 3 canary rounds in %d of %d trials (worst %d; goal "
      "20 of 20); healthy devices quarantined meanwhile: %d\n",
      s_within3, trials, s_worst, s_false);
  std::printf(
      "service false quarantines: %d over %d healthy fleets x %d canary rounds (a week; goal 0)\n",
      s_false_week, week_trials, week);
  std::printf("server time: %.2f ms per canary round of %d devices (%d rounds in %.1f s)\n",
              1000 * wall_s / s_rounds, kDevices, s_rounds, wall_s);
  return 0;
}
