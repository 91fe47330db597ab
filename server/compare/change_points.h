// Change points of a series of rounds: E-Divisive means (Matteson & James
// 2014, as used by MongoDB's signal processing and Hunter), so that a step in
// kernel time or any metric field is found at the round where it happened,
// not as one pair comparison's verdict.
//
// Why these choices:
// - E-Divisive with alpha = 1 makes no assumption about the distribution
//   (kernel times are skewed and multi-modal); the statistic is the energy
//   distance between the two sides of a split, scaled by their sizes.
// - Significance by a permutation test with a fixed seed: the same series
//   always gives the same answer (bots re-run queries), with a documented
//   false-positive rate on flat noise (alpha per accepted split).
// - Hunter's re-test: once all splits are found, every change point is tested
//   again against only its neighbouring segments, and weak ones are dropped;
//   a split found early against a long mixed segment may not survive.
// - A magnitude floor (min_change_pct, default 2 % like the verdict
//   threshold): a statistically certain 0.3 % step is not worth an alarm.
//
// Pure functions over plain vectors; no proto, no clock, no store.
#pragma once

#include <cstdint>
#include <vector>

namespace npuperf::server {

struct ChangePointOptions {
  // Level of the permutation test of each split. (0, 0.5].
  double alpha = 0.01;
  // Permutations per test; the smallest p-value reachable is 1/(n+1).
  int permutations = 199;
  // Fewest points on either side of a change point. >= 2.
  int min_segment = 3;
  // Smallest |after/before - 1| of the segment medians, percent, to report.
  double min_change_pct = 2.0;
  // Seed of the permutations (deterministic answers).
  uint64_t seed = 0x6e707570657266ULL;  // "npuperf"
  // Longest series examined (the newest points are kept). O(n^2) per test.
  int max_points = 1000;
};

struct ChangePoint {
  // Index of the first point of the new segment (0 < index < n).
  int index = 0;
  // Medians of the segments before and after (between the neighbouring
  // change points).
  double before_median = 0;
  double after_median = 0;
  // 100 * (after_median / before_median - 1); 0 when before_median is 0.
  double change_pct = 0;
  // Permutation p-value of the final re-test against the neighbours.
  double p_value = 1;
  // Points from the previous change point (or the start) to this one, and
  // from this one to the next (or the end).
  int points_before = 0;
  int points_after = 0;
};

// The change points of `series` (oldest first), ascending by index. Fewer
// than 2 * min_segment points give none. Non-finite values are not allowed
// (REQUIRES).
std::vector<ChangePoint> FindChangePoints(const std::vector<double>& series,
                                          const ChangePointOptions& options = {});

// The energy statistic of splitting `x` at every tau in [min_segment,
// n - min_segment]: q[tau - min_segment]. Exposed for tests.
std::vector<double> EnergyStatistics(const std::vector<double>& x, int min_segment);

}  // namespace npuperf::server
