#pragma once

#include <map>
#include <string>
#include <vector>

#include "evidence/evidence.h"

namespace npuperf::evidence {

// Bound diagnosis from the merged op_summary row (both labels of issue 4):
//
// * label — the seeds' per-pipe route on the dominant core
//   (max(aicore_time, aiv_time), ties to AIC): the first of MTE2, CUBE, VEC,
//   FIXP, MTE3, SCALAR whose busy share is > 0.80 — or, for MTE2 and CUBE, that
//   is the largest share and > 0.70 — else NO_BOUND.
// * routing_label — evidence_cli.diagnose_bound_route (reference §9.6):
//   families compute / data_movement / scalar of the primary core; a family
//   triggers when any ratio > 0.80 or it holds the global max and > 0.70.
//
// Ratios must be fractions in [0, 1]; a value outside (or non-finite) is
// appended to `errors` as RATIO_OUT_OF_RANGE naming the field, and the
// diagnosis becomes UNKNOWN / insufficient_evidence instead of aborting
// (the reference raised ValueError and lost the whole summary).
// 310P-style unprefixed columns (mac_ratio, vec_ratio, ...) count as AIC.
BoundDiagnosis DiagnoseBound(const std::map<std::string, double>& merged,
                             std::vector<EvidenceError>* errors);

// Thresholds (msprof-output.md §6.1, reference BOUND_ROUTE_HIGH / _MAX).
inline constexpr double kBoundHigh = 0.80;
inline constexpr double kBoundMax = 0.70;

}  // namespace npuperf::evidence
