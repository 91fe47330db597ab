#include "server/core/noise_rules.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace npuperf::server {
namespace {

// RMS over pairs i<j of d(x_i, x_j).
template <typename D>
double PairRms(const std::vector<double>& x, D d) {
  double sum = 0;
  int pairs = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double v = d(x[i], x[j]);
      sum += v * v;
      ++pairs;
    }
  }
  return pairs > 0 ? std::sqrt(sum / pairs) : 0;
}

// 2 (1 - Phi(z)) for z >= 0.
double TwoSidedTail(double z) { return std::erfc(z / std::sqrt(2.0)); }

// What one group of A/A rounds (one case, SoC and mode) measured.
struct Group {
  std::vector<double> kernel_us;
  std::vector<std::map<std::string, double>> ratio_points;
};

std::map<std::string, double> RatioPointsOf(const v1::Evidence& e) {
  std::map<std::string, double> out;
  for (const auto& g : e.metrics()) {
    for (const auto& [field, value] : g.fields()) {
      if (auto p = RatioPoints(field, value)) out[absl::StrCat(g.group(), ".", field)] = *p;
    }
  }
  return out;
}

NoiseRecord Spread(const std::tuple<std::string, std::string, std::string, std::string>& key,
                   const char* family, double spread, int rounds) {
  const bool duration = std::string(family) == kDurationFamily;
  NoiseRecord n;
  std::tie(n.operator_name, n.case_id, n.soc, n.mode) = key;
  n.family = family;
  n.spread = spread;
  n.rounds = rounds;
  n.threshold = NoiseThreshold(spread, duration ? kDurationFloorPct : kRatioFloorPp);
  n.far = duration ? DurationFalseAlarmRate(n.threshold, spread)
                   : RatioFalseAlarmRate(n.threshold, spread);
  return n;
}

}  // namespace

bool IsRatioField(const std::string& name) {
  return name.find("ratio") != std::string::npos || name.find("hit_rate") != std::string::npos;
}

bool IsPercentField(const std::string& name) {
  return name.find("(%)") != std::string::npos || name.find("_pct") != std::string::npos;
}

std::optional<double> RatioPoints(const std::string& field, double value) {
  if (IsRatioField(field)) return value * 100;
  if (IsPercentField(field)) return value;
  return std::nullopt;
}

std::optional<double> DurationSpread(const std::vector<double>& kernel_us) {
  if (kernel_us.size() < static_cast<size_t>(kMinNoiseRounds)) return std::nullopt;
  for (double m : kernel_us) {
    if (!(m > 0) || !std::isfinite(m)) return std::nullopt;
  }
  return PairRms(kernel_us, [](double a, double b) { return 100 * std::log(b / a); });
}

std::optional<double> RatioSpread(const std::vector<std::map<std::string, double>>& rounds) {
  std::map<std::string, std::vector<double>> by_field;
  for (const auto& r : rounds) {
    for (const auto& [field, points] : r) {
      if (std::isfinite(points)) by_field[field].push_back(points);
    }
  }
  std::optional<double> widest;
  for (const auto& [field, values] : by_field) {
    if (values.size() < static_cast<size_t>(kMinNoiseRounds)) continue;
    const double s = PairRms(values, [](double a, double b) { return b - a; });
    if (!widest || s > *widest) widest = s;
  }
  return widest;
}

double NoiseThreshold(double spread, double floor) { return std::max(floor, kNoiseK * spread); }

double DurationFalseAlarmRate(double threshold_pct, double spread_pct) {
  if (!(spread_pct > 0)) return 0;
  return TwoSidedTail(std::log1p(threshold_pct / 100) / (spread_pct / 100));
}

double RatioFalseAlarmRate(double threshold_pp, double spread_pp) {
  if (!(spread_pp > 0)) return 0;
  return TwoSidedTail(threshold_pp / spread_pp);
}

std::vector<NoiseRecord> MeasureNoise(const std::vector<v1::Round>& rounds) {
  // (operator, case, soc, mode): the order of the result.
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Group> groups;
  for (const v1::Round& r : rounds) {
    const v1::Evidence& e = r.evidence();
    if (e.errors_size() > 0 || !(e.duration().aggregate_us() > 0)) continue;
    Group& g =
        groups[{r.operator_name(), r.case_id(), e.fingerprint().soc(), e.fingerprint().mode()}];
    g.kernel_us.push_back(e.duration().aggregate_us());
    g.ratio_points.push_back(RatioPointsOf(e));
  }
  std::vector<NoiseRecord> out;
  for (const auto& [key, g] : groups) {
    const int n = static_cast<int>(g.kernel_us.size());
    if (auto s = DurationSpread(g.kernel_us)) out.push_back(Spread(key, kDurationFamily, *s, n));
    if (n < kMinNoiseRounds) continue;
    if (auto s = RatioSpread(g.ratio_points)) out.push_back(Spread(key, kRatioFamily, *s, n));
  }
  return out;
}

}  // namespace npuperf::server
