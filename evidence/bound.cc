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
  const char* name;
  std::vector<std::string> fields;
};

std::optional<double> Lookup(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// Fields of the primary core, by family (reference §9.6). "" prefix = 310P.
std::vector<Family> FamiliesFor(const std::string& core, const std::string& prefix) {
  if (core == "aiv") {
    return {{"compute", {"aiv_vec_ratio"}},
            {"data_movement", {"aiv_mte2_ratio", "aiv_mte3_ratio"}},
            {"scalar", {"aiv_scalar_ratio"}}};
  }
  const std::string& p = prefix;
  return {{"compute", {p + "mac_ratio", p + "vec_ratio"}},
          {"data_movement", {p + "mte1_ratio", p + "mte2_ratio", p + "mte3_ratio",
                             p + "fixpipe_ratio"}},
          {"scalar", {p + "scalar_ratio"}}};
}

// Seeds' per-pipe order for the dominant core.
std::vector<std::pair<std::string, std::string>> PipesFor(const std::string& core,
                                                          const std::string& prefix) {
  if (core == "aiv") {
    return {{"MTE2", "aiv_mte2_ratio"}, {"CUBE", ""},  {"VEC", "aiv_vec_ratio"},
            {"FIXP", ""},               {"MTE3", "aiv_mte3_ratio"}, {"SCALAR", "aiv_scalar_ratio"}};
  }
  const std::string& p = prefix;
  return {{"MTE2", p + "mte2_ratio"},    {"CUBE", p + "mac_ratio"},  {"VEC", p + "vec_ratio"},
          {"FIXP", p + "fixpipe_ratio"}, {"MTE3", p + "mte3_ratio"}, {"SCALAR", p + "scalar_ratio"}};
}

std::string PipeLabel(const std::vector<std::pair<std::string, std::optional<double>>>& shares) {
  double max_share = 0;
  for (const auto& [pipe, v] : shares) {
    if (v) max_share = std::max(max_share, *v);
  }
  for (const auto& [pipe, v] : shares) {
    if (!v) continue;
    bool dominant_max = (pipe == "MTE2" || pipe == "CUBE") && *v == max_share && *v > kBoundMax;
    if (*v > kBoundHigh || dominant_max) return pipe + "_BOUND";
  }
  return "NO_BOUND";
}

bool CheckRange(const std::string& field, double v, std::vector<EvidenceError>* errors) {
  if (std::isfinite(v) && v >= 0 && v <= 1) return true;
  errors->push_back({"RATIO_OUT_OF_RANGE",
                     Cat("pipe ratio ", field, "=", v,
                         " is outside the verified CANN fraction range [0, 1]")});
  return false;
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
  d.primary_core = d.aicore_time_us >= d.aiv_time_us ? "aic" : "aiv";
  std::string prefix = "aic_";
  if (d.primary_core == "aic" && !Lookup(merged, "aic_total_cycles") &&
      Lookup(merged, "total_cycles")) {
    prefix = "";  // 310P: one unprefixed core type
  }
  bool valid = true;
  double max_value = -1;
  for (const Family& f : FamiliesFor(d.primary_core, prefix)) {
    Fields present;
    for (const std::string& field : f.fields) {
      std::optional<double> v = Lookup(merged, field);
      if (!v) continue;
      if (!CheckRange(field, *v, errors)) {
        valid = false;
        continue;
      }
      present.emplace_back(field, *v);
      max_value = std::max(max_value, *v);
    }
    d.ratios.emplace_back(f.name, std::move(present));
  }
  if (!valid) return d;  // UNKNOWN / insufficient_evidence, errors recorded
  if (max_value < 0) return d;
  for (const auto& [family, fields] : d.ratios) {
    bool hit = std::any_of(fields.begin(), fields.end(), [&](const auto& fv) {
      return fv.second > kBoundHigh || (fv.second == max_value && fv.second > kBoundMax);
    });
    if (hit) d.triggered_families.push_back(family);
  }
  size_t n = d.triggered_families.size();
  if (n == 0) d.routing_label = "no_dominant_pipe";
  else if (n > 1) d.routing_label = "mixed";
  else d.routing_label = d.triggered_families[0] + "_candidate";
  d.scalar_route_triggered = std::find(d.triggered_families.begin(), d.triggered_families.end(),
                                       "scalar") != d.triggered_families.end();
  std::vector<std::pair<std::string, std::optional<double>>> shares;
  for (const auto& [pipe, field] : PipesFor(d.primary_core, prefix)) {
    shares.emplace_back(pipe, field.empty() ? std::nullopt : Lookup(merged, field));
  }
  d.label = PipeLabel(shares);
  return d;
}

}  // namespace npuperf::evidence
