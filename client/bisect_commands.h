// The bisection commands of `npuperf` (docs/comparisons.md, "Bisection"):
// `bisect --repo DIR --good REV --bad REV OPDIR...` packs each operator
// directory at every first-parent revision of good..bad straight from git
// (client/git_range.h: nothing is checked out, an uncommitted change is
// refused), uploads the distinct bundles and starts one bisection per
// operator directory (--wait: until they end); `bisection ID` shows one
// (--wait, --cancel); `bisections` lists the team's.
//
// Exit codes of bisect and bisection: 0 a culprit named (DONE with
// culprits); 4 no culprit (DONE without one, REFUSED, FAILED, CANCELLED) or
// still running (no --wait, or past --timeout); 1 refused or failed before
// starting (a dirty tree, a revision without the directory), 2 usage (a bad
// flag, a range the server would refuse), 5 unavailable, 6 not found. With
// several operator directories, the highest code among them.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "client/commands.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

// How long bisect --wait and bisection --wait wait. Default: 24 h.
inline constexpr std::chrono::seconds kDefaultBisectTimeout{24 * 3600};
// How often they ask.
inline constexpr std::chrono::seconds kBisectPoll{2};

struct BisectArgs {
  // The operator directories, the target names, case selection, params and
  // constraints, as submit takes them (operator_dirs, op_name, op_name_map,
  // runner, launch, case_arg/case_env, warm_up, repeats, seed, retry,
  // priority, timeout_seconds, socs, device_range, idempotency_key).
  SubmitArgs submit;
  std::string repo, good, bad;
  std::string case_id;         // --case-id: the one case bisected
  std::string mode = "quick";  // --mode quick|standard
  std::string metric = "duration";
  int max_runs_per_revision = 0;  // 0: the server's default (4)
  int max_runs = 0;               // 0: the server's default
  bool no_explain = false;
  bool wait = false;
  std::chrono::seconds timeout = kDefaultBisectTimeout;
};
int RunBisect(Session& s, const BisectArgs& args, std::ostream& out, std::ostream& err);

struct BisectionArgs {
  std::string id;  // digits
  bool wait = false;
  bool cancel = false;
  std::string note;  // --note of --cancel
  std::chrono::seconds timeout = kDefaultBisectTimeout;
};
int RunBisection(Session& s, const BisectionArgs& args, std::ostream& out, std::ostream& err);

// `bisections [--all]`: the team's bisections still running (all: every one).
int RunBisections(Session& s, bool all, std::ostream& out, std::ostream& err);

// regressions --bisect: a bisection for every new (DETECTED) tracked
// regression of resp whose baseline and candidate rounds carry a `commit`
// label, over the first-parent range between them in repo, of the operator
// directory repo/ops_dir/<operator>, with the candidate collection's params,
// case selector, constraints and target name, linked to the regression (a
// FALSE_POSITIVE triage cancels it). A regression that cannot be bisected
// (no commit labels, a one-commit range, no such directory) is said on err
// and skipped. Errors of the calls end it.
struct BisectRegressionsArgs {
  std::string repo = ".";
  std::string ops_dir = ".";
};
absl::StatusOr<std::vector<v1::Bisection>> BisectRegressions(
    Session& s, const BisectRegressionsArgs& args, const v1::ListRegressionsResponse& resp,
    std::ostream& err);

// The text form: the state and reason, the ends, each culprit with its
// ratio, interval, changed files and explanation, the revisions skipped.
void PrintBisection(const v1::Bisection& b, std::ostream& out);

}  // namespace npuperf::client
