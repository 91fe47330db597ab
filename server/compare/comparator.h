// Comparator: verdicts between rounds, collections and golden references.
//
// Start here for "is it faster, and can we trust it?". Pure functions over
// stored rounds (no store, no gRPC, no clock), so the query service, the
// regression listing and the tests share one rule book:
//
//   1. ERRORED         either side carries evidence errors or has no samples
//   2. NOT_COMPARABLE  a blocking fingerprint field differs (listed)
//   3. INSUFFICIENT    a side is DVFS-suspect, or the sample sizes cannot
//                      reach alpha (smallest exact p = 2 / C(n1+n2, n1))
//   4. STABLE          Mann-Whitney p >= alpha, or significant but the ratio
//                      moved less than the practical threshold
//   5. IMPROVED / REGRESSED  p < alpha and |ratio - 1| >= threshold
//
// Bound-route, per-core balance and DVFS changes, and threshold findings
// (evidence/findings.h) that appear or disappear (matched by rule id and
// field; "unmeasured" when the other side lacks the rule's field), are flags
// beside the verdict; they never turn a duration verdict around. docs/comparisons.md
// has the full contract.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/core/noise_rules.h"
#include "server/store/records.h"

namespace npuperf::server {

// The measured noise of the compared cases (Store::NoiseOfCases) by CaseKey:
// the newest spread per (soc, mode, family) of each case.
using NoiseBook = std::map<std::string, std::vector<NoiseRecord>>;
NoiseBook NoiseBookOf(std::vector<NoiseRecord> spreads);

struct VerdictOptions {
  // Significance level of the two-sided Mann-Whitney U test. Default: 0.01.
  double alpha = 0.01;
  // Practical threshold for durations and other absolute figures, percent.
  // Default: kDurationFloorPct (2; an uncalibrated case uses the calibrated
  // rule's floor).
  double duration_threshold_pct = kDurationFloorPct;
  // Practical threshold for ratio metrics, percentage points. Default:
  // kRatioFloorPp (1).
  double ratio_threshold_pp = kRatioFloorPp;
  // Whether the request set duration_threshold_pct / ratio_threshold_pp:
  // then it applies to every case ("request"). Otherwise a case with a
  // measured spread whose soc and mode match both sides' fingerprints uses
  // max(floor, k x spread) ("calibrated", core/noise_rules.h), and the rest
  // the defaults above ("default"). Default: false.
  bool duration_threshold_requested = false;
  bool ratio_threshold_requested = false;
  // The measured noise of the compared cases; not owned, must outlive the
  // call. Default: null (every case uncalibrated).
  const NoiseBook* noise = nullptr;
};

// Fills zero fields with the defaults; INVALID_ARGUMENT naming the field
// (under `field_prefix`, e.g. "options.alpha") when a value is out of range.
absl::StatusOr<VerdictOptions> ResolveVerdictOptions(const v1::CompareOptions& options,
                                                     const std::string& field_prefix = "options");

// Two rounds (normally of one operator and case). The duration carries the
// threshold used and its source (DurationComparison fields 100..104); the
// rule names them, e.g. "p=0.004<0.01 and +6.10% slower beyond 4.2% (calibrated)".
v1::RoundComparison CompareRounds(const v1::Round& baseline, const v1::Round& candidate,
                                  const VerdictOptions& options);

// Matches rounds by (operator, case) — the newest round of a pair wins when a
// side holds several — and compares each pair. Counts carry denominators;
// the geometric mean covers pairs with a duration verdict
// (improved/regressed/stable).
v1::CompareCollectionsResponse CompareRoundSets(const std::vector<v1::Round>& baseline,
                                                const std::vector<v1::Round>& candidate,
                                                const VerdictOptions& options);

// Golden reference ratios of the rounds that joined golden data.
v1::GetGoldenReportResponse GoldenReport(const std::vector<v1::Round>& rounds);

// Label of golden reference ratios: cross-scope, never a speed-up.
inline constexpr char kGoldenLabel[] =
    "golden_reference_ratio (cross-scope reference, not a speed-up)";

// "operator/case": what rounds are matched by.
std::string CaseKey(const v1::Round& r);

// Whether a round's clock was not the rated one: its DVFS check says
// "suspect" or its fingerprint "dvfs_suspect". Such a side gets no duration
// verdict (rule 3), a confirmation rerun carries it into the pooled side, and
// a canary measured so is not judged (compare/canaries.h).
bool DvfsSuspect(const v1::Evidence& e);

// True for verdicts that decided the duration (the comparable ones).
bool HasDurationVerdict(v1::Verdict v);

// Counts one matched pair by its verdict: matched, its status, and
// comparable when HasDurationVerdict.
void CountVerdict(v1::Verdict v, v1::ComparisonCounts* n);

}  // namespace npuperf::server
