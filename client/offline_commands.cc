#include "client/offline_commands.h"

#include <iostream>
#include <memory>
#include <system_error>

#include <CLI/CLI.hpp>

#include "evidence/archive.h"
#include "evidence/evidence.h"
#include "evidence/evidence_json.h"
#include "evidence/op_summary.h"
#include "evidence/prof_layout.h"
#include "evidence/summary_text.h"

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

// Usage checks that CLI11 validators do not cover.
int ValidateSummarize(const SummarizeArgs& args, std::ostream& err) {
  if (args.op_name.empty()) return Usage(err, "--op-name must name the exact target kernel");
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

absl::StatusOr<std::vector<fs::path>> DiscoveryCsv(const fs::path& group) {
  fs::path dir = group / "PROF_PipeUtilization";
  absl::StatusOr<fs::path> prof = ev::FindSingleProfDir(dir);
  absl::StatusOr<fs::path> out = prof.ok() ? ev::ProfilerOutputDir(*prof) : prof.status();
  absl::StatusOr<std::vector<fs::path>> parts =
      out.ok() ? ev::FindCsvParts(*out, "op_summary") : out.status();
  if (!parts.ok() || parts->empty()) {
    std::string why = parts.ok() ? "none found" : std::string(parts.status().message());
    return absl::NotFoundError(
        "discovery requires exactly one PipeUtilization op_summary CSV under " + dir.string() +
        " (" + why + ")");
  }
  return parts;
}

}  // namespace

int RunSummarize(const SummarizeArgs& args, std::ostream& out, std::ostream& err) {
  if (int code = ValidateSummarize(args, err); code != kOk) return code;
  ev::BuildOptions options;
  options.op_name = args.op_name;
  options.soc = args.soc;
  options.device_id = args.device;
  absl::StatusOr<ev::Evidence> evidence = ev::BuildEvidence(fs::absolute(args.prof_group), options);
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

int RunListOpNames(const fs::path& prof_group, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (!fs::is_directory(prof_group, ec)) {
    return Fail(err, absl::NotFoundError("'" + prof_group.string() + "' is not a directory."));
  }
  absl::StatusOr<std::vector<fs::path>> parts = DiscoveryCsv(prof_group);
  if (!parts.ok()) return Fail(err, parts.status());
  absl::StatusOr<std::vector<ev::OpCandidate>> candidates = ev::ListCandidates(*parts);
  if (!candidates.ok()) return Fail(err, candidates.status());
  if (candidates->empty()) {
    return Fail(err,
                absl::NotFoundError("PipeUtilization op_summary contains no non-empty Op Name"));
  }
  out << ev::FormatCandidatesTsv(*candidates);
  return kOk;
}

void AddOfflineCommands(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SummarizeArgs>();
  CLI::App* summarize =
      app.add_subcommand("summarize",
                         "Offline: evidence of one kernel from a PROF_GROUP, archived under "
                         "<ops_dir>/docs/perf/round_NNN");
  summarize->add_option("prof_group", args->prof_group, "PROF_GROUP directory")->required();
  summarize->add_option("ops_dir", args->ops_dir, "operator directory")->required();
  summarize->add_option("--op-name", args->op_name, "exact op_summary Op Name")->required();
  summarize->add_option("--round-name", args->round_name, "round_NNN (must not exist)");
  summarize->add_option("--format", args->format, "text|json|md")
      ->check(CLI::IsMember({"text", "json", "md"}));
  summarize->add_option("--lang", args->lang, "en|zh")->check(CLI::IsMember({"en", "zh"}));
  summarize->add_option("--soc", args->soc, "SoC for the DVFS check, e.g. Ascend910B2");
  summarize->add_option("--device", args->device, "device of the sample db when several");
  summarize->callback(
      [args, &exit_code] { exit_code = RunSummarize(*args, std::cout, std::cerr); });

  auto group = std::make_shared<fs::path>();
  CLI::App* list = app.add_subcommand(
      "list-op-names", "Offline: TSV of (count, task type, total us, exact name) for discovery");
  list->add_option("prof_group", *group, "PROF_GROUP directory")->required();
  list->callback([group, &exit_code] { exit_code = RunListOpNames(*group, std::cout, std::cerr); });
}

}  // namespace npuperf::client
