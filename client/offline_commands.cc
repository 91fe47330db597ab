#include "client/offline_commands.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <system_error>

#include <CLI/CLI.hpp>

#include "client/timeline_commands.h"
#include "evidence/archive.h"
#include "evidence/discovery.h"
#include "evidence/evidence.h"
#include "evidence/evidence_json.h"
#include "evidence/launch.h"
#include "evidence/summary_text.h"
#include "evidence/task_time.h"

namespace npuperf::client {
namespace {

namespace fs = std::filesystem;
namespace ev = npuperf::evidence;

constexpr int kOk = 0;
constexpr int kEvidenceError = 1;
constexpr int kUsageError = 2;

int Fail(std::ostream& err, const absl::Status& s) {
  err << "[ERROR] " << s.message() << "\n";
  return kEvidenceError;
}

int Usage(std::ostream& err, const std::string& message) {
  err << "[ERROR] " << message << "\n";
  return kUsageError;
}

// `p` made absolute without throwing (std::filesystem::absolute throws on an
// empty path); an empty argument is a usage error naming it.
absl::StatusOr<fs::path> Absolute(const fs::path& p, const char* arg) {
  if (p.empty()) {
    return absl::InvalidArgumentError(std::string("the ") + arg +
                                      " argument is empty (''): give a directory");
  }
  std::error_code ec;
  fs::path out = fs::absolute(p, ec);
  if (ec) {
    return absl::InvalidArgumentError(std::string(arg) + " '" + p.string() + "': " + ec.message());
  }
  return out;
}

// Usage checks that CLI11 validators do not cover.
int ValidateSummarize(const SummarizeArgs& args, std::ostream& err) {
  for (auto [path, arg] : {std::pair{&args.prof_group, "prof_group"}, {&args.ops_dir, "ops_dir"}}) {
    if (absl::StatusOr<fs::path> a = Absolute(*path, arg); !a.ok()) {
      return Usage(err, std::string(a.status().message()));
    }
  }
  if (args.op_name.empty() && !args.quick) {
    return Usage(err, "--op-name must name the exact target kernel (only --quick may omit it)");
  }
  if (absl::StatusOr<ev::LaunchSelector> l = ev::ParseLaunchSelector(args.launch); !l.ok()) {
    return Usage(err, std::string(l.status().message()));
  }
  if (!args.round_name.empty() && !ev::IsValidRoundName(args.round_name)) {
    return Usage(err, "--round-name must match round_NNN; got '" + args.round_name + "'");
  }
  if (args.format != "text" && args.format != "json" && args.format != "md") {
    return Usage(err, "--format must be text, json or md");
  }
  if (args.lang != "en" && args.lang != "zh") return Usage(err, "--lang must be en or zh");
  std::error_code ec;
  if (!fs::is_directory(args.ops_dir, ec)) {
    return Fail(err, absl::NotFoundError("'" + args.ops_dir.string() + "' is not a directory."));
  }
  return kOk;
}

// Quick mode: the task_time (api_statistic fallback) of one msprof run.
absl::StatusOr<ev::Evidence> QuickFromRun(const SummarizeArgs& args,
                                          const ev::LaunchSelector& launch) {
  fs::path input = fs::absolute(args.prof_group);
  absl::StatusOr<ev::KernelTiming> t = ev::ReadQuickTiming(input, args.op_name, launch);
  if (!t.ok()) return t.status();
  ev::Evidence e = ev::QuickEvidence({*std::move(t)});
  e.prof_group = input;
  e.input.kind = "prof_run";
  return e;
}

absl::StatusOr<ev::Evidence> Build(const SummarizeArgs& args) {
  ev::LaunchSelector launch = *ev::ParseLaunchSelector(args.launch);  // validated
  if (args.quick) return QuickFromRun(args, launch);
  ev::BuildOptions options;
  options.op_name = args.op_name;
  options.soc = args.soc;
  options.device_id = args.device;
  options.launch = launch;
  if (!args.tile_dag.empty()) {
    absl::StatusOr<ev::TileDagAttestation> a =
        ev::ReadTileDagAttestation(args.tile_dag, args.op_name);
    if (!a.ok()) return a.status();
    options.tile_dag = *std::move(a);
  }
  return ev::BuildEvidence(fs::absolute(args.prof_group), options);  // validated: not empty
}

// Every launch of one kernel, one line each.
int PrintLaunches(const fs::path& input, const std::string& op_name, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<std::vector<ev::LaunchInfo>> l = ev::ListLaunches(input, op_name);
  if (!l.ok()) return Fail(err, l.status());
  out << "index\tstream_id\ttask_id\tstart_us\tduration_us\twhere\n";
  for (const ev::LaunchInfo& x : *l) {
    char dur[48];
    std::snprintf(dur, sizeof(dur), "%.3f", x.duration_us);
    out << x.index << "\t" << (x.stream_id ? std::to_string(*x.stream_id) : "N/A") << "\t"
        << (x.task_id ? std::to_string(*x.task_id) : "N/A") << "\t"
        << (x.start_ns ? ev::FormatNsAsMicros(*x.start_ns) : "N/A") << "\t" << dur << "\t"
        << x.where << "\n";
  }
  return kOk;
}

}  // namespace

int RunSummarize(const SummarizeArgs& args, std::ostream& out, std::ostream& err) {
  if (int code = ValidateSummarize(args, err); code != kOk) return code;
  absl::StatusOr<ev::Evidence> evidence = Build(args);
  if (!evidence.ok()) return Fail(err, evidence.status());
  absl::StatusOr<fs::path> round = ev::ReserveRound(fs::absolute(args.ops_dir), args.round_name);
  if (!round.ok()) return Fail(err, round.status());
  ev::Lang lang = args.lang == "zh" ? ev::Lang::kZh : ev::Lang::kEn;
  absl::StatusOr<int> copied = ev::WriteRound(*evidence, *round, lang);
  if (!copied.ok()) return Fail(err, copied.status());
  err << "[INFO] Archived " << *copied << " CSV files to: " << round->string() << "\n";
  err << "[INFO] Summary written to: " << (*round / "summary.txt").string() << "\n";
  if (args.format == "json") {
    out << ev::ToJson(*evidence);
  } else if (args.format == "md") {
    out << ev::RenderMarkdown(*evidence);
  } else {
    out << ev::RenderSummary(*evidence, {lang, *round}) << "\n";
  }
  return evidence->errors.empty() ? kOk : kEvidenceError;
}

int RunListOpNames(const fs::path& prof_group, std::ostream& out, std::ostream& err,
                   const std::string& launches_of) {
  if (absl::StatusOr<fs::path> a = Absolute(prof_group, "prof_group"); !a.ok()) {
    return Usage(err, std::string(a.status().message()));
  }
  std::error_code ec;
  if (!fs::is_directory(prof_group, ec)) {
    return Fail(err, absl::NotFoundError("'" + prof_group.string() + "' is not a directory."));
  }
  if (!launches_of.empty()) return PrintLaunches(fs::absolute(prof_group), launches_of, out, err);
  absl::StatusOr<ev::Discovery> d = ev::DiscoverCandidates(fs::absolute(prof_group));
  if (!d.ok()) return Fail(err, d.status());
  err << "[INFO] candidates from " << d->source << "\n";
  // What the layout detector found and how names and types were resolved
  // (e.g. PyPTO's two names of one kernel, and which one each mode reads).
  for (const std::string& note : d->notes) err << "[INFO] " << note << "\n";
  const std::vector<ev::OpCandidate>* candidates = &d->candidates;
  out << ev::FormatCandidatesTsv(*candidates);
  return kOk;
}

void AddOfflineCommands(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SummarizeArgs>();
  CLI::App* summarize =
      app.add_subcommand("summarize",
                         "Offline: evidence of one kernel from a PROF_GROUP, archived under "
                         "<ops_dir>/docs/perf/round_NNN");
  summarize
      ->add_option("prof_group", args->prof_group,
                   "PROF_GROUP, one PROF_* run (or its --output), OPPROF_* or *_ascend_pt dir")
      ->required();
  summarize->add_option("ops_dir", args->ops_dir, "operator directory")->required();
  summarize->add_option("--op-name", args->op_name,
                        "exact op_summary Op Name (required unless --quick)");
  summarize->add_option("--launch", args->launch,
                        "which launches of the target: unique (default), all, N, -N, "
                        "task:STREAM/TASK");
  summarize->add_flag("--quick", args->quick,
                      "quick mode: task_time (api_statistic fallback) of one msprof run");
  summarize->add_option("--round-name", args->round_name, "round_NNN (must not exist)");
  summarize->add_option("--format", args->format, "text|json|md")
      ->check(CLI::IsMember({"text", "json", "md"}));
  summarize->add_option("--lang", args->lang, "en|zh")->check(CLI::IsMember({"en", "zh"}));
  summarize->add_option("--soc", args->soc, "SoC for the DVFS check, e.g. Ascend910B2");
  summarize->add_option("--device", args->device, "device of the sample db when several");
  summarize->add_option("--tile-dag-attestation", args->tile_dag,
                        "Tile-DAG attestation JSON: the pipeline evidence becomes its status "
                        "(proven / not_applicable_with_dag), recorded with the file's SHA-256");
  summarize->callback(
      [args, &exit_code] { exit_code = RunSummarize(*args, std::cout, std::cerr); });

  auto group = std::make_shared<fs::path>();
  CLI::App* list = app.add_subcommand(
      "list-op-names",
      "Offline: TSV of (count, task type, total us, exact name, launches, incidental) for "
      "discovery");
  list->add_option("prof_group", *group, "any input summarize reads")->required();
  auto launches_of = std::make_shared<std::string>();
  list->add_option("--launches-of", *launches_of,
                   "print every launch of this exact op name (index, stream, task, exact start, "
                   "duration) instead of the candidate table");
  list->callback([group, launches_of, &exit_code] {
    exit_code = RunListOpNames(*group, std::cout, std::cerr, *launches_of);
  });
  AddTimelineCommands(app, exit_code);  // summarize-timeline
}

}  // namespace npuperf::client
