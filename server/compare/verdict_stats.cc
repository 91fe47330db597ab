#include "server/compare/verdict_stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace npuperf::server {
namespace {

// Exact tables are built up to this many observations in total; above it the
// normal approximation is accurate to well under the alphas in use.
constexpr int kMaxExactTotal = 60;

// counts[k][s]: subsets of size k of ranks {1..n} whose rank sum is s
// (only k <= n_small needed). Doubles: C(60, 30) ~ 1.2e17 fits with
// relative error ~1e-16.
std::vector<double> RankSumCounts(int n_small, int total) {
  const int max_sum = n_small * total;
  std::vector<std::vector<double>> dp(n_small + 1, std::vector<double>(max_sum + 1, 0));
  dp[0][0] = 1;
  for (int r = 1; r <= total; ++r) {
    for (int k = std::min(r, n_small); k >= 1; --k) {
      for (int s = max_sum; s >= r; --s) dp[k][s] += dp[k - 1][s - r];
    }
  }
  return dp[n_small];
}

double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// z with P(Z > z) = q, by bisection (q in (0, 0.5]).
double NormalQuantileUpper(double q) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (NormalUpperTail(mid) > q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// cdf[u] = P(U <= u) under the null, u = 0..n1*n2, U of the n1-sample.
std::vector<double> UCdfTable(int n1, int n2) {
  const std::vector<double> counts = RankSumCounts(n1, n1 + n2);
  const int64_t base = static_cast<int64_t>(n1) * (n1 + 1) / 2;
  std::vector<double> cdf(static_cast<size_t>(n1) * n2 + 1, 0);
  double all = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    all += counts[s];
    const int64_t u = static_cast<int64_t>(s) - base;
    if (u >= 0 && u < static_cast<int64_t>(cdf.size())) cdf[u] += counts[s];
  }
  double run = 0;
  for (double& v : cdf) {
    run += v;
    v = run / all;
  }
  return cdf;
}
}  // namespace

double ExactUCdf(int n1, int n2, int64_t u) {
  if (n1 <= 0 || n2 <= 0) return 1;
  if (u < 0) return 0;
  if (u >= static_cast<int64_t>(n1) * n2) return 1;
  return UCdfTable(n1, n2)[u];
}

double MinAchievablePValue(int n1, int n2) {
  if (n1 <= 0 || n2 <= 0) return 1;
  // C(n1 + n2, n1) via lgamma; exact enough for a feasibility check.
  const double log_c = std::lgamma(n1 + n2 + 1.0) - std::lgamma(n1 + 1.0) - std::lgamma(n2 + 1.0);
  return std::min(1.0, 2.0 * std::exp(-log_c));
}

MannWhitney MannWhitneyU(const std::vector<double>& baseline,
                         const std::vector<double>& candidate) {
  const int n1 = static_cast<int>(baseline.size());
  const int n2 = static_cast<int>(candidate.size());
  MannWhitney out;
  for (double c : candidate) {
    for (double b : baseline) out.u += c > b ? 1.0 : (c == b ? 0.5 : 0.0);
  }
  // Ties (for the variance correction and the exact/approximate choice).
  std::map<double, int> tally;
  for (double v : baseline) ++tally[v];
  for (double v : candidate) ++tally[v];
  double tie_term = 0;
  for (const auto& [v, t] : tally) tie_term += static_cast<double>(t) * t * t - t;
  const int total = n1 + n2;
  const double mean = static_cast<double>(n1) * n2 / 2;
  if (tie_term == 0 && total <= kMaxExactTotal) {
    // U is an integer here; P(U <= u) and P(U >= u) = P(U <= n1n2 - u).
    const auto u = static_cast<int64_t>(std::llround(out.u));
    const std::vector<double> cdf = UCdfTable(n2, n1);
    const double lower = cdf[u];
    const double upper = cdf[static_cast<int64_t>(n1) * n2 - u];
    out.p_value = std::min(1.0, 2 * std::min(lower, upper));
    out.exact = true;
    return out;
  }
  const double var = static_cast<double>(n1) * n2 / 12 *
                     ((total + 1) - tie_term / (static_cast<double>(total) * (total - 1)));
  if (var <= 0) return out;  // every value equal: no evidence of a shift
  const double z = std::max(0.0, std::abs(out.u - mean) - 0.5) / std::sqrt(var);
  out.p_value = std::min(1.0, 2 * NormalUpperTail(z));
  return out;
}

RatioEstimate HodgesLehmannRatio(const std::vector<double>& baseline,
                                 const std::vector<double>& candidate, double alpha) {
  std::vector<double> diffs;
  diffs.reserve(baseline.size() * candidate.size());
  for (double c : candidate) {
    for (double b : baseline) diffs.push_back(std::log(c) - std::log(b));
  }
  std::sort(diffs.begin(), diffs.end());
  const size_t m = diffs.size();
  const double median = m % 2 == 1 ? diffs[m / 2] : (diffs[m / 2 - 1] + diffs[m / 2]) / 2;
  RatioEstimate out;
  out.ratio = std::exp(median);
  // Moses: the interval [D(c), D(m + 1 - c)] with c the largest integer such
  // that P(U <= c - 1) <= alpha / 2.
  const int n1 = static_cast<int>(baseline.size());
  const int n2 = static_cast<int>(candidate.size());
  int64_t c = 0;
  if (n1 + n2 <= kMaxExactTotal) {
    const std::vector<double> cdf = UCdfTable(n1, n2);
    while (c < static_cast<int64_t>(m) / 2 && cdf[c] <= alpha / 2) ++c;
  } else {
    const double z = NormalQuantileUpper(alpha / 2);
    const double sd = std::sqrt(static_cast<double>(n1) * n2 * (n1 + n2 + 1) / 12);
    c = static_cast<int64_t>(std::floor(static_cast<double>(m) / 2 - z * sd));
  }
  if (c >= 1 && c <= static_cast<int64_t>(m)) {
    out.low = std::exp(diffs[c - 1]);
    out.high = std::exp(diffs[m - c]);
  }
  return out;
}

double GeometricMean(const std::vector<double>& values) {
  double sum = 0;
  int n = 0;
  for (double v : values) {
    if (v > 0 && std::isfinite(v)) {
      sum += std::log(v);
      ++n;
    }
  }
  return n == 0 ? 0 : std::exp(sum / n);
}

}  // namespace npuperf::server
