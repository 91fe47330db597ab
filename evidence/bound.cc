#include "evidence/bound.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;
using Fields = std::vector<std::pair<std::string, double>>;

struct Family {
  RatioFamily family;
  std::vector<std::string> fields;
};

struct Pipe {
  PipeBound bound;
  std::string field;  // "" when the core has no such pipe
};

std::optional<double> Lookup(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// Fields of the primary core, by family (reference §9.6). "" prefix = 310P.
std::vector<Family> FamiliesFor(CoreType core, const std::string& prefix) {
  if (core == CoreType::kAiv) {
    return {{RatioFamily::kCompute, {"aiv_vec_ratio"}},
            {RatioFamily::kDataMovement, {"aiv_mte2_ratio", "aiv_mte3_ratio"}},
            {RatioFamily::kScalar, {"aiv_scalar_ratio"}}};
  }
  const std::string& p = prefix;
  return {{RatioFamily::kCompute, {p + "mac_ratio", p + "vec_ratio"}},
          {RatioFamily::kDataMovement,
           {p + "mte1_ratio", p + "mte2_ratio", p + "mte3_ratio", p + "fixpipe_ratio"}},
          {RatioFamily::kScalar, {p + "scalar_ratio"}}};
}

// Seeds' per-pipe order for the dominant core.
std::vector<Pipe> PipesFor(CoreType core, const std::string& prefix) {
  if (core == CoreType::kAiv) {
    return {{PipeBound::kMte2, "aiv_mte2_ratio"}, {PipeBound::kCube, ""},
            {PipeBound::kVec, "aiv_vec_ratio"},   {PipeBound::kFixp, ""},
            {PipeBound::kMte3, "aiv_mte3_ratio"}, {PipeBound::kScalar, "aiv_scalar_ratio"}};
  }
  const std::string& p = prefix;
  return {{PipeBound::kMte2, p + "mte2_ratio"}, {PipeBound::kCube, p + "mac_ratio"},
          {PipeBound::kVec, p + "vec_ratio"},   {PipeBound::kFixp, p + "fixpipe_ratio"},
          {PipeBound::kMte3, p + "mte3_ratio"}, {PipeBound::kScalar, p + "scalar_ratio"}};
}

PipeBound PipeLabel(const std::vector<std::pair<PipeBound, std::optional<double>>>& shares) {
  double max_share = 0;
  for (const auto& [pipe, v] : shares) {
    if (v) max_share = std::max(max_share, *v);
  }
  for (const auto& [pipe, v] : shares) {
    if (!v) continue;
    bool dominant_max =
        (pipe == PipeBound::kMte2 || pipe == PipeBound::kCube) && *v == max_share && *v > kBoundMax;
    if (*v > kBoundHigh || dominant_max) return pipe;
  }
  return PipeBound::kNoBound;
}

bool CheckRange(const std::string& field, double v, std::vector<EvidenceError>* errors) {
  if (std::isfinite(v) && v >= 0 && v <= 1) return true;
  errors->push_back(
      {"RATIO_OUT_OF_RANGE",
       Cat("pipe ratio ", field, "=", v, " is outside the verified CANN fraction range [0, 1]")});
  return false;
}

// Fills d->ratios with the present, in-range ratios of each family. Returns
// false when a ratio is out of range (recorded in errors); *max_value is the
// largest ratio kept, -1 when none.
bool CollectRatios(const std::map<std::string, double>& merged, const std::string& prefix,
                   BoundDiagnosis* d, double* max_value, std::vector<EvidenceError>* errors) {
  bool valid = true;
  *max_value = -1;
  for (const Family& f : FamiliesFor(d->primary_core, prefix)) {
    Fields present;
    for (const std::string& field : f.fields) {
      std::optional<double> v = Lookup(merged, field);
      if (!v) continue;
      if (!CheckRange(field, *v, errors)) {
        valid = false;
        continue;
      }
      present.emplace_back(field, *v);
      *max_value = std::max(*max_value, *v);
    }
    d->ratios.emplace_back(f.family, std::move(present));
  }
  return valid;
}

// The routing rule over d->ratios: a family triggers when any ratio > 0.80
// or it holds the global max and > 0.70.
void Route(double max_value, BoundDiagnosis* d) {
  for (const auto& [family, fields] : d->ratios) {
    bool hit = std::any_of(fields.begin(), fields.end(), [&](const auto& fv) {
      return fv.second > kBoundHigh || (fv.second == max_value && fv.second > kBoundMax);
    });
    if (hit) d->triggered_families.push_back(family);
  }
  const std::vector<RatioFamily>& hits = d->triggered_families;
  if (hits.empty()) {
    d->routing_label = RoutingLabel::kNoDominantPipe;
  } else if (hits.size() > 1) {
    d->routing_label = RoutingLabel::kMixed;
  } else {
    d->routing_label = CandidateOf(hits[0]);
  }
  d->scalar_route_triggered =
      std::find(hits.begin(), hits.end(), RatioFamily::kScalar) != hits.end();
}

}  // namespace

BoundDiagnosis DiagnoseBound(const std::map<std::string, double>& merged,
                             std::vector<EvidenceError>* errors) {
  BoundDiagnosis d;
  d.caveats = {"ratio-derived: op_summary pipe ratios, not a terminal roofline proof",
               "pipeline overlap unverified: op_summary ratios have no event ordering"};
  d.aicore_time_us = Lookup(merged, "aicore_time(us)").value_or(0);
  d.aiv_time_us = Lookup(merged, "aiv_time(us)").value_or(0);
  if (!(d.aicore_time_us > 0 || d.aiv_time_us > 0)) return d;
  d.primary_core = d.aicore_time_us >= d.aiv_time_us ? CoreType::kAic : CoreType::kAiv;
  std::string prefix = "aic_";
  if (d.primary_core == CoreType::kAic && !Lookup(merged, "aic_total_cycles") &&
      Lookup(merged, "total_cycles")) {
    prefix = "";  // 310P: one unprefixed core type
  }
  double max_value = -1;
  if (!CollectRatios(merged, prefix, &d, &max_value, errors)) {
    return d;  // UNKNOWN / insufficient_evidence, errors recorded
  }
  if (max_value < 0) return d;
  Route(max_value, &d);
  std::vector<std::pair<PipeBound, std::optional<double>>> shares;
  for (const Pipe& pipe : PipesFor(d.primary_core, prefix)) {
    shares.emplace_back(pipe.bound, pipe.field.empty() ? std::nullopt : Lookup(merged, pipe.field));
  }
  d.label = PipeLabel(shares);
  return d;
}

}  // namespace npuperf::evidence
