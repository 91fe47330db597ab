// canary_bench: the canary rule (server/core/canary_rules.h) on simulated fleets, seeded, with
// msprof-sim's noise model: each canary's kernel time is the median of `repeats` task times whose
// relative noise is normal with sd MSPROF_SIM_NOISE (0.01 by default, as msprof-sim), and a run
// may be down-clocked (msprof-sim's MSPROF_SIM_DVFS=<MHz>:<p>), which the canary's own DVFS check
// sees (a clock-suspect canary is inconclusive). It prints:
//   detection: a fleet of 16 devices with one running `slow` (15 %) slower, canary rounds until
//              the rule quarantines it, in each of `trials` seeded trials (goal: <= 3 in 20 of 20)
//   false quarantines: healthy fleets of 16 over a simulated week of hourly canaries (goal: 0)
//   device time: the share a canary of `canary_s` device-seconds takes at the interval (goal < 2 %)
// Usage: canary_bench [trials=20] [slow=0.15] [noise=0.01] [dvfs_p=0.01] [interval_s=3600]
//                     [canary_s=2]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "server/core/canary_rules.h"

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
  const double canary_s = Arg(argc, argv, 6, 2);
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
  return 0;
}
