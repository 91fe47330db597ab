#include "client/cli.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/confirm_commands.h"
#include "client/device_commands.h"
#include "client/discover_commands.h"
#include "client/impl_commands.h"
#include "client/noise_commands.h"
#include "client/report_commands.h"
#include "client/triage_commands.h"
#include "common/duration_text.h"

namespace npuperf::client {
namespace {

// Makes `run` the chosen command when cmd is parsed.
void Choose(CLI::App* cmd, ServerCommand& chosen, ServerCommand run) {
  cmd->callback([&chosen, run = std::move(run)] { chosen = run; });
}

// --reconnect-for of watch and submit's wait (commands.h, RunWatch).
void AddReconnectFor(CLI::App* cmd, std::chrono::seconds& reconnect_for) {
  cmd->add_option_function<int>(
         "--reconnect-for", [&reconnect_for](int s) { reconnect_for = std::chrono::seconds(s); },
         "seconds to keep reconnecting when the server goes away (default 300; 0: never)")
      ->check(CLI::Range(0, 86400));
}

void AddSubmitOptions(CLI::App* sub, SubmitArgs& a) {
  sub->add_option("operator_dirs", a.operator_dirs, "operator directories");
  sub->add_option("--batch", a.batch_dir, "every operator directory under this base directory");
  sub->add_flag("--manifest", a.manifest, "cases from each PERFORMANCE_CASES.json");
  auto* quick = sub->add_flag_callback(
      "--quick", [&a] { a.mode = v1::PROFILE_MODE_QUICK; }, "kernel timing only");
  sub->add_flag_callback(
         "--compare", [&a] { a.mode = v1::PROFILE_MODE_COMPARE; },
         "standard profiling joined with the golden data (golden reference ratio)")
      ->excludes(quick);
  sub->add_option("--op-name", a.op_name, "exact target kernel name");
  sub->add_option("--op-name-map", a.op_name_map, "JSON file {operator: op name}");
  sub->add_flag("--op-name-auto", a.op_name_auto,
                "discover each target first (npuperf discover); accepted only when exactly one "
                "kernel is not a known incidental kernel");
  sub->add_option("--launch", a.launch,
                  "which launches of the target in each run: unique (default), all, N, -N, "
                  "task:STREAM/TASK");
  sub->add_option("--case-id", a.case_ids, "case id (repeatable)");
  sub->add_option("--case-arg", a.case_arg, "runner option that selects the case, e.g. --case-id");
  sub->add_option("--case-env", a.case_env, "environment variable that selects the case");
  sub->add_option("--runner", a.runner, "runner script inside the operator directory");
  sub->add_option("--warm-up", a.warm_up, "warm-up runs (0: none)");
  sub->add_option("--repeats", a.repeats, "measured repeats");
  sub->add_option("--seed", a.seed, "seed (PYPTO_PERF_SEED)");
  sub->add_option("--retry", a.retry, "extra attempts after a failure (0..5)");
  sub->add_option("--max-jobs", a.max_jobs, "jobs running at once (1..8)");
  sub->add_option("--priority", a.priority, "priority tier (-10..10)");
  sub->add_option("--job-timeout", a.timeout_seconds, "per-job limit, seconds");
  sub->add_flag("--keep-raw", a.keep_raw, "keep raw msprof output");
  sub->add_option("--label", a.labels, "label key=value (repeatable)");
  sub->add_option("--soc", a.socs, "allowed SoC (repeatable)");
  sub->add_option("--devices", a.device_range, "allowed device ids, e.g. 0-3");
  sub->add_option("--idempotency-key", a.idempotency_key,
                  "resubmitting the key returns the same collection");
  sub->add_flag("--wait,!--no-wait", a.wait,
                "watch until the collection finishes (default) or return after queueing (exit 0)");
  AddReconnectFor(sub, a.reconnect_for);
}

// discover: the operators and where they may run, as submit takes them.
void AddDiscoverOptions(CLI::App* cmd, SubmitArgs& a) {
  cmd->add_option("operator_dirs", a.operator_dirs, "operator directories");
  cmd->add_option("--batch", a.batch_dir, "every operator directory under this base directory");
  cmd->add_flag("--manifest", a.manifest, "cases from each PERFORMANCE_CASES.json");
  cmd->add_option("--case-id", a.case_ids, "case id (repeatable)");
  cmd->add_option("--case-arg", a.case_arg, "runner option that selects the case, e.g. --case-id");
  cmd->add_option("--case-env", a.case_env, "environment variable that selects the case");
  cmd->add_option("--runner", a.runner, "runner script inside the operator directory");
  cmd->add_option("--job-timeout", a.timeout_seconds, "per-job limit, seconds");
  cmd->add_option("--label", a.labels, "label key=value (repeatable)");
  cmd->add_option("--soc", a.socs, "allowed SoC (repeatable)");
  cmd->add_option("--devices", a.device_range, "allowed device ids, e.g. 0-3");
}

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

// --timeout of confirm and confirmation.
void AddConfirmTimeout(CLI::App* cmd, std::chrono::seconds& timeout) {
  cmd->add_option_function<std::string>(
      "--timeout",
      [&timeout](const std::string& d) {
        auto parsed = ParseDurationText(d);
        if (!parsed.ok()) throw CLI::ValidationError("--timeout", "want <n>s|m|h|d");
        timeout = std::chrono::duration_cast<std::chrono::seconds>(*parsed);
      },
      "how long to wait (default 2h)");
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
  AddConfirmTimeout(confirm, a->timeout);
  Choose(confirm, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunConfirm(s, *a, out, err);
  });
  auto b = std::make_shared<ConfirmationArgs>();
  auto* show = app.add_subcommand("confirmation", "show a confirmation (--wait: until it ends)");
  show->add_option("id", b->id, "confirmation id")->required();
  show->add_flag("--wait", b->wait, "wait until it is no longer PENDING");
  AddConfirmTimeout(show, b->timeout);
  Choose(show, chosen, [b](Session& s, std::ostream& out, std::ostream& err) {
    return RunConfirmation(s, *b, out, err);
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

// devices list [--all], devices release HOST:DEV --note TEXT
// (device_commands.h).
void AddDevices(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<ReleaseArgs>();
  auto all = std::make_shared<bool>(false);
  auto* devices = app.add_subcommand("devices", "device health: quarantined devices");
  devices->require_subcommand(1);
  auto* list = devices->add_subcommand("list", "the quarantined devices (--all: and the released)");
  list->add_flag("--all", *all, "also the released ones, with who released them and why");
  Choose(list, chosen, [all](Session& s, std::ostream& out, std::ostream& err) {
    return RunDevices(s, *all, out, err);
  });
  auto* release = devices->add_subcommand(
      "release", "put a quarantined device back in service (a --device-admin team only)");
  release->add_option("device", a->device, "HOST:DEV, as `npuperf agents` shows it")->required();
  release->add_option("--note", a->note, "why it may take jobs again (kept with it)")->required();
  Choose(release, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunDeviceRelease(s, *a, out, err);
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

void AddSettingFlags(CLI::App& app, Settings& flags, std::string& config_file) {
  app.fallthrough();  // inherited by the commands added after this
  auto setting = [&](const char* flag, const char* key, const char* help) {
    app.add_option_function<std::string>(
        flag, [&flags, key](const std::string& v) { flags[key] = v; }, help);
  };
  setting("--server", "server", "server HOST:PORT (env NPUPERF_SERVER; default 127.0.0.1:50051)");
  setting("--token", "token", "bearer token (env NPUPERF_TOKEN)");
  setting("--tls-ca", "tls_ca", "CA certificate (PEM) of a TLS server (env NPUPERF_TLS_CA)");
  setting("--format", "format", "output format: text or json (env NPUPERF_FORMAT)");
  setting("--timeout", "timeout",
          "deadline of each call, seconds (env NPUPERF_TIMEOUT; default 30)");
  app.add_option("--config", config_file,
                 "config file (env NPUPERF_CONFIG; default ~/.config/npuperf/config)");
}

void AddCollectionCommands(CLI::App& app, ServerCommand& chosen) {
  auto submit = std::make_shared<SubmitArgs>();
  auto* sub = app.add_subcommand("submit", "upload operator directories and queue a collection");
  AddSubmitOptions(sub, *submit);
  Choose(sub, chosen, [submit](Session& s, std::ostream& out, std::ostream& err) {
    return RunSubmit(s, *submit, out, err);
  });
  auto discover = std::make_shared<SubmitArgs>();
  auto* disc = app.add_subcommand(
      "discover", "run each operator once under msprof and print the kernels it launched");
  AddDiscoverOptions(disc, *discover);
  Choose(disc, chosen, [discover](Session& s, std::ostream& out, std::ostream& err) {
    return RunDiscover(s, *discover, out, err);
  });
  struct Args {
    std::string id, reason, page_token;
    std::vector<std::string> labels;
    std::chrono::seconds reconnect_for = kDefaultReconnectFor;
  };
  auto a = std::make_shared<Args>();
  auto* get = app.add_subcommand("get", "show a collection and its jobs");
  get->add_option("collection", a->id)->required();
  Choose(get, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunGet(s, a->id, out, err);
  });
  auto* watch = app.add_subcommand("watch", "follow a collection until it finishes");
  watch->add_option("collection", a->id)->required();
  AddReconnectFor(watch, a->reconnect_for);
  Choose(watch, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunWatch(s, a->id, out, err, a->reconnect_for);
  });
  auto* cancel = app.add_subcommand("cancel", "cancel a collection");
  cancel->add_option("collection", a->id)->required();
  cancel->add_option("--reason", a->reason, "recorded with the cancellation");
  Choose(cancel, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunCancel(s, a->id, a->reason, out, err);
  });
  auto* list = app.add_subcommand("list", "list collections, newest first");
  list->add_option("--label", a->labels, "label key=value filter (repeatable)");
  list->add_option("--page-token", a->page_token, "from a previous page");
  Choose(list, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunList(s, a->labels, a->page_token, out, err);
  });
}

void AddRoundCommands(CLI::App& app, ServerCommand& chosen) {
  struct Args {
    int64_t round_id = 0;
    std::string op, collection, case_id, metric;
    bool changes = false;
    double min_change_pct = 0;
  };
  auto a = std::make_shared<Args>();
  auto* round = app.add_subcommand("round", "show one round of evidence");
  round->add_option("round_id", a->round_id)->required();
  Choose(round, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunRound(s, a->round_id, out, err);
  });
  auto* rounds = app.add_subcommand("rounds", "list rounds of an operator");
  rounds->add_option("operator", a->op, "operator directory name");
  rounds->add_option("--collection", a->collection, "rounds of this collection");
  rounds->add_option("--case-id", a->case_id, "only this case");
  rounds->add_option("--metric", a->metric, "also print this metric's series, e.g. duration");
  rounds->add_flag("--changes", a->changes,
                   "find the change points of each case's --metric series (E-Divisive means)");
  rounds
      ->add_option("--min-change", a->min_change_pct,
                   "smallest step reported with --changes, percent (default 2)")
      ->check(CLI::Range(0.0, 1000.0));
  Choose(rounds, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunRounds(
        s, {a->op, a->case_id, a->collection, a->metric, a->changes, a->min_change_pct}, out, err);
  });
  auto h = std::make_shared<HistoryArgs>();
  auto* history = app.add_subcommand(
      "history", "an operator's kernel time over its rounds, with a baseline and verdicts");
  history->add_option("operator", h->operator_name, "operator directory name")->required();
  history->add_option("--case-id", h->case_id, "only this case");
  history->add_option("--baseline", h->baseline,
                      "round id or collection id (e.g. the pinned one) to draw and compare with; "
                      "default: each round against its predecessor");
  history->add_option("--last", h->last, "newest rounds per case (default 20)")
      ->check(CLI::Range(1, kMaxHistoryRounds));
  history->add_option("--style", h->style, "text or html (a self-contained page)")
      ->check(CLI::IsMember({"text", "html"}));
  Choose(history, chosen, [h](Session& s, std::ostream& out, std::ostream& err) {
    return RunHistory(s, *h, out, err);
  });
  auto* agents = app.add_subcommand("agents", "list agents and their devices");
  Choose(agents, chosen,
         [](Session& s, std::ostream& out, std::ostream& err) { return RunAgents(s, out, err); });
  AddDevices(app, chosen);
}

void AddCompareCommands(CLI::App& app, ServerCommand& chosen) {
  AddCompare(app, chosen);
  AddRegressions(app, chosen);
  AddTriage(app, chosen);
  AddConfirm(app, chosen);
  AddCalibrate(app, chosen);
  AddBaselinePin(app, chosen);
  AddReport(app, chosen);
  AddImplementationCommands(app, chosen);  // compare-impl, release-report
}

void AddHelpCommand(CLI::App& app, std::ostream& out, std::ostream& err, int& exit_code) {
  auto topic = std::make_shared<std::vector<std::string>>();
  auto* help = app.add_subcommand("help", "the commands, or the flags of one: help [COMMAND...]");
  help->add_option("command", *topic, "a command, e.g. submit or baseline pin");
  help->callback([&app, topic, &out, &err, &exit_code] {
    const CLI::App* at = &app;
    for (const std::string& word : *topic) {
      const auto subs = at->get_subcommands(
          [&word](const CLI::App* c) { return c->get_name() == word && !c->get_group().empty(); });
      if (subs.empty()) {
        UnknownCommand(*at, word, err);
        exit_code = kExitUsage;
        return;
      }
      at = subs.front();
    }
    // Not at->help(): that shows the chosen command's help, here `help` itself.
    std::string usage = at->get_name();
    for (const CLI::App* p = at->get_parent(); p != nullptr; p = p->get_parent()) {
      usage = p->get_name() + " " + usage;
    }
    out << at->get_formatter()->make_help(at, usage, CLI::AppFormatMode::Normal);
    exit_code = kExitOk;
  });
}

int EditDistance(const std::string& a, const std::string& b) {
  // d[i][j]: distance of a[0, i) and b[0, j).
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

void UnknownCommand(const CLI::App& app, const std::string& word, std::ostream& err) {
  const auto visible =
      app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); });
  const std::string prefix = app.get_parent() == nullptr ? "npuperf" : "npuperf " + app.get_name();
  if (word.empty()) {
    err << prefix << ": a command is required\n";
  } else {
    err << prefix << ": unknown command '" << word << "'";
    const CLI::App* nearest = nullptr;
    int best = 3;  // suggest within distance 2 only
    for (const CLI::App* c : visible) {
      const int d = EditDistance(word, c->get_name());
      if (d < best && d < static_cast<int>(c->get_name().size())) {
        best = d;
        nearest = c;
      }
    }
    if (nearest != nullptr) err << " (did you mean '" << nearest->get_name() << "'?)";
    err << "\n";
  }
  err << "commands:\n";
  for (const CLI::App* c : visible) {
    const size_t n = c->get_name().size();
    err << "  " << c->get_name() << std::string(n < 14 ? 16 - n : 2, ' ') << c->get_description()
        << "\n";
  }
  err << "run '" << prefix << " --help' for the flags\n";
}

int ReportParseError(CLI::App& app, const CLI::ParseError& e, std::ostream& out,
                     std::ostream& err) {
  // The deepest command parsed: a missing command is its RequiredError.
  const CLI::App* at = &app;
  for (auto subs = app.get_subcommands(); !subs.empty(); subs = at->get_subcommands()) {
    at = subs.front();
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
      at->get_require_subcommand_min() > 0 && at->get_subcommands().empty()) {
    const std::vector<std::string> rest = app.remaining(/*recurse=*/true);
    const auto word = std::find_if(rest.begin(), rest.end(),
                                   [](const std::string& r) { return r.rfind('-', 0) != 0; });
    UnknownCommand(*at, word == rest.end() ? "" : *word, err);
    return kExitUsage;
  }
  return app.exit(e, out, err) == 0 ? kExitOk : kExitUsage;
}

ReportStyle ReportStyleOf(const std::string& style, OutputFormat format) {
  if (format == OutputFormat::kJson || style == "json") return ReportStyle::kJson;
  if (style == "html") return ReportStyle::kHtml;
  return style == "md" ? ReportStyle::kMarkdown : ReportStyle::kText;
}

}  // namespace npuperf::client
