// The collection and round commands of `npuperf` (cli.h): submit, discover,
// get, watch, cancel, list; round, rounds, history, agents, devices.
#include <memory>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/cli.h"
#include "client/device_commands.h"
#include "client/discover_commands.h"
#include "client/report_commands.h"
#include "client/timeline_job_commands.h"

namespace npuperf::client {
namespace {

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

void AddSubmit(CLI::App& app, ServerCommand& chosen) {
  auto submit = std::make_shared<SubmitArgs>();
  auto* sub = app.add_subcommand("submit", "upload operator directories and queue a collection");
  AddSubmitOptions(sub, *submit);
  Choose(sub, chosen, [submit](Session& s, std::ostream& out, std::ostream& err) {
    return RunSubmit(s, *submit, out, err);
  });
}

void AddDiscover(CLI::App& app, ServerCommand& chosen) {
  auto discover = std::make_shared<SubmitArgs>();
  auto* disc = app.add_subcommand(
      "discover", "run each operator once under msprof and print the kernels it launched");
  AddDiscoverOptions(disc, *discover);
  Choose(disc, chosen, [discover](Session& s, std::ostream& out, std::ostream& err) {
    return RunDiscover(s, *discover, out, err);
  });
}

// get, watch, cancel and list.
void AddCollectionReads(CLI::App& app, ServerCommand& chosen) {
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

// round and rounds.
void AddRounds(CLI::App& app, ServerCommand& chosen) {
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
}

void AddHistory(CLI::App& app, ServerCommand& chosen) {
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
}

void AddAgents(CLI::App& app, ServerCommand& chosen) {
  auto* agents = app.add_subcommand("agents", "list agents and their devices");
  Choose(agents, chosen,
         [](Session& s, std::ostream& out, std::ostream& err) { return RunAgents(s, out, err); });
}

// devices list [--all], devices release HOST:DEV --note TEXT, devices
// canaries (device_commands.h).
void AddDevices(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<ReleaseArgs>();
  auto all = std::make_shared<bool>(false);
  auto* devices = app.add_subcommand("devices", "device health: quarantined devices and canaries");
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
  auto c = std::make_shared<CanariesArgs>();
  auto* canaries = devices->add_subcommand(
      "canaries", "the canaries run on idle devices, newest first, and how each compared");
  canaries->add_option("device", c->device, "only HOST:DEV's (a --device-admin team only)");
  canaries->add_option("--device", c->device_id, "only device DEV's, on any host")
      ->check(CLI::Range(0, 4095));
  canaries->add_option("--soc", c->soc, "only this SoC's");
  canaries->add_option("--limit", c->limit, "at most this many (default 100)")
      ->check(CLI::Range(1, 1000));
  Choose(canaries, chosen, [c](Session& s, std::ostream& out, std::ostream& err) {
    return RunCanaries(s, *c, out, err);
  });
}

void AddTimelineJob(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<TimelineJobArgs>();
  auto* cmd = app.add_subcommand(
      "timeline",
      "queue the instruction timeline (--instr-profiling=on) of formal rounds on their devices "
      "(docs/evidence.md \"Timeline\")");
  cmd->add_option("targets", a->targets, "round ids, or one collection id")->required();
  cmd->add_option("--case", a->case_ids, "with a collection: only these cases (repeatable)");
  cmd->add_option("--tile-dag-attestation", a->tile_dag_attestation,
                  "your Tile-DAG attestation JSON: with the timeline and the roofline it decides "
                  "whether the round may be closed")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--wait", a->wait, "follow the jobs and print each timeline");
  AddWaitTimeout(cmd, a->timeout, "how long --wait waits (default 2h)");
  Choose(cmd, chosen, [a](Session& s, std::ostream& out, std::ostream& err) {
    return RunTimelineJob(s, *a, out, err);
  });
}

}  // namespace

// One line per command, in the order of the help.
void AddCollectionCommands(CLI::App& app, ServerCommand& chosen) {
  AddSubmit(app, chosen);
  AddDiscover(app, chosen);
  AddCollectionReads(app, chosen);  // get, watch, cancel, list
}

void AddRoundCommands(CLI::App& app, ServerCommand& chosen) {
  AddRounds(app, chosen);  // round, rounds
  AddTimelineJob(app, chosen);
  AddHistory(app, chosen);
  AddAgents(app, chosen);
  AddDevices(app, chosen);  // devices list, devices release
}

}  // namespace npuperf::client
