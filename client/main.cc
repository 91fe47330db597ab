// npuperf: the command-line client.
//
//   npuperf [--server HOST:PORT] [--token T] [--format text|json] <command> ...
//
// Settings: flags, then NPUPERF_* environment, then the config file
// (client/config.h). Exit codes: 0 ok, 1 error (or a collection that did not
// succeed), 2 usage error; compare and regressions add 3 (regressed) and 4
// (nothing comparable or insufficient evidence).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "client/commands.h"
#include "client/compare_commands.h"
#include "client/config.h"
#include "client/offline_commands.h"
#include "common/clock.h"

int main(int argc, char** argv) {
  using namespace npuperf::client;
  ClientConfig config;
  int exit_code = kExitOk;

  CLI::App app{"npuperf: submit NPU operator profiling to npuperf-server, follow it, read the evidence"};
  app.require_subcommand(1);
  Settings flags;
  std::string config_file;
  auto setting = [&](const char* flag, const char* key, const char* help) {
    app.add_option_function<std::string>(flag, [&flags, key](const std::string& v) { flags[key] = v; },
                                         help);
  };
  setting("--server", "server", "server HOST:PORT (env NPUPERF_SERVER; default 127.0.0.1:50051)");
  setting("--token", "token", "bearer token (env NPUPERF_TOKEN)");
  setting("--tls-ca", "tls_ca", "CA certificate (PEM) of a TLS server (env NPUPERF_TLS_CA)");
  setting("--format", "format", "output format: text or json (env NPUPERF_FORMAT)");
  setting("--timeout", "timeout", "deadline of each call, seconds (env NPUPERF_TIMEOUT; default 30)");
  app.add_option("--config", config_file, "config file (env NPUPERF_CONFIG; default ~/.config/npuperf/config)");

  SubmitArgs submit;
  auto* sub = app.add_subcommand("submit", "upload operator directories and queue a collection");
  sub->add_option("operator_dirs", submit.operator_dirs, "operator directories");
  sub->add_option("--batch", submit.batch_dir, "every operator directory under this base directory");
  sub->add_flag("--manifest", submit.manifest, "cases from each PERFORMANCE_CASES.json");
  auto* quick = sub->add_flag_callback("--quick", [&] { submit.mode = npuperf::v1::PROFILE_MODE_QUICK; }, "kernel timing only");
  sub->add_flag_callback("--compare", [&] { submit.mode = npuperf::v1::PROFILE_MODE_COMPARE; },
                         "standard profiling joined with the golden data (golden reference ratio)")
      ->excludes(quick);
  sub->add_option("--op-name", submit.op_name, "exact target kernel name");
  sub->add_option("--op-name-map", submit.op_name_map, "JSON file {operator: op name}");
  sub->add_option("--case-id", submit.case_ids, "case id (repeatable)");
  sub->add_option("--case-arg", submit.case_arg, "runner option that selects the case, e.g. --case-id");
  sub->add_option("--case-env", submit.case_env, "environment variable that selects the case");
  sub->add_option("--runner", submit.runner, "runner script inside the operator directory");
  sub->add_option("--warm-up", submit.warm_up, "warm-up runs (0: none)");
  sub->add_option("--repeats", submit.repeats, "measured repeats");
  sub->add_option("--seed", submit.seed, "seed (PYPTO_PERF_SEED)");
  sub->add_option("--retry", submit.retry, "extra attempts after a failure (0..5)");
  sub->add_option("--max-jobs", submit.max_jobs, "jobs running at once (1..8)");
  sub->add_option("--priority", submit.priority, "priority tier (-10..10)");
  sub->add_option("--job-timeout", submit.timeout_seconds, "per-job limit, seconds");
  sub->add_flag("--keep-raw", submit.keep_raw, "keep raw msprof output");
  sub->add_option("--label", submit.labels, "label key=value (repeatable)");
  sub->add_option("--soc", submit.socs, "allowed SoC (repeatable)");
  sub->add_option("--devices", submit.device_range, "allowed device ids, e.g. 0-3");
  sub->add_option("--idempotency-key", submit.idempotency_key, "resubmitting the key returns the same collection");
  sub->add_flag("--wait,!--no-wait", submit.wait, "watch until the collection finishes (default) or return after queueing");

  std::string id, reason, page_token, op, case_id, metric, collection;
  std::vector<std::string> labels;
  int64_t round_id = 0;
  auto* get = app.add_subcommand("get", "show a collection and its jobs");
  get->add_option("collection", id)->required();
  auto* watch = app.add_subcommand("watch", "follow a collection until it finishes");
  watch->add_option("collection", id)->required();
  auto* cancel = app.add_subcommand("cancel", "cancel a collection");
  cancel->add_option("collection", id)->required();
  cancel->add_option("--reason", reason, "recorded with the cancellation");
  auto* list = app.add_subcommand("list", "list collections, newest first");
  list->add_option("--label", labels, "label key=value filter (repeatable)");
  list->add_option("--page-token", page_token, "from a previous page");
  auto* round = app.add_subcommand("round", "show one round of evidence");
  round->add_option("round_id", round_id)->required();
  auto* rounds = app.add_subcommand("rounds", "list rounds of an operator");
  rounds->add_option("operator", op, "operator directory name");
  rounds->add_option("--collection", collection, "rounds of this collection");
  rounds->add_option("--case-id", case_id, "only this case");
  rounds->add_option("--metric", metric, "also print this metric's series, e.g. duration");
  auto* agents = app.add_subcommand("agents", "list agents and their devices");

  std::string baseline, candidate, style = "text", label;
  VerdictArgs verdict;
  auto verdict_flags = [&](CLI::App* cmd, VerdictArgs* v) {
    cmd->add_option("--alpha", v->alpha, "significance level (default 0.01)");
    cmd->add_option("--threshold", v->threshold_pct, "practical threshold for durations, % (default 2)");
    cmd->add_option("--ratio-threshold", v->ratio_threshold_pp,
                    "practical threshold for ratio metrics, percentage points (default 1)");
  };
  auto* compare = app.add_subcommand(
      "compare", "compare two rounds or two collections (exit 0 ok, 3 regressed, 4 no verdict)");
  compare->add_option("baseline", baseline, "baseline round id or collection id")->required();
  compare->add_option("candidate", candidate, "candidate round id or collection id")->required();
  verdict_flags(compare, &verdict);
  RegressionsArgs regressions_args;
  auto* regressions = app.add_subcommand(
      "regressions", "regressed cases against a pinned baseline or since a time (exit 0/3/4)");
  regressions->add_option("--baseline", regressions_args.baseline_label, "pinned baseline label key=value");
  regressions->add_option("--since", regressions_args.since, "RFC 3339 time or 24h, 7d ...");
  regressions->add_option("--collection", regressions_args.collection, "candidates from this collection");
  regressions->add_option("--operator", regressions_args.operator_name, "only this operator");
  verdict_flags(regressions, &regressions_args.verdict);
  auto* baseline_cmd = app.add_subcommand("baseline", "baselines of labels");
  baseline_cmd->require_subcommand(1);
  auto* pin = baseline_cmd->add_subcommand("pin", "pin a round or collection as the baseline of a label");
  pin->add_option("label", label, "label key=value, e.g. branch=main")->required();
  pin->add_option("target", id, "round id or collection id")->required();
  auto* report = app.add_subcommand("report", "a round's summary.txt, or a collection's table");
  report->add_option("id", id, "round id or collection id")->required();
  report->add_option("--style", style, "text, md or json")->check(CLI::IsMember({"text", "md", "json"}));
  AddOfflineCommands(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  Settings file;
  if (const std::string path = ConfigFilePath(config_file); !path.empty()) {
    auto read = ReadConfigFile(path);
    if (!read.ok()) {
      std::cerr << "npuperf: " << read.status().message() << "\n";
      return kExitUsage;
    }
    file = *std::move(read);
  }
  if (absl::Status st = ResolveConfig(flags, SettingsFromEnvironment(), file, &config); !st.ok()) {
    std::cerr << "npuperf: " << st.message() << "\n";
    return kExitUsage;
  }
  config.progress = ::isatty(STDERR_FILENO) ? ProgressStyle::kTerminal : ProgressStyle::kLines;
  npuperf::RealClock clock;
  auto session = [&] { return Session::Connect(config, clock); };
  if (sub->parsed()) return RunSubmit(*session(), submit, std::cout, std::cerr);
  if (get->parsed()) return RunGet(*session(), id, std::cout, std::cerr);
  if (watch->parsed()) return RunWatch(*session(), id, std::cout, std::cerr);
  if (cancel->parsed()) return RunCancel(*session(), id, reason, std::cout, std::cerr);
  if (list->parsed()) return RunList(*session(), labels, page_token, std::cout, std::cerr);
  if (round->parsed()) return RunRound(*session(), round_id, std::cout, std::cerr);
  if (rounds->parsed()) {
    if (op.empty() == collection.empty()) {
      std::cerr << "npuperf rounds: give an operator or --collection\n";
      return kExitUsage;
    }
    return RunRounds(*session(), op, case_id, collection, metric, std::cout, std::cerr);
  }
  if (agents->parsed()) return RunAgents(*session(), std::cout, std::cerr);
  if (compare->parsed()) return RunCompare(*session(), baseline, candidate, verdict, std::cout, std::cerr);
  if (regressions->parsed()) return RunRegressions(*session(), regressions_args, std::cout, std::cerr);
  if (pin->parsed()) return RunBaselinePin(*session(), label, id, std::cout, std::cerr);
  if (report->parsed()) {
    ReportStyle report_style = ReportStyle::kText;
    if (style == "md") report_style = ReportStyle::kMarkdown;
    if (style == "json" || config.format == OutputFormat::kJson) report_style = ReportStyle::kJson;
    return RunReport(*session(), id, report_style, std::cout, std::cerr);
  }
  return exit_code;
}
