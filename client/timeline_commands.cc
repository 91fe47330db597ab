#include "client/timeline_commands.h"

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "evidence/timeline.h"
#include "report/report.h"

namespace npuperf::client {
namespace {

namespace ev = npuperf::evidence;

constexpr int kOk = 0;
constexpr int kNotUnique = 1;
constexpr int kUsageError = 2;

}  // namespace

int RunSummarizeTimeline(const TimelineArgs& args, std::ostream& out, std::ostream& err) {
  if (args.op_name.empty()) {
    err << "[ERROR] --op-name must name the exact target task event\n";
    return kUsageError;
  }
  if (args.format != "text" && args.format != "json" && args.format != "html" &&
      args.format != "perfetto") {
    err << "[ERROR] --format must be text, json, html or perfetto\n";
    return kUsageError;
  }
  absl::StatusOr<std::filesystem::path> trace = ev::FindTimelineTrace(args.input);
  if (!trace.ok()) {
    err << "[ERROR] " << trace.status().message() << "\n";
    return kNotUnique;
  }
  ev::TimelineOptions options;
  options.op_name = args.op_name;
  options.max_listed_events = args.max_events;
  absl::StatusOr<ev::TimelineEvidence> t = ev::SummarizeTimeline(*trace, options);
  if (!t.ok()) {
    err << "[ERROR] " << t.status().message() << "\n";
    return kNotUnique;
  }
  err << "[INFO] timeline " << trace->string() << ": " << t->trace_bytes << " bytes, "
      << t->trace_events << " events, " << t->passes << " pass" << (t->passes == 1 ? "" : "es")
      << "\n";
  if (args.format == "html") {
    out << report::RenderTimelinePage(ev::TimelineToJson(*t));
  } else if (args.format == "perfetto") {
    if (static_cast<int64_t>(t->events.size()) < t->events_in_window) {
      err << "[INFO] the trace holds " << t->events.size() << " of the window's "
          << t->events_in_window << " instruction events (--max-events)\n";
    }
    out << ev::TimelineToChromeTrace(*t);
  } else {
    out << (args.format == "json" ? ev::TimelineToJson(*t) : ev::TimelineToText(*t));
  }
  return t->attribution_status == "unique_exact_target_window" ? kOk : kNotUnique;
}

void AddTimelineCommands(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TimelineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "summarize-timeline",
      "Offline: the instruction timeline (--instr-profiling=on) of one kernel: target window, "
      "Group lanes, same-lane overlap");
  cmd->add_option("input", args->input, "PROF_* directory, its --output, or msprof_<ts>.json")
      ->required();
  cmd->add_option("--op-name", args->op_name, "exact name of the target task event")->required();
  cmd->add_option("--format", args->format,
                  "text|json|html (the lanes, overlap marked)|perfetto (a Chrome trace of the "
                  "target window that Perfetto loads)")
      ->check(CLI::IsMember({"text", "json", "html", "perfetto"}));
  cmd->add_option("--max-events", args->max_events, "instruction events listed (default 1000)")
      ->check(CLI::Range(0, 1000000));
  cmd->callback(
      [args, &exit_code] { exit_code = RunSummarizeTimeline(*args, std::cout, std::cerr); });
}

}  // namespace npuperf::client
