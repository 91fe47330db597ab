// The comparison commands of `npuperf` (cli.h): compare, regressions,
// triage, confirm, confirmation, calibrate, noise, baseline pin, report,
// compare-impl, release-report.
#include <map>
#include <memory>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/bisect_commands.h"
#include "client/cli.h"
#include "client/confirm_commands.h"
#include "client/impl_commands.h"
#include "client/noise_commands.h"
#include "client/triage_commands.h"
#include "common/duration_text.h"

namespace npuperf::client {
namespace {

void AddVerdictFlags(CLI::App* cmd, VerdictArgs& v) {
  cmd->add_option("--alpha", v.alpha, "significance level (default 0.01)");
  cmd->add_option("--threshold", v.threshold_pct,
                  "practical threshold for durations, % (default 2)");
  cmd->add_option("--ratio-threshold", v.ratio_threshold_pp,
                  "practical threshold for ratio metrics, percentage points (default 1)");
  static const std::map<std::string, VerdictFormat> kFormats = {
      {"text", VerdictFormat::kText},
      {"json", VerdictFormat::kJson},
      {"junit", VerdictFormat::kJunit},
      {"markdown", VerdictFormat::kMarkdown},
      {"html", VerdictFormat::kHtml}};
  cmd->add_option_function<std::string>(
         "--format", [&v](const std::string& f) { v.format = kFormats.at(f); },
         "text, json, junit (JUnit XML), markdown (a PR comment) or html (a page); default: the "
         "global --format")
      ->check(CLI::IsMember({"text", "json", "junit", "markdown", "html"}));
  static const std::map<std::string, FailOn> kFailOn = {{"no-verdict", FailOn::kNoVerdict},
                                                        {"regressed", FailOn::kRegressed},
                                                        {"never", FailOn::kNever}};
  cmd->add_option_function<std::string>(
         "--fail-on", [&v](const std::string& f) { v.fail_on = kFailOn.at(f); },
         "no-verdict (3 regressed, 4 no verdict; default), regressed (only 3) or never (0)")
      ->check(CLI::IsMember({"no-verdict", "regressed", "never"}));
  cmd->add_flag("--confirm", v.confirm,
                "rerun every REGRESSED or IMPROVED case interleaved on another device and wait: "
                "a NOT_CONFIRMED regression exits 0");
  cmd->add_option_function<std::string>(
      "--confirm-timeout",
      [&v](const std::string& d) {
        auto parsed = ParseDurationText(d);
        if (!parsed.ok()) throw CLI::ValidationError("--confirm-timeout", "want <n>s|m|h|d");
        v.confirm_timeout = std::chrono::duration_cast<std::chrono::seconds>(*parsed);
      },
      "how long --confirm waits (default 2h); cases still pending keep their verdict");
}

void AddCompare(CLI::App& app, ServerCommand& chosen) {
  struct Args {
    std::string baseline;
    std::vector<std::string> candidates;
    VerdictArgs verdict;
  };
  auto a = std::make_shared<Args>();
  auto* compare = app.add_subcommand(
      "compare",
      "compare two rounds, or a collection with up to 16 others (exit 0 ok, 3 regressed, 4 no "
      "verdict)");
  compare->add_option("baseline", a->baseline, "baseline round id or collection id")->required();
  compare
      ->add_option("candidate", a->candidates,
                   "candidate round id or collection id; several collection ids compare each "
                   "with the baseline")
      ->required()
      ->expected(1, 16);
  AddVerdictFlags(compare, a->verdict);
  Choose(compare, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunCompareMany(s, a->baseline, a->candidates, a->verdict, out, err);
  });
}

void AddRegressions(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<RegressionsArgs>();
  auto* regressions = app.add_subcommand(
      "regressions", "regressed cases against a pinned baseline or since a time (exit 0/3/4)");
  regressions->add_option("--baseline", a->baseline_label, "pinned baseline label key=value");
  regressions->add_option("--since", a->since, "RFC 3339 time or 24h, 7d ...");
  regressions->add_option("--collection", a->collection, "candidates from this collection");
  regressions->add_option("--operator", a->operator_name, "only this operator");
  regressions->add_flag("--all", a->include_closed,
                        "also the cases whose regression is WONT_FIX or FALSE_POSITIVE");
  regressions->add_flag("--precision", a->precision,
                        "print each rule's precision (confirmed vs false positives)");
  regressions->add_flag("--bisect", a->bisect,
                        "start a bisection for each new regression whose rounds carry commit "
                        "labels, from the checkout at --repo");
  regressions->add_option("--repo", a->repo, "the git checkout --bisect packs from (default .)");
  regressions->add_option("--ops-dir", a->ops_dir,
                          "where the operator directories are inside --repo (default .)");
  AddVerdictFlags(regressions, a->verdict);
  Choose(regressions, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunRegressions(s, *a, out, err);
  });
}

void AddTriage(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<TriageArgs>();
  auto* triage = app.add_subcommand(
      "triage", "show a regression, or move it: --ack, --fixed, --wont-fix, --false-positive");
  triage->add_option("id", a->id, "regression id (npuperf regressions lists them)")->required();
  std::vector<CLI::Option*> moves;
  struct Move {
    const char* flag;
    v1::RegressionState state;
    const char* help;
  };
  const Move kMoves[] = {
      {"--ack", v1::REGRESSION_STATE_ACKNOWLEDGED, "acknowledge it (bots stop failing on it)"},
      {"--fixed", v1::REGRESSION_STATE_FIXED, "mark it fixed (a later detection is a new one)"},
      {"--wont-fix", v1::REGRESSION_STATE_WONT_FIX, "accept it (hidden from regressions)"},
      {"--false-positive", v1::REGRESSION_STATE_FALSE_POSITIVE,
       "not a real regression (hidden; counts against the rule's precision)"}};
  for (const Move& m : kMoves) {
    moves.push_back(triage->add_flag_callback(
        m.flag, [a, state = m.state] { a->new_state = state; }, m.help));
  }
  for (CLI::Option* m : moves) {
    for (CLI::Option* other : moves) {
      if (m != other) m->excludes(other);
    }
  }
  triage->add_option("--note", a->note, "why (at most 1024 bytes)");
  Choose(triage, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunTriage(s, *a, out, err);
  });
}

void AddConfirm(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<ConfirmArgs>();
  auto* confirm = app.add_subcommand(
      "confirm",
      "rerun a REGRESSED or IMPROVED comparison of two rounds interleaved on another device and "
      "wait (exit 3 confirmed regression, 0 not confirmed or confirmed improvement, 4 "
      "unconfirmed)");
  confirm->add_option("baseline", a->baseline, "baseline round id")->required();
  confirm->add_option("candidate", a->candidate, "candidate round id")->required();
  confirm->add_option("--pairs", a->pairs, "reruns per side, 1..5 (default 2: A B A B)");
  confirm->add_flag("--no-wait{false}", a->wait, "print the pending confirmation and exit 4");
  confirm->add_option("--alpha", a->alpha, "significance level (default 0.01)");
  confirm->add_option("--threshold", a->threshold_pct, "duration threshold, percent (default 2)");
  AddWaitTimeout(confirm, a->timeout, "how long to wait (default 2h)");
  Choose(confirm, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunConfirm(s, *a, out, err);
  });
  auto b = std::make_shared<ConfirmationArgs>();
  auto* show = app.add_subcommand("confirmation", "show a confirmation (--wait: until it ends)");
  show->add_option("id", b->id, "confirmation id")->required();
  show->add_flag("--wait", b->wait, "wait until it is no longer PENDING");
  AddWaitTimeout(show, b->timeout, "how long to wait (default 2h)");
  Choose(show, chosen, [b](Session& s, std::ostream& out, std::ostream& err) {
    return RunConfirmation(s, *b, out, err);
  });
}

void AddBisect(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<BisectArgs>();
  SubmitArgs& sa = a->submit;
  auto* cmd = app.add_subcommand(
      "bisect",
      "find the commit of a git range that changed an operator's duration: each operator "
      "directory is packed at every first-parent revision from git and bisected k-ary on the "
      "fleet (exit 0 culprit named, 4 none or still running)");
  cmd->add_option("operator_dirs", sa.operator_dirs, "operator directories inside --repo")
      ->required();
  cmd->add_option("--repo", a->repo, "the git work tree")->required();
  cmd->add_option("--good", a->good, "a revision before the change")->required();
  cmd->add_option("--bad", a->bad, "a revision after it (good must be its ancestor)")->required();
  cmd->add_option("--op-name", sa.op_name, "exact target kernel name");
  cmd->add_option("--op-name-map", sa.op_name_map, "JSON file {operator: op name}");
  cmd->add_option("--case-id", a->case_id, "the case bisected (when the manifest has several)");
  cmd->add_option("--case-arg", sa.case_arg, "runner option that selects the case");
  cmd->add_option("--case-env", sa.case_env, "environment variable that selects the case");
  cmd->add_option("--runner", sa.runner, "runner script inside the operator directory");
  cmd->add_option("--launch", sa.launch, "launch selector (as submit)");
  cmd->add_option("--mode", a->mode, "quick (default) or standard")
      ->check(CLI::IsMember({"quick", "standard"}));
  cmd->add_option("--metric", a->metric, "duration (the default and only metric)");
  cmd->add_option("--warm-up", sa.warm_up, "warm-up runs (0: none)");
  cmd->add_option("--repeats", sa.repeats, "measured repeats per run");
  cmd->add_option("--seed", sa.seed, "seed (PYPTO_PERF_SEED)");
  cmd->add_option("--priority", sa.priority, "priority tier (-10..10)");
  cmd->add_option("--job-timeout", sa.timeout_seconds, "per-run limit, seconds");
  cmd->add_option("--soc", sa.socs, "allowed SoC (repeatable)");
  cmd->add_option("--devices", sa.device_range, "allowed device ids, e.g. 0-3");
  cmd->add_option("--max-runs-per-revision", a->max_runs_per_revision,
                  "runs of one revision at most, 1..8 (default 4)");
  cmd->add_option("--max-runs", a->max_runs, "runs in all at most, 1..2000");
  cmd->add_flag("--no-explain", a->no_explain,
                "do not profile the culprits and their parents in standard mode");
  cmd->add_option("--idempotency-key", sa.idempotency_key,
                  "default: derived from the range, so running it again returns the same one");
  cmd->add_flag("--wait", a->wait, "wait until it ends");
  AddWaitTimeout(cmd, a->timeout, "how long --wait waits (default 24h)");
  Choose(cmd, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunBisect(s, *a, out, err);
  });
  auto b = std::make_shared<BisectionArgs>();
  auto* show = app.add_subcommand("bisection", "show a bisection (--wait: until it ends)");
  show->add_option("id", b->id, "bisection id")->required();
  show->add_flag("--wait", b->wait, "wait until it ends");
  show->add_flag("--cancel", b->cancel, "cancel it: every run not finished is cancelled");
  show->add_option("--note", b->note, "recorded with --cancel");
  AddWaitTimeout(show, b->timeout, "how long --wait waits (default 24h)");
  Choose(show, chosen, [b](Session& s, std::ostream& out, std::ostream& err) {
    return RunBisection(s, *b, out, err);
  });
  auto all = std::make_shared<bool>(false);
  auto* list = app.add_subcommand("bisections", "list the team's bisections still running");
  list->add_flag("--all", *all, "also those that ended");
  Choose(list, chosen, [all](Session& s, std::ostream& out, std::ostream& err) {
    return RunBisections(s, *all, out, err);
  });
}

void AddCalibrate(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<CalibrateArgs>();
  auto* calibrate = app.add_subcommand(
      "calibrate",
      "rerun a finished collection A/A and store each case's measured noise (the thresholds "
      "verdicts use)");
  calibrate->add_option("collection", a->collection_id, "a finished standard or quick collection")
      ->required();
  calibrate->add_option("--runs", a->runs, "A/A reruns, 3..20 (default 5)")
      ->check(CLI::Range(3, 20));
  calibrate->add_flag("--wait", a->wait,
                      "wait until it finishes (exit 0 SUCCEEDED, 1 FAILED) and print the spreads");
  calibrate->add_option("--every", a->every,
                        "keep running: a new calibration each period, e.g. 24h (implies --wait)");
  calibrate->add_option("--count", a->count, "with --every: stop after this many calibrations")
      ->check(CLI::Range(1, 1'000'000));
  Choose(calibrate, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunCalibrate(s, *a, out, err);
  });
  auto op = std::make_shared<std::string>();
  auto* noise = app.add_subcommand(
      "noise", "the measured noise verdicts use: spread, threshold and false-alarm rate per case");
  noise->add_option("--operator", *op, "only this operator");
  Choose(noise, chosen, [op](Session& s, std::ostream& out, std::ostream& err) {
    return RunNoise(s, *op, out, err);
  });
}

void AddBaselinePin(CLI::App& app, ServerCommand& chosen) {
  struct Args {
    std::string label, target;
  };
  auto a = std::make_shared<Args>();
  auto* baseline = app.add_subcommand("baseline", "baselines of labels");
  baseline->require_subcommand(1);
  auto* pin =
      baseline->add_subcommand("pin", "pin a round or collection as the baseline of a label");
  pin->add_option("label", a->label, "label key=value, e.g. branch=main")->required();
  pin->add_option("target", a->target, "round id or collection id")->required();
  Choose(pin, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunBaselinePin(s, a->label, a->target, out, err);
  });
}

void AddReport(CLI::App& app, ServerCommand& chosen) {
  struct Args {
    std::string id, style = "text";
  };
  auto a = std::make_shared<Args>();
  auto* report = app.add_subcommand("report", "a round's summary.txt, or a collection's table");
  report->add_option("id", a->id, "round id or collection id")->required();
  report->add_option("--style", a->style, "text, md, json or html (a self-contained page)")
      ->check(CLI::IsMember({"text", "md", "json", "html"}));
  Choose(report, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunReport(s, a->id, ReportStyleOf(a->style, s.config().format), out, err);
  });
}

}  // namespace

// One line per command group, in the order of the help.
void AddCompareCommands(CLI::App& app, ServerCommand& chosen) {
  AddCompare(app, chosen);
  AddRegressions(app, chosen);
  AddTriage(app, chosen);
  AddConfirm(app, chosen);
  AddBisect(app, chosen);
  AddCalibrate(app, chosen);
  AddBaselinePin(app, chosen);
  AddReport(app, chosen);
  AddImplementationCommands(app, chosen);  // compare-impl, release-report
}

ReportStyle ReportStyleOf(const std::string& style, OutputFormat format) {
  if (format == OutputFormat::kJson || style == "json") return ReportStyle::kJson;
  if (style == "html") return ReportStyle::kHtml;
  return style == "md" ? ReportStyle::kMarkdown : ReportStyle::kText;
}

}  // namespace npuperf::client
