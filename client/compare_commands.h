// The comparison commands of `npuperf`: compare, regressions, baseline pin
// and report. Exit codes follow the bot contract (docs/api.md "CLI"):
// 0 nothing regressed and every matched case has a verdict, 3 something
// regressed, 4 nothing comparable or some evidence insufficient, 1 errors,
// 2 usage errors. Implemented by compare_commands.cc (compare, baseline pin,
// exit codes), regressions_command.cc (regressions, --since) and
// report_commands.cc (report); verdict_output.h prints the verdicts.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "client/confirm_commands.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

// How compare and regressions print their verdicts (their own --format).
enum class VerdictFormat {
  kDefault,   // the global --format: text or json
  kText,      // the verdict table
  kJson,      // the versioned envelope (docs/api.md)
  kJunit,     // JUnit XML, one testcase per case (client/ci_format.h, docs/ci.md)
  kMarkdown,  // a pull-request comment body
  kHtml,      // the comparison page (client/report_commands.h, docs/reports.md)
};

// --fail-on: which outcomes give a non-zero exit code.
enum class FailOn {
  kNoVerdict,  // 3 when something regressed, else 4 when a case reached no verdict (default)
  kRegressed,  // 3 when something regressed; no verdict exits 0
  kNever,      // always 0 (errors still exit 1, 5 or 6)
};

// Verdict knobs shared by compare and regressions (0: the server default).
struct VerdictArgs {
  double alpha = 0;
  double threshold_pct = 0;
  double ratio_threshold_pp = 0;
  VerdictFormat format = VerdictFormat::kDefault;
  FailOn fail_on = FailOn::kNoVerdict;
  // --confirm: request a confirmation of every REGRESSED or IMPROVED verdict
  // and wait for them (up to confirm_timeout); a NOT_CONFIRMED one fails no
  // bot (docs/comparisons.md, "Confirmation").
  bool confirm = false;
  std::chrono::seconds confirm_timeout = kDefaultConfirmTimeout;
};

// Two round ids (digits) or two collection ids.
int RunCompare(Session& s, const std::string& baseline, const std::string& candidate,
               const VerdictArgs& v, std::ostream& out, std::ostream& err);
// One baseline collection against several candidate collections in one call
// (CompareMany); one candidate is RunCompare. Exit codes over all candidates.
int RunCompareMany(Session& s, const std::string& baseline,
                   const std::vector<std::string>& candidates, const VerdictArgs& v,
                   std::ostream& out, std::ostream& err);

struct RegressionsArgs {
  std::string baseline_label;  // key=value of a pinned baseline
  std::string since;           // RFC 3339 time or a duration back from now ("24h", "7d")
  std::string collection;      // candidates from this collection only
  std::string operator_name;
  bool include_closed = false;  // --all: also WONT_FIX and FALSE_POSITIVE cases
  bool precision = false;       // --precision: print each rule's precision
  VerdictArgs verdict;
  // --bisect: a bisection for each new regression (bisect_commands.h
  // BisectRegressions) from the checkout at --repo, operator directories
  // under --ops-dir.
  bool bisect = false;
  std::string repo = ".";
  std::string ops_dir = ".";
};
int RunRegressions(Session& s, const RegressionsArgs& args, std::ostream& out, std::ostream& err);

// target: a round id (digits) or a collection id.
int RunBaselinePin(Session& s, const std::string& label, const std::string& target,
                   std::ostream& out, std::ostream& err);

// report --style.
enum class ReportStyle {
  kText,      // a round's summary.txt; a collection's table
  kMarkdown,  // perf_report.md; a Markdown table
  kJson,      // evidence.json; {"rounds": ..., "golden": ...}
  kHtml,      // the round or collection page (client/report_commands.h, docs/reports.md)
};

// A round (digits: its summary.txt layout) or a collection (a table of its
// rounds).
int RunReport(Session& s, const std::string& id, ReportStyle style, std::ostream& out,
              std::ostream& err);

// True when id is a round id (digits, > 0), stored in *out.
bool IsRoundId(const std::string& id, int64_t* out);

// Exit code of a set of verdicts (the bot contract above).
int ExitCodeOf(const v1::ComparisonCounts& counts);
// The same under a --fail-on policy.
int ExitCodeOf(const v1::ComparisonCounts& counts, FailOn fail_on);

// Parses --since: RFC 3339, or "<n>{s,m,h,d}" back from now_ms.
absl::StatusOr<int64_t> ParseSince(const std::string& since, int64_t now_ms);

}  // namespace npuperf::client
