// npuperf: the command-line client.
//
//   npuperf [--server HOST:PORT] [--token T] [--format text|json] <command> ...
//
// NPUPERF_SERVER and NPUPERF_TOKEN stand in for the flags. Exit codes: 0 ok,
// 1 error (or a collection that did not succeed), 2 usage error.
#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "client/commands.h"
#include "client/offline_commands.h"

namespace npuperf::client {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

}  // namespace
}  // namespace npuperf::client

int main(int argc, char** argv) {
  using namespace npuperf::client;
  ClientConfig config;
  config.server = EnvOr("NPUPERF_SERVER", config.server);
  config.token = EnvOr("NPUPERF_TOKEN", "");
  int timeout_s = static_cast<int>(config.timeout.count());
  int exit_code = kExitOk;

  CLI::App app{"npuperf: submit NPU operator profiling to npuperf-server, follow it, read the evidence"};
  app.require_subcommand(1);
  app.add_option("--server", config.server, "server HOST:PORT (env NPUPERF_SERVER)")->capture_default_str();
  app.add_option("--token", config.token, "bearer token (env NPUPERF_TOKEN)");
  app.add_option("--format", config.format, "output format")->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--timeout", timeout_s, "deadline of each call, seconds")->capture_default_str();
  app.add_option("--tls-ca", config.tls_ca, "CA certificate (PEM) of a TLS server (env NPUPERF_TLS_CA)")
      ->envname("NPUPERF_TLS_CA")->check(CLI::ExistingFile);

  SubmitArgs submit;
  auto* sub = app.add_subcommand("submit", "upload operator directories and queue a collection");
  sub->add_option("operator_dirs", submit.operator_dirs, "operator directories");
  sub->add_option("--batch", submit.batch_dir, "every operator directory under this base directory");
  sub->add_flag("--manifest", submit.manifest, "cases from each PERFORMANCE_CASES.json");
  auto* quick = sub->add_flag_callback("--quick", [&] { submit.mode = "quick"; }, "kernel timing only");
  sub->add_flag_callback("--compare", [&] { submit.mode = "compare"; }, "timing joined with golden data")
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
  sub->add_flag("!--no-wait", submit.wait, "return after queueing instead of watching");

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
  AddOfflineCommands(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  config.timeout = std::chrono::seconds(timeout_s);
  auto session = [&] { return Session::Connect(config); };
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
  return exit_code;
}
