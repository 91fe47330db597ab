// Shared pieces of the report pages (internal to report/): timestamps,
// labels, the colour of a value under a rule of the findings table.
#pragma once

#include <string>
#include <string_view>

#include "google/protobuf/map.h"
#include "google/protobuf/timestamp.pb.h"
#include "npuperf/v1/evidence.pb.h"

namespace npuperf::report::internal {

// "2026-12-01T10:00:00Z", or "-" when unset.
std::string Time(const google::protobuf::Timestamp& t);

// "k=v, k2=v2" in key order (unescaped: the caller escapes).
std::string LabelsText(const google::protobuf::Map<std::string, std::string>& labels);

// The CSS class of `value` (in the rule's unit) under rule `rule_id` of
// evidence/findings.h FindingRules: "s-<severity>" when the rule fires,
// "" when it does not or the rule is unknown.
std::string RuleClass(std::string_view rule_id, double value);

// Sections of the round page kept in round_tables.cc: the Memory, L2 and
// conflict tables; DVFS, findings, fingerprint, errors and warnings.
std::string MemoryTables(const v1::Evidence& e);
std::string DvfsAndFindings(const v1::Evidence& e);

// The threshold of rule `rule_id` in its unit (0 if unknown), for notes.
double RuleThreshold(std::string_view rule_id);

}  // namespace npuperf::report::internal
