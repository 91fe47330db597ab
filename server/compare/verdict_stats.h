// Two-sample statistics behind duration verdicts: the Mann-Whitney U test and
// the Hodges-Lehmann estimate of a ratio with its confidence interval.
//
// Pure functions over plain vectors; no proto, no clock. Durations are
// compared on the log scale, so the Hodges-Lehmann shift of log(candidate) -
// log(baseline) is the log of a candidate/baseline ratio.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace npuperf::server {

struct MannWhitney {
  // U of the candidate sample: pairs (baseline b, candidate c) with c > b,
  // ties counting one half.
  double u = 0;
  // Two-sided p-value.
  double p_value = 1;
  // True when p comes from the exact null distribution (no ties, small
  // samples); false for the normal approximation with tie correction.
  bool exact = false;
};

// Two-sided Mann-Whitney U test of baseline vs candidate. REQUIRES: both
// samples non-empty.
MannWhitney MannWhitneyU(const std::vector<double>& baseline, const std::vector<double>& candidate);

// The smallest two-sided p-value the exact test can reach with these sample
// sizes: 2 / C(n1 + n2, n1) (1 when either is empty). A verdict at level
// alpha is only possible when this is below alpha.
double MinAchievablePValue(int n1, int n2);

// Number of (n1, n2) arrangements with U <= u, over C(n1 + n2, n1), i.e. the
// exact null CDF of U without ties.
double ExactUCdf(int n1, int n2, int64_t u);

struct RatioEstimate {
  // Hodges-Lehmann point estimate of candidate/baseline: exp(median of all
  // pairwise log(c) - log(b)).
  double ratio = 0;
  // (1 - alpha) confidence interval of the ratio (Moses' distribution-free
  // interval from the U null distribution); nullopt when the samples are too
  // small for that confidence.
  std::optional<double> low;
  std::optional<double> high;
};

// REQUIRES: both samples non-empty and every value > 0.
RatioEstimate HodgesLehmannRatio(const std::vector<double>& baseline,
                                 const std::vector<double>& candidate, double alpha);

// Geometric mean of positive values; 0 for none.
double GeometricMean(const std::vector<double>& values);

}  // namespace npuperf::server
