#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evidence/evidence.h"

// Findings: the field's key-field thresholds (msprof-output.md §6.1, the
// seed methodology's table) applied to a round's evidence. One table of rules
// (FindingRules) is the only place a threshold lives; docs/evidence.md shows
// it (FindingRulesMarkdown, checked against the doc by a test) and every
// renderer (evidence.json, the proto, summary.txt, Markdown) shows the
// findings EvaluateFindings derives from it.
//
// Why a finding is not a verdict: op_summary ratios are per-op aggregates
// that route the next experiment; they never prove a Roofline position,
// pipeline overlap or completion (reference §2.11). Every finding carries
// that caveat. A rule is applied only to fields the capture has: when none
// of its fields exists the result says so (FindingNotApplied) instead of
// inventing a value. Per-core and DVFS rules derive from what per_core.h and
// derived.h already decided (the balance verdict, the half-gap hint, the
// DVFS clock source); they never recompute it.
//
// Pure functions; thread-safe.
namespace npuperf::evidence {

// How serious a finding is. kGood: a threshold the field calls good was
// passed; kHint: a hypothesis to check before attributing; kWarning: needs
// attention; kCritical: severe.
enum class FindingSeverity { kGood, kHint, kWarning, kCritical };
// "good", "hint", "warning", "critical".
std::string_view Name(FindingSeverity s);

// How the measured value meets the threshold for the rule to fire.
enum class Comparison { kGreater, kGreaterEqual, kLess };
// ">", ">=", "<".
std::string_view Name(Comparison c);

// One row of the thresholds table.
struct FindingRule {
  std::string_view id;      // e.g. "PIPE_MTE2_RATIO_HIGH"; [A-Z0-9_]
  std::string_view source;  // metric group or evidence section
  std::string_view field;   // the field(s) read, as shown in the table
  Comparison comparison;
  double threshold;       // in `unit`
  std::string_view unit;  // "%" or "MHz"
  FindingSeverity severity;
  std::string_view message;  // what the finding means
  std::string_view caveat;   // what it does not mean
};

// The table, in evaluation order.
const std::vector<FindingRule>& FindingRules();
// The rule of `id`, or nullptr.
const FindingRule* FindRule(std::string_view id);

// Appended to every finding's caveat.
inline constexpr char kRoutingCaveat[] =
    "findings route the next experiment; op_summary ratios are not a Roofline proof";

// A rule that fired on one field.
struct Finding {
  std::string rule_id;
  FindingSeverity severity = FindingSeverity::kHint;
  // The concrete field, e.g. "aiv_mte2_ratio", "per_core[AIV].spread_pct".
  std::string field;
  double value = 0;  // measured, in `unit` (ratios as percent)
  Comparison comparison = Comparison::kGreater;
  double threshold = 0;
  std::string unit;
  std::string message;
  std::string caveat;  // the rule's caveat; kRoutingCaveat
};

// A rule whose fields the capture does not have (or has unusable).
struct FindingNotApplied {
  std::string rule_id;
  std::string note;  // why, naming the absent field
};

struct Findings {
  std::vector<Finding> items;  // table order, then field order
  std::vector<FindingNotApplied> not_applied;
};

// Applies every rule of FindingRules to `ev`. Ratios outside [0, 1] (pipe)
// or negative / non-finite (conflicts) are not used: bound.cc already
// reported them as RATIO_OUT_OF_RANGE.
Findings EvaluateFindings(const Evidence& ev);

// The thresholds table as Markdown (the block of docs/evidence.md between
// the findings-table markers).
std::string FindingRulesMarkdown();

// summary.txt lines of the findings section (no trailing newline) and its
// Markdown section.
std::vector<std::string> FindingsTextLines(const Findings& f);
std::string FindingsMarkdown(const Findings& f);

}  // namespace npuperf::evidence
