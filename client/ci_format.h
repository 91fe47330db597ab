// Verdicts in the formats CI systems and pull-request bots read natively
// (`npuperf compare|regressions --format junit|markdown`, docs/ci.md):
// JUnit XML with one testcase per case, and a Markdown PR-comment body.
// Pure functions of the server's comparison messages; no I/O.
#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

// What compare (two rounds or two collections) and regressions have in
// common, ready to render.
struct VerdictReport {
  // The command, e.g. "npuperf compare c-1 c-2": the JUnit suite name and
  // the Markdown headline.
  std::string title;
  // The summary line with denominators (format.h CountsSummary, or the
  // regressions line around it).
  std::string summary;
  // One entry per case the server returned. regressions returns only the
  // regressed ones (ListRegressionsResponse); the counts carry the rest.
  std::vector<v1::RoundComparison> comparisons;
  // "operator/case" present on one side only.
  std::vector<std::string> unmatched;
  v1::ComparisonCounts counts;
  // Geometric mean of the duration ratios over the comparable cases; 0: none.
  double geomean_ratio = 0;
  // True for regressions: the rows are the regressed cases only, so the
  // other verdicts appear as counts.
  bool regressed_rows_only = false;
  // regressions against a baseline: per entry of `comparisons` (same order;
  // empty, or one string each) the triage of a regression seen before, e.g.
  // "ACKNOWLEDGED (regression 12)", "" for a new one. A triaged regression is
  // not a new failure: JUnit skips it and Markdown lists it apart, as the
  // exit code ignores it (docs/comparisons.md, "Triage").
  std::vector<std::string> triaged;
  // The process exit code (after --fail-on).
  int exit_code = 0;
};

// JUnit XML (the common schema CI systems read: Jenkins, GitLab, GitHub
// reporters; tests/client/junit.xsd): <testsuites> holding one <testsuite>
// named after the title, one <testcase classname="npuperf.<operator>"
// name="operator/case"> per case:
//   REGRESSED       <failure type="REGRESSED" message=rule> with the numbers
//   ERRORED         <error type="ERRORED" message=rule>
//   NOT_COMPARABLE  <error type="NOT_COMPARABLE" message=rule> and the
//                   blocking fingerprint fields
//   INSUFFICIENT    <skipped message="INSUFFICIENT: rule">
//   IMPROVED/STABLE a passing testcase; the numbers in <system-out>
//   unmatched       <skipped message="unmatched: present on one side only">
// For regressions, one "no verdict" testcase (an error) stands for the
// insufficient, not comparable and errored counts, which come without rows.
// `now` stamps the suite (timestamp attribute, UTC).
std::string JunitXml(const VerdictReport& r, Clock::SystemTime now);

// A pull-request comment: a hidden marker line (<!-- npuperf-verdict -->)
// bots can find to update their comment, a headline with the outcome, the
// summary line with denominators and the geomean, a table of the cases that
// changed (regressed, improved) or reached no verdict, and the stable and
// unmatched cases folded in <details>.
std::string MarkdownComment(const VerdictReport& r);

// Text escaped for an XML attribute or element: & < > " ' as entities,
// control characters XML 1.0 forbids dropped.
std::string XmlEscape(const std::string& text);

}  // namespace npuperf::client
