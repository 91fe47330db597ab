#include "server/compare/change_points.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "evidence/op_summary.h"

namespace npuperf::server {
namespace {

using evidence::Median;  // mean of the middle two for an even count

struct Split {
  int tau = -1;
  double q = 0;
};

// The split of x with the largest energy statistic.
Split BestSplit(const std::vector<double>& x, int min_segment) {
  std::vector<double> q = EnergyStatistics(x, min_segment);
  Split best;
  for (size_t i = 0; i < q.size(); ++i) {
    if (best.tau < 0 || q[i] > best.q) best = {static_cast<int>(i) + min_segment, q[i]};
  }
  return best;
}

// Permutation p-value of the best split of x: the share of shuffles of x
// whose best split is at least as strong, (hits + 1) / (permutations + 1).
// With stop_above > 0 the shuffling stops once the p-value is sure to exceed
// it (the split is rejected either way; flat noise costs a few shuffles).
double PermutationPValue(const std::vector<double>& x, double observed, const ChangePointOptions& o,
                         double stop_above, std::mt19937_64* rng) {
  std::vector<double> shuffled = x;
  int hits = 0;
  const double denominator = o.permutations + 1.0;
  for (int r = 0; r < o.permutations; ++r) {
    std::shuffle(shuffled.begin(), shuffled.end(), *rng);
    if (BestSplit(shuffled, o.min_segment).q >= observed) ++hits;
    if (stop_above > 0 && (hits + 1.0) / denominator > stop_above) break;
  }
  return (hits + 1.0) / denominator;
}

std::vector<double> Slice(const std::vector<double>& x, int begin, int end) {
  return std::vector<double>(x.begin() + begin, x.begin() + end);
}

// Segment [begin, end) split recursively (binary segmentation): the best
// split is kept when its permutation test passes, and both sides are
// searched again.
void Segment(const std::vector<double>& x, int begin, int end, const ChangePointOptions& o,
             std::mt19937_64* rng, std::vector<int>* cuts) {
  if (end - begin < 2 * o.min_segment) return;
  std::vector<double> part = Slice(x, begin, end);
  Split s = BestSplit(part, o.min_segment);
  if (s.tau < 0 || s.q <= 0) return;
  if (PermutationPValue(part, s.q, o, o.alpha, rng) > o.alpha) return;
  cuts->push_back(begin + s.tau);
  Segment(x, begin, begin + s.tau, o, rng, cuts);
  Segment(x, begin + s.tau, end, o, rng, cuts);
}

// The cut at index i of `cuts` tested against only the segments on its two
// sides, with its medians and change.
ChangePoint TestCut(const std::vector<double>& x, const std::vector<int>& cuts, size_t i,
                    const ChangePointOptions& o, std::mt19937_64* rng) {
  int lo = i == 0 ? 0 : cuts[i - 1];
  int hi = i + 1 == cuts.size() ? static_cast<int>(x.size()) : cuts[i + 1];
  std::vector<double> part = Slice(x, lo, hi);
  std::vector<double> q = EnergyStatistics(part, o.min_segment);
  size_t at = static_cast<size_t>(cuts[i] - lo - o.min_segment);
  ChangePoint c;
  c.index = cuts[i];
  c.points_before = cuts[i] - lo;
  c.points_after = hi - cuts[i];
  c.before_median = Median(Slice(x, lo, cuts[i]));
  c.after_median = Median(Slice(x, cuts[i], hi));
  c.change_pct = c.before_median == 0 ? 0 : 100 * (c.after_median / c.before_median - 1);
  // A cut closer than min_segment to a neighbour cannot be re-tested: weak.
  c.p_value = at < q.size() ? PermutationPValue(part, q[at], o, 0, rng) : 1;
  return c;
}

// Hunter's re-test: every cut against its neighbouring segments only; the
// weakest failing cut (largest p-value, then smallest change) is dropped and
// the rest tested again, until every cut passes.
std::vector<ChangePoint> Retest(const std::vector<double>& x, std::vector<int> cuts,
                                const ChangePointOptions& o, std::mt19937_64* rng) {
  std::sort(cuts.begin(), cuts.end());
  while (true) {
    std::vector<ChangePoint> out;
    int weakest = -1;
    for (size_t i = 0; i < cuts.size(); ++i) {
      out.push_back(TestCut(x, cuts, i, o, rng));
      const ChangePoint& c = out.back();
      if (c.p_value <= o.alpha && std::fabs(c.change_pct) >= o.min_change_pct) continue;
      if (weakest < 0 || c.p_value > out[weakest].p_value ||
          (c.p_value == out[weakest].p_value &&
           std::fabs(c.change_pct) < std::fabs(out[weakest].change_pct))) {
        weakest = static_cast<int>(i);
      }
    }
    if (weakest < 0) return out;
    cuts.erase(cuts.begin() + weakest);
  }
}

}  // namespace

std::vector<double> EnergyStatistics(const std::vector<double>& x, int min_segment) {
  const int n = static_cast<int>(x.size());
  std::vector<double> q;
  if (n < 2 * min_segment || min_segment < 1) return q;
  // within[t]: sum of |xi - xj| over pairs i < j < t (the left side at split
  // t); right side and cross sums follow from the totals.
  std::vector<double> left(static_cast<size_t>(n) + 1, 0), right(static_cast<size_t>(n) + 1, 0);
  for (int t = 1; t <= n; ++t) {
    double add = 0;
    for (int i = 0; i < t - 1; ++i) add += std::fabs(x[i] - x[t - 1]);
    left[t] = left[t - 1] + add;
  }
  for (int t = n - 1; t >= 0; --t) {
    double add = 0;
    for (int j = t + 1; j < n; ++j) add += std::fabs(x[j] - x[t]);
    right[t] = right[t + 1] + add;
  }
  const double total = left[n];
  for (int tau = min_segment; tau <= n - min_segment; ++tau) {
    double a = tau, b = n - tau;
    double cross = total - left[tau] - right[tau];
    double e = 2 * cross / (a * b) - left[tau] / (a * (a - 1) / 2) - right[tau] / (b * (b - 1) / 2);
    q.push_back(a * b / n * e);
  }
  return q;
}

std::vector<ChangePoint> FindChangePoints(const std::vector<double>& series,
                                          const ChangePointOptions& options) {
  ChangePointOptions o = options;
  o.min_segment = std::max(o.min_segment, 2);
  std::vector<double> x = series;
  int offset = 0;
  if (o.max_points > 0 && static_cast<int>(x.size()) > o.max_points) {
    offset = static_cast<int>(x.size()) - o.max_points;
    x.erase(x.begin(), x.begin() + offset);
  }
  std::mt19937_64 rng(o.seed);
  std::vector<int> cuts;
  Segment(x, 0, static_cast<int>(x.size()), o, &rng, &cuts);
  std::vector<ChangePoint> out = Retest(x, std::move(cuts), o, &rng);
  for (ChangePoint& c : out) c.index += offset;
  return out;
}

}  // namespace npuperf::server
