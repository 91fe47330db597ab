#include "client/impl_commands.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/ci_format.h"
#include "client/format.h"
#include "client/impl_format.h"
#include "common/status_util.h"
#include "nlohmann/json.hpp"
#include "report/report.h"

namespace npuperf::client {
namespace {

// Versions of the JSON envelopes (docs/api.md).
constexpr char kCompareImplSchema[] = "npuperf.compare_impl.v1";
constexpr char kReleaseSchema[] = "npuperf.release_report.v1";

// The text of a small file: NOT_FOUND when absent, INVALID_ARGUMENT naming
// the flag when unreadable or over kMaxImplFileBytes.
absl::StatusOr<std::string> ReadSmallFile(const std::string& flag, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat(flag, " ", path, ": no such file"));
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxImplFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": ", ec ? ec.message() : absl::StrCat(size, " bytes"),
                     ec ? "" : absl::StrCat("; at most ", kMaxImplFileBytes)));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof())
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": unreadable"));
  return text.str();
}

// The request of compare-impl (and of release-report with a baseline).
absl::StatusOr<v1::CompareImplementationsRequest> ImplRequest(const std::string& base,
                                                              const std::string& candidate,
                                                              const std::vector<std::string>& pairs,
                                                              const std::string& pair_map,
                                                              const VerdictArgs& v) {
  v1::CompareImplementationsRequest req;
  req.set_base_collection_id(base);
  req.set_candidate_collection_id(candidate);
  for (const std::string& p : pairs) {
    auto pair = ParsePairFlag(p);
    if (!pair.ok()) return pair.status();
    *req.add_pairs() = *pair;
  }
  if (!pair_map.empty()) {
    auto text = ReadSmallFile("--pair-map", pair_map);
    if (!text.ok()) return text.status();
    req.set_pair_map(*text);
  }
  req.mutable_options()->set_alpha(v.alpha);
  req.mutable_options()->set_duration_threshold_pct(v.threshold_pct);
  req.mutable_options()->set_ratio_threshold_pp(v.ratio_threshold_pp);
  return req;
}

absl::StatusOr<v1::CompareImplementationsResponse> CallCompare(
    Session& s, const v1::CompareImplementationsRequest& req) {
  v1::CompareImplementationsResponse resp;
  const absl::Status st = s.Call(&Queries::CompareImplementations, req, &resp);
  if (!st.ok()) return st;
  return resp;
}

void PrintEnvelope(const char* schema, const google::protobuf::Message& result, int exit_code,
                   const std::string& summary, std::ostream& out) {
  nlohmann::json j;
  j["schema"] = schema;
  j["exit_code"] = exit_code;
  j["summary"] = summary;
  j["result"] = nlohmann::json::parse(ToJson(result));
  out << j.dump(2) << "\n";
}

VerdictFormat FormatOf(const VerdictArgs& v, const ClientConfig& c) {
  if (v.format != VerdictFormat::kDefault) return v.format;
  return c.format == OutputFormat::kJson ? VerdictFormat::kJson : VerdictFormat::kText;
}

// Settings for errors: JSON exactly when the result would be.
ClientConfig ErrorConfig(const Session& s, bool json) {
  ClientConfig c = s.config();
  c.format = json ? OutputFormat::kJson : OutputFormat::kText;
  return c;
}

// Every page of the collection's rounds (ListRounds, 1000 a page).
absl::StatusOr<std::vector<v1::Round>> CollectionRounds(Session& s, const std::string& id) {
  std::vector<v1::Round> out;
  std::string token;
  do {
    v1::ListRoundsRequest req;
    req.set_collection_id(id);
    req.set_page_size(1000);
    req.set_page_token(token);
    v1::ListRoundsResponse page;
    const absl::Status st = s.Call(&Queries::ListRounds, req, &page);
    if (!st.ok()) return st;
    for (auto& r : *page.mutable_rounds()) out.push_back(std::move(r));
    token = page.next_page_token();
  } while (!token.empty());
  return out;
}

// The release report of args (the implementation tables included).
absl::StatusOr<v1::ReleaseReport> FetchRelease(Session& s, const ReleaseReportArgs& args) {
  std::vector<std::pair<std::string, std::string>> groups;
  if (!args.groups.empty()) {
    auto text = ReadSmallFile("--groups", args.groups);
    if (!text.ok()) return text.status();
    auto parsed = ParseGroups(*text);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--groups ", args.groups, ": ", parsed.status().message()));
    }
    groups = *std::move(parsed);
  }
  std::vector<v1::Collection> collections;
  std::vector<v1::Round> rounds;
  for (const std::string& id : args.collections) {
    auto c = FetchCollection(s, id);
    if (!c.ok()) return c.status();
    collections.push_back(*std::move(c));
    auto r = CollectionRounds(s, id);
    if (!r.ok()) return r.status();
    for (auto& one : *r) rounds.push_back(std::move(one));
  }
  v1::ReleaseReport report = BuildReleaseReport(collections, rounds, groups);
  if (args.baseline.empty()) return report;
  for (const std::string& id : args.collections) {
    auto req = ImplRequest(args.baseline, id, args.pairs, args.pair_map, VerdictArgs());
    if (!req.ok()) return req.status();
    auto resp = CallCompare(s, *req);
    if (!resp.ok()) return resp.status();
    *report.add_implementations() = *std::move(resp);
  }
  return report;
}

}  // namespace

int RunCompareImpl(Session& s, const CompareImplArgs& args, std::ostream& out, std::ostream& err) {
  const VerdictFormat format = FormatOf(args.verdict, s.config());
  const ClientConfig errors = ErrorConfig(s, format == VerdictFormat::kJson);
  auto req = ImplRequest(args.base, args.candidate, args.pairs, args.pair_map, args.verdict);
  if (!req.ok()) {
    if (absl::IsNotFound(req.status())) return ReportError(req.status(), errors, out, err);
    return ReportUsage("compare-impl", std::string(req.status().message()), errors, out, err);
  }
  auto resp = CallCompare(s, *req);
  if (!resp.ok()) return ReportError(resp.status(), errors, out, err);
  const std::string title = absl::StrCat("npuperf compare-impl ", args.base, " ", args.candidate);
  const int code = ExitCodeOf(resp->counts(), args.verdict.fail_on);
  switch (format) {
    case VerdictFormat::kJson:
      PrintEnvelope(kCompareImplSchema, *resp, code, CountsSummary(resp->counts()), out);
      break;
    case VerdictFormat::kMarkdown: out << ImplementationMarkdown(title, *resp); break;
    case VerdictFormat::kHtml: out << report::RenderImplementationPage(title, *resp); break;
    case VerdictFormat::kJunit: {
      VerdictReport v = ImplementationVerdicts(title, *resp);
      v.exit_code = code;
      out << JunitXml(v, s.clock().SystemNow());
      break;
    }
    default: out << ImplementationText(*resp);
  }
  return code;
}

int RunReleaseReport(Session& s, const ReleaseReportArgs& args, std::ostream& out,
                     std::ostream& err) {
  const bool json =
      args.format == ReleaseFormat::kJson ||
      (args.format == ReleaseFormat::kDefault && s.config().format == OutputFormat::kJson);
  const ClientConfig errors = ErrorConfig(s, json);
  if (args.baseline.empty() && (!args.pairs.empty() || !args.pair_map.empty())) {
    return ReportUsage("release-report", "--pair and --pair-map need --baseline", errors, out, err);
  }
  auto report = FetchRelease(s, args);
  if (!report.ok()) {
    if (absl::IsInvalidArgument(report.status()) &&
        absl::StartsWith(report.status().message(), "--")) {
      return ReportUsage("release-report", std::string(report.status().message()), errors, out,
                         err);
    }
    return ReportError(report.status(), errors, out, err);
  }
  const std::string title = absl::StrCat("Release report: ", absl::StrJoin(args.collections, ", "));
  if (json) {
    PrintEnvelope(kReleaseSchema, *report, kExitOk,
                  absl::StrCat(report->total().passed(), " of ", report->total().operators(),
                               " operators passed"),
                  out);
  } else if (args.format == ReleaseFormat::kHtml) {
    out << report::RenderReleasePage(title, *report);
  } else {
    out << ReleaseMarkdown(title, *report);
  }
  return kExitOk;
}

namespace {

void AddCompareImpl(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<CompareImplArgs>();
  auto* cmd = app.add_subcommand(
      "compare-impl",
      "compare two implementations of the same operators, paired by operator and case (exit 0 "
      "ok, 3 slower, 4 no verdict)");
  cmd->add_option("base", a->base, "base collection id (e.g. the Ascend C operators)")->required();
  cmd->add_option("candidate", a->candidate, "candidate collection id (e.g. the PyPTO operators)")
      ->required();
  cmd->add_option("--pair", a->pairs, "CAND_OP=BASE_OP (repeatable)");
  cmd->add_option("--pair-map", a->pair_map, "file of CAND_OP=BASE_OP lines ('#' comments)");
  cmd->add_option("--alpha", a->verdict.alpha, "significance level (default 0.01)");
  cmd->add_option("--threshold", a->verdict.threshold_pct,
                  "practical threshold for durations, % (default 2)");
  static const std::map<std::string, VerdictFormat> kFormats = {
      {"text", VerdictFormat::kText},
      {"json", VerdictFormat::kJson},
      {"junit", VerdictFormat::kJunit},
      {"markdown", VerdictFormat::kMarkdown},
      {"html", VerdictFormat::kHtml}};
  cmd->add_option_function<std::string>(
         "--format", [a](const std::string& f) { a->verdict.format = kFormats.at(f); },
         "text, json, junit, markdown or html (a page with the ratio chart)")
      ->check(CLI::IsMember({"text", "json", "junit", "markdown", "html"}));
  static const std::map<std::string, FailOn> kFailOn = {{"no-verdict", FailOn::kNoVerdict},
                                                        {"regressed", FailOn::kRegressed},
                                                        {"never", FailOn::kNever}};
  cmd->add_option_function<std::string>(
         "--fail-on", [a](const std::string& f) { a->verdict.fail_on = kFailOn.at(f); },
         "no-verdict (3 slower, 4 no verdict; default), regressed (only 3) or never (0)")
      ->check(CLI::IsMember({"no-verdict", "regressed", "never"}));
  cmd->callback([&chosen, a] {
    chosen = [a](Session& s, std::ostream& out, std::ostream& err) {
      return RunCompareImpl(s, *a, out, err);
    };
  });
}

void AddReleaseReport(CLI::App& app, ServerCommand& chosen) {
  auto a = std::make_shared<ReleaseReportArgs>();
  auto* cmd = app.add_subcommand(
      "release-report",
      "operators and pass rate per model group, and the implementation table against a baseline");
  cmd->add_option("collection", a->collections, "collection ids")->required();
  cmd->add_option("--groups", a->groups, "file of OPERATOR=GROUP lines (model groups)");
  cmd->add_option("--baseline", a->baseline, "base collection of the implementation table");
  cmd->add_option("--pair", a->pairs, "CAND_OP=BASE_OP (repeatable; with --baseline)");
  cmd->add_option("--pair-map", a->pair_map, "file of CAND_OP=BASE_OP lines (with --baseline)");
  static const std::map<std::string, ReleaseFormat> kFormats = {
      {"markdown", ReleaseFormat::kMarkdown},
      {"html", ReleaseFormat::kHtml},
      {"json", ReleaseFormat::kJson}};
  cmd->add_option_function<std::string>(
         "--format", [a](const std::string& f) { a->format = kFormats.at(f); },
         "markdown (default), html (a page with the ratio chart) or json")
      ->check(CLI::IsMember({"markdown", "html", "json"}));
  cmd->callback([&chosen, a] {
    chosen = [a](Session& s, std::ostream& out, std::ostream& err) {
      return RunReleaseReport(s, *a, out, err);
    };
  });
}

}  // namespace

void AddImplementationCommands(CLI::App& app, ServerCommand& chosen) {
  AddCompareImpl(app, chosen);
  AddReleaseReport(app, chosen);
}

}  // namespace npuperf::client
