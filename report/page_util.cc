#include "report/page_util.h"

#include <map>

#include "evidence/findings.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::report::internal {

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return google::protobuf::util::TimeUtil::ToString(t).substr(0, 19) + "Z";
}

std::string LabelsText(const google::protobuf::Map<std::string, std::string>& labels) {
  const std::map<std::string, std::string> sorted(labels.begin(), labels.end());
  std::string out;
  for (const auto& [k, v] : sorted) out += (out.empty() ? "" : ", ") + k + "=" + v;
  return out;
}

std::string RuleClass(std::string_view rule_id, double value) {
  const evidence::FindingRule* rule = evidence::FindRule(rule_id);
  if (rule == nullptr) return "";
  bool fires = false;
  switch (rule->comparison) {
    case evidence::Comparison::kGreater: fires = value > rule->threshold; break;
    case evidence::Comparison::kGreaterEqual: fires = value >= rule->threshold; break;
    case evidence::Comparison::kLess: fires = value < rule->threshold; break;
  }
  return fires ? "s-" + std::string(evidence::Name(rule->severity)) : "";
}

double RuleThreshold(std::string_view rule_id) {
  const evidence::FindingRule* rule = evidence::FindRule(rule_id);
  return rule == nullptr ? 0 : rule->threshold;
}

}  // namespace npuperf::report::internal
