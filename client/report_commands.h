// `npuperf report` in every style (RunReport, declared in compare_commands.h:
// a round's summary.txt, perf_report.md or evidence.json, a collection's
// table) and the HTML pages (report/ renders them; docs/reports.md):
// `report ID --style html` (a round, or a collection with each case's
// history), `compare|regressions --format html` (verdict_output.cc calls
// ComparisonHtml), and `history OPERATOR`, the kernel time of an operator's
// rounds with a baseline and verdict markers, as text, JSON or HTML.
#pragma once

#include <ostream>
#include <string>

#include "client/ci_format.h"
#include "client/commands.h"

namespace npuperf::client {

// A round (digits) or a collection as one HTML document on out.
int RunHtmlReport(Session& s, const std::string& id, std::ostream& out, std::ostream& err);

// The comparison page of compare and regressions.
std::string ComparisonHtml(const VerdictReport& r);

// `npuperf history` arguments.
struct HistoryArgs {
  std::string operator_name;  // positional, required
  std::string case_id;        // --case-id: only this case
  // --baseline: a round id (digits) or a collection id, e.g. the one pinned
  // for branch=main; its rounds of the operator are each case's baseline
  // line, and every other round gets a verdict against it. Empty: each round
  // is compared with its predecessor.
  std::string baseline;
  int last = 20;               // --last: the newest rounds per case, 1..200
  std::string style = "text";  // --style: text or html (--format json wins)
};

// The newest `last` rounds per case (ListRounds, paged), the baseline's
// rounds, and one CompareRounds per round (each its own call and deadline).
int RunHistory(Session& s, const HistoryArgs& args, std::ostream& out, std::ostream& err);

// The most rounds per case history fetches; and the most ListRounds pages
// (of up to 1000 rounds) read per operator, for history and a collection's
// sparklines.
inline constexpr int kMaxHistoryRounds = 200;
inline constexpr int kMaxHistoryPages = 20;

}  // namespace npuperf::client
