// bisect_bench: the bisection rules (server/compare/bisection_rules.h) on seeded simulated ranges,
// with msprof-sim's noise model (each sample's relative noise normal with sd MSPROF_SIM_NOISE,
// 0.01 by default, clamped at 3 sd, as sim/device_model.cc). A range of `commits` commits holds
// one culprit that makes the kernel `slow` slower, one noise-only commit after which the noise is
// three times as large around the same mean, and one commit whose runner fails (skipped). A run
// is one quick-mode job of five repeats on one device; runs are scheduled in waves (every device
// busy for one run time), so the wall time is counted in runs. For 1, 4 and 8 devices it prints:
//   found:   trials whose culprit (or culprit set, when the broken commit is next to it) holds the
//            true culprit, out of `trials` (goal: 10 of 10)
//   wall:    waves until the bisection ends, k-ary against binary bisections with the same
//            verdicts: one probe at a time with the ends and repeats on all devices, and the plain
//            one (git bisect run: one run at a time), with the ratios (goal with 8
//            devices: under 1/3 of the binary's)
//   device:  runs in all (device-time)
// and the same with speculation (spare devices probe while the ends run).
// Usage: bisect_bench [trials=10] [commits=64] [slow=0.10] [noise=0.01]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "server/compare/bisection_rules.h"

namespace {

using npuperf::server::BisectionDecision;
using npuperf::server::BisectionOptions;
using npuperf::server::BisectionPhase;
using npuperf::server::DecideBisection;
using npuperf::server::RevisionSamples;

constexpr int kRepeats = 5;
constexpr double kBaseUs = 120.0;

struct Range {
  int culprit = 0, noisy_from = 0, broken = 0;
};

// The seeded layout of a trial: three distinct commits in 2..commits-1.
Range Layout(std::mt19937_64& rng, int commits) {
  std::uniform_int_distribution<int> pick(2, commits - 1);
  Range r;
  r.culprit = pick(rng);
  do r.noisy_from = pick(rng);
  while (r.noisy_from == r.culprit);
  do r.broken = pick(rng);
  while (r.broken == r.culprit || r.broken == r.noisy_from);
  return r;
}

// One run of revision i: kRepeats samples, or a failure.
void Run(const Range& range, int i, double slow, double noise, std::mt19937_64& rng,
         RevisionSamples* rev) {
  if (i == range.broken) {
    rev->failed = true;
    return;
  }
  const double sd = i >= range.noisy_from ? 3 * noise : noise;
  std::normal_distribution<double> n(0, 1);
  const double mean = kBaseUs * (i >= range.culprit ? 1 + slow : 1);
  for (int k = 0; k < kRepeats; ++k) {
    rev->samples.push_back(mean * std::clamp(1 + sd * n(rng), 1 - 3 * sd, 1 + 3 * sd));
  }
  ++rev->runs;
}

struct Outcome {
  bool found = false;
  int waves = 0, runs = 0;
};

enum class Mode { kKAry, kBinary };

Outcome Bisect(const Range& range, int commits, int devices, Mode mode, bool speculate, double slow,
               double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<RevisionSamples> revs(static_cast<size_t>(commits + 1));
  BisectionOptions o;
  o.speculate = speculate;
  if (mode == Mode::kBinary) o.max_probes = 1;
  Outcome out;
  for (int wave = 0; wave < 1000; ++wave) {
    const BisectionDecision d = DecideBisection(revs, devices, o);
    if (d.phase == BisectionPhase::kRefused) return out;
    if (d.phase == BisectionPhase::kDone) {
      for (const auto& c : d.culprits) {
        out.found =
            out.found || std::count(c.candidates.begin(), c.candidates.end(), range.culprit) > 0;
      }
      if (d.culprits.size() != 1) out.found = false;  // a spurious second culprit is a miss
      return out;
    }
    if (d.to_run.empty()) return out;  // cannot happen in waves: nothing is in flight
    ++out.waves;
    for (int i : d.to_run) {
      Run(range, i, slow, noise, rng, &revs[static_cast<size_t>(i)]);
      ++out.runs;
    }
  }
  return out;
}

double Arg(int argc, char** argv, int i, double fallback) {
  return argc > i ? std::atof(argv[i]) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = static_cast<int>(Arg(argc, argv, 1, 10));
  const int commits = static_cast<int>(Arg(argc, argv, 2, 64));
  const double slow = Arg(argc, argv, 3, 0.10);
  const double noise = Arg(argc, argv, 4, 0.01);
  if (trials < 1 || commits < 4 || commits > 1024 || !(slow > 0) || !(noise >= 0)) {
    std::fprintf(stderr, "usage: bisect_bench [trials>=1] [commits 4..1024] [slow>0] [noise>=0]\n");
    return 2;
  }
  std::printf(
      "range: %d commits, culprit +%.0f%%, noise %.1f%% (x3 after the noise-only commit), "
      "one broken commit, %d seeded trials\n",
      commits, slow * 100, noise * 100, trials);
  for (bool speculate : {false, true}) {
    for (int devices : {1, 4, 8}) {
      int found = 0, binary_found = 0;
      double waves = 0, runs = 0, binary_waves = 0, binary_runs = 0, plain_waves = 0;
      for (int t = 0; t < trials; ++t) {
        std::mt19937_64 rng(1000 + static_cast<uint64_t>(t));
        const Range range = Layout(rng, commits);
        const Outcome k = Bisect(range, commits, devices, Mode::kKAry, speculate, slow, noise, t);
        const Outcome b = Bisect(range, commits, devices, Mode::kBinary, false, slow, noise, t);
        plain_waves += Bisect(range, commits, 1, Mode::kBinary, false, slow, noise, t).waves;
        found += k.found;
        binary_found += b.found;
        waves += k.waves;
        runs += k.runs;
        binary_waves += b.waves;
        binary_runs += b.runs;
      }
      std::printf(
          "bisect%s %d devices: culprit found %d/%d (binary %d/%d), wall %.1f runs (binary on "
          "%d devices %.1f, ratio %.2f; plain binary, one run at a time, %.1f, ratio %.2f), "
          "device %.1f runs (binary %.1f)\n",
          speculate ? " speculative" : "", devices, found, trials, binary_found, trials,
          waves / trials, devices, binary_waves / trials, waves / binary_waves,
          plain_waves / trials, waves / plain_waves, runs / trials, binary_runs / trials);
    }
  }
  return 0;
}
