// change_points_bench: what FindChangePoints costs and how often it cries
// wolf, on seeded synthetic series (docs/comparisons.md, "Change points").
//
//   change_points_bench [--series=500]
//
// Prints, for 1 % lognormal noise: the share of flat 40-point series with a
// change (floor off, and the default 2 % floor), the share of 40-point series
// with one 5 % step found at the right round (±1), and the time of one call on
// 100 and 1,000 points, flat and with three steps (the worst case a
// ListRounds page can ask for).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/clock.h"
#include "server/compare/change_points.h"

namespace {

using npuperf::server::ChangePointOptions;
using npuperf::server::FindChangePoints;

std::vector<double> Series(int n, const std::vector<int>& steps, double step_pct, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 0.01);
  std::vector<double> v;
  double level = 100;
  size_t next = 0;
  for (int i = 0; i < n; ++i) {
    if (next < steps.size() && i == steps[next]) {
      level *= 1 + (next % 2 == 0 ? step_pct : -step_pct / 2) / 100;
      ++next;
    }
    v.push_back(level * std::exp(z(rng)));
  }
  return v;
}

// The one clock of the bench (benchmarks measure real time; style.md §4).
npuperf::RealClock& BenchClock() {
  static auto* clock = new npuperf::RealClock();
  return *clock;
}

double MillisOf(const std::vector<double>& x) {
  const auto start = BenchClock().MonotonicNow();
  volatile size_t found = FindChangePoints(x).size();
  (void)found;
  return std::chrono::duration<double, std::milli>(BenchClock().MonotonicNow() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int series = 500;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--series=", 0) == 0) {
      series = std::atoi(a.c_str() + 9);
    } else {
      std::fprintf(stderr, "usage: change_points_bench [--series=N]\n");
      return 2;
    }
  }
  ChangePointOptions no_floor;
  no_floor.min_change_pct = 0;
  int flat_any = 0, flat_floor = 0, step_found = 0;
  for (int s = 0; s < series; ++s) {
    auto flat = Series(40, {}, 0, 1000 + s);
    flat_any += !FindChangePoints(flat, no_floor).empty();
    flat_floor += !FindChangePoints(flat).empty();
    auto step = Series(40, {20}, 5, 5000 + s);
    auto cps = FindChangePoints(step);
    step_found += cps.size() == 1 && std::abs(cps[0].index - 20) <= 1;
  }
  std::printf("flat 40 points, 1%% noise: %d/%d with a change (no floor), %d/%d (2%% floor)\n",
              flat_any, series, flat_floor, series);
  std::printf("one 5%% step at 20 of 40: found at the right round (+-1) in %d/%d\n", step_found,
              series);
  for (int n : {100, 1000}) {
    std::printf("%5d points: flat %8.1f ms, three steps %8.1f ms\n", n,
                MillisOf(Series(n, {}, 0, 7)),
                MillisOf(Series(n, {n / 4, n / 2, 3 * n / 4}, 6, 8)));
  }
  return 0;
}
