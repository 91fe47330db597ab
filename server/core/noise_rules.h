#pragma once
// The measured-noise rules (issue 20; docs/comparisons.md "Measured noise"),
// as pure functions: how a calibration's A/A rounds become a spread per case
// and metric family, what threshold a verdict derives from a spread, and the
// false-alarm rate that threshold is expected to give. Used by
// server/compare/calibrations.h (measuring) and server/compare/comparator.h
// (judging), so the two cannot disagree.
//
// Why these rules:
// - Spread of a duration: the RMS over all pairs i<j of A/A rounds of
//   100 ln(m_j / m_i), m = the round's kernel time (Evidence.duration.
//   aggregate_us). A log ratio is symmetric (a 2 % rise and fall weigh the
//   same) and is what the verdict thresholds (|ratio - 1|). Over pairs,
//   E[(x_j - x_i)^2] = 2 var(x): the spread is the SD of the ratio between
//   two rounds, which is exactly what a comparison of two rounds sees, so no
//   sqrt(2) correction enters the false-alarm rate.
// - Spread of the ratio family: per ratio field (IsRatioField or
//   IsPercentField, in percentage points; the comparator's own test), the RMS
//   over pairs of (b - a); the family's spread is the largest field's, so one
//   threshold is conservative for every field.
// - At least kMinNoiseRounds (3) rounds: two rounds are one pair, too few to
//   estimate a spread.
// - Threshold = max(floor, kNoiseK x spread), k = 3, floor 2 % (duration) or
//   1 pp (ratio): the defaults never get looser than today, and 3 SD puts a
//   normal A/A difference past the threshold about 0.3 % of the time.
// - Expected false-alarm rate at threshold t with spread s, if the A/A log
//   ratio is normal with SD s: duration 2 (1 - Phi(ln(1 + t/100) / (s/100))),
//   ratio 2 (1 - Phi(t / s)). An upper bound of the rule: a verdict also
//   needs p < alpha. 0 when s = 0.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "npuperf/v1/query_service.pb.h"
#include "server/store/records.h"

namespace npuperf::server {

inline constexpr double kNoiseK = 3;
inline constexpr double kDurationFloorPct = 2;
inline constexpr double kRatioFloorPp = 1;
inline constexpr int kMinNoiseRounds = 3;
inline constexpr char kDurationFamily[] = "duration";
inline constexpr char kRatioFamily[] = "ratio";

// Metric fields the comparator judges in percentage points: ratios (0..1,
// "*ratio*", "*hit_rate*") and percentages ("(%)", "_pct").
bool IsRatioField(const std::string& name);
bool IsPercentField(const std::string& name);
// The field's value in percentage points (ratio x 100, percent as is), or
// nullopt for a field that is not a ratio.
std::optional<double> RatioPoints(const std::string& field, double value);

// The duration spread (percent) of a case's A/A kernel times; nullopt with
// fewer than kMinNoiseRounds values or a value that is not positive.
std::optional<double> DurationSpread(const std::vector<double>& kernel_us);
// The ratio family's spread (points): per field present in at least
// kMinNoiseRounds rounds, the RMS over pairs of those rounds of b - a; the
// largest. nullopt when no field qualifies. rounds[i]: field -> points.
std::optional<double> RatioSpread(const std::vector<std::map<std::string, double>>& rounds);

// max(floor, kNoiseK x spread).
double NoiseThreshold(double spread, double floor);
// 2 (1 - Phi(ln(1 + t/100) / (s/100))); 0 when s is 0.
double DurationFalseAlarmRate(double threshold_pct, double spread_pct);
// 2 (1 - Phi(t / s)); 0 when s is 0.
double RatioFalseAlarmRate(double threshold_pp, double spread_pp);

// The spreads of a calibration's A/A rounds: rounds grouped by (soc and mode
// of their fingerprint, operator, case); rounds with evidence errors or
// without a positive kernel time are left out; a group with at least kMinNoiseRounds rounds gives a
// "duration" spread and, when a ratio field qualifies, a "ratio" one, each
// with its threshold and false-alarm rate (calibration_id and measured_ms
// left 0). Ordered by operator, case, soc, mode, family.
std::vector<NoiseRecord> MeasureNoise(const std::vector<v1::Round>& rounds);

}  // namespace npuperf::server
