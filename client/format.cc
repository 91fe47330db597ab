#include "client/format.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_util.h"
#include "evidence/parallel.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"

namespace npuperf::client {
namespace {

std::string Strip(const std::string& name, const std::string& prefix) {
  return absl::AsciiStrToLower(name.substr(name.rfind(prefix, 0) == 0 ? prefix.size() : 0));
}

std::string JobLabel(const v1::Job& j) {
  return j.case_id().empty() ? j.operator_name()
                             : absl::StrCat(j.operator_name(), "/", j.case_id());
}

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return google::protobuf::util::TimeUtil::ToString(t).substr(0, 19) + "Z";
}

}  // namespace

std::string StateName(v1::JobState s) { return Strip(v1::JobState_Name(s), "JOB_STATE_"); }
std::string StateName(v1::CollectionState s) {
  return Strip(v1::CollectionState_Name(s), "COLLECTION_STATE_");
}
std::string PhaseName(v1::JobPhase p) { return Strip(v1::JobPhase_Name(p), "JOB_PHASE_"); }

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opt;
  opt.add_whitespace = true;
  opt.always_print_primitive_fields = true;
  opt.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opt);
  return out;
}

namespace {

// How the printer writes the top-level array `field` of object_json: its
// indentation (one unit: the first field's line tells it) and its opening,
// "\n<indent>\"field\": [". Neither the opening nor "\n<indent>]" can occur
// inside a string value (its newline would be escaped) nor at another depth
// (the indentation differs). nullopt for a message printed on one line.
struct TopLevelArray {
  std::string indent;
  std::string opening;
};
std::optional<TopLevelArray> FindTopLevelArray(std::string_view object_json,
                                               std::string_view field) {
  const size_t first = object_json.find('\n');
  if (first == std::string_view::npos) return std::nullopt;
  const size_t text = object_json.find_first_not_of(' ', first + 1);
  if (text == std::string_view::npos) return std::nullopt;
  const size_t unit = text - (first + 1);
  if (unit == 0 || unit > 8) return std::nullopt;
  TopLevelArray a{std::string(unit, ' '), ""};
  a.opening = absl::StrCat("\n", a.indent, "\"", std::string(field), "\": [");
  return a;
}

// Jobs printed per batch: protobuf's printer resolves every type again for
// each message it prints, which for one job at a time was most of the cost.
constexpr int kJobsPerBatch = 1000;

}  // namespace

std::optional<std::string_view> JsonArrayBody(std::string_view object_json,
                                              std::string_view field) {
  const std::optional<TopLevelArray> a = FindTopLevelArray(object_json, field);
  if (!a) return std::nullopt;
  const size_t at = object_json.find(a->opening + "\n");
  if (at == std::string_view::npos) return std::nullopt;
  const size_t body = at + a->opening.size() + 1;
  const size_t close = object_json.find(absl::StrCat("\n", a->indent, "]"), body);
  if (close == std::string_view::npos) return std::nullopt;
  return object_json.substr(body, close - body);
}

std::optional<std::string> SpliceJsonArray(std::string_view object_json, std::string_view field,
                                           const std::vector<std::string_view>& bodies) {
  const std::optional<TopLevelArray> a = FindTopLevelArray(object_json, field);
  if (!a) return std::nullopt;
  const std::string empty = a->opening + "]";
  const size_t at = object_json.find(empty);
  if (at == std::string_view::npos) return std::nullopt;
  size_t size = object_json.size() + a->indent.size() + 3;
  for (std::string_view b : bodies) size += b.size() + 2;
  std::string out;
  out.reserve(size);
  out.append(object_json.substr(0, at));
  absl::StrAppend(&out, a->opening, "\n");
  for (size_t i = 0; i < bodies.size(); ++i) {
    if (i > 0) out.append(",\n");
    out.append(bodies[i]);
  }
  absl::StrAppend(&out, "\n", a->indent, "]");
  out.append(object_json.substr(at + empty.size()));
  return out;
}

std::string ToJson(const v1::Collection& c) {
  const google::protobuf::Message& whole = c;
  if (c.jobs().empty()) return ToJson(whole);
  v1::Collection head;
  head.CopyFrom(c);
  head.clear_jobs();
  // Each batch is printed as a collection holding only those jobs: its jobs
  // array is at the same depth as the whole message's, so its body is the
  // whole message's text for those jobs.
  const size_t count = (static_cast<size_t>(c.jobs_size()) + kJobsPerBatch - 1) / kJobsPerBatch;
  std::vector<std::string> batches(count);
  // On a few cores (evidence's default for its files, 1 to 4): one after the
  // other, the batches of a 100,000-job collection were a second and a half
  // of one core (issue 36).
  evidence::ForEachIndex(count, evidence::DefaultFileThreads(), [&](size_t b) {
    v1::Collection batch;
    const int from = static_cast<int>(b) * kJobsPerBatch;
    const int to = std::min(c.jobs_size(), from + kJobsPerBatch);
    batch.mutable_jobs()->Reserve(to - from);
    for (int i = from; i < to; ++i) *batch.add_jobs() = c.jobs(i);
    batches[b] = ToJson(static_cast<const google::protobuf::Message&>(batch));
  });
  std::vector<std::string_view> bodies;
  for (const std::string& b : batches) {
    std::optional<std::string_view> body = JsonArrayBody(b, "jobs");
    if (!body) return ToJson(whole);
    bodies.push_back(*body);
  }
  std::optional<std::string> out = SpliceJsonArray(ToJson(head), "jobs", bodies);
  return out ? *std::move(out) : ToJson(whole);
}

std::string ErrorJson(const absl::Status& s, int exit_code) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : FieldViolationsOf(s)) {
    violations.push_back({{"field", v.field}, {"description", v.description}});
  }
  nlohmann::json j;
  j["schema"] = "npuperf.error.v1";
  j["exit_code"] = exit_code;
  j["error"] = {{"code", absl::StatusCodeToString(s.code())},
                {"code_number", static_cast<int>(s.code())},
                {"message", std::string(s.message())},
                {"field_violations", violations}};
  // Messages may quote paths that are not UTF-8: replace such bytes, never throw.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

void PrintCollection(const v1::Collection& c, std::ostream& out) {
  const auto& n = c.counts();
  out << "collection " << c.id() << "  " << StateName(c.state()) << "  " << n.succeeded() << "/"
      << n.total() << " succeeded, " << n.failed() << " failed, " << n.cancelled()
      << " cancelled  (created " << Time(c.created_at()) << ")\n";
  if (!c.waiting_reason().empty()) out << "  waiting: " << c.waiting_reason() << "\n";
  for (const auto& j : c.jobs()) {
    out << absl::StrFormat("  job %-5d %-40s %-10s ", j.id(), JobLabel(j), StateName(j.state()));
    if (j.state() == v1::JOB_STATE_SUCCEEDED) {
      out << absl::StrFormat("%s  %.3f us", j.op_name(), j.kernel_time_us());
      if (!j.bound_label().empty()) out << "  " << j.bound_label();
      out << "  round " << j.round_id();
    } else if (j.state() == v1::JOB_STATE_RUNNING || j.state() == v1::JOB_STATE_LEASED) {
      out << "device " << j.placement().host() << ":" << j.placement().device_id() << " "
          << PhaseName(j.progress().phase());
    } else if (!j.reason().empty()) {
      out << j.reason();
    }
    out << "\n";
  }
}

void PrintCollectionList(const v1::ListCollectionsResponse& list, std::ostream& out) {
  for (const auto& c : list.collections()) {
    out << absl::StrFormat("%-16s %-10s %3d/%-3d %s\n", c.id(), StateName(c.state()),
                           c.counts().succeeded(), c.counts().total(), Time(c.created_at()));
  }
  if (!list.next_page_token().empty())
    out << "(more: --page-token " << list.next_page_token() << ")\n";
}

void PrintRound(const v1::Round& r, std::ostream& out) {
  const auto& e = r.evidence();
  out << "round " << r.id() << "  " << r.operator_name()
      << (r.case_id().empty() ? "" : "/" + r.case_id()) << "  collection " << r.collection_id()
      << "  " << Time(r.created_at()) << "\n";
  out << absl::StrFormat("  kernel %s (%s)  %.3f us", e.op_name(), e.task_type(),
                         e.duration().aggregate_us());
  out << "  samples [";
  for (int i = 0; i < e.duration().samples_us_size(); ++i) {
    out << (i ? ", " : "") << absl::StrFormat("%.3f", e.duration().samples_us(i));
  }
  out << "]\n";
  if (!e.bound().label().empty()) {
    out << "  bound " << e.bound().label() << " (" << e.bound().routing_label() << ")\n";
  }
  if (!e.per_core().verdict().empty()) {
    out << absl::StrFormat("  per-core %s spread %.1f%%\n", e.per_core().verdict(),
                           e.per_core().spread_pct());
  }
  out << "  fingerprint soc " << e.fingerprint().soc() << " device " << e.fingerprint().device_id()
      << " host " << e.fingerprint().host() << " mode " << e.fingerprint().mode() << "\n";
}

namespace {

// "PASS (3.2%)", or "-" without per-core data.
std::string BalanceText(const v1::Evidence& e) {
  return e.per_core().verdict().empty()
             ? "-"
             : absl::StrFormat("%s (%.1f%%)", e.per_core().verdict(), e.per_core().spread_pct());
}

}  // namespace

void PrintRounds(const v1::ListRoundsResponse& rounds, std::ostream& out) {
  out << absl::StrFormat("%-6s %-30s %-16s %-16s %12s  %-12s %-22s %s\n", "round", "operator/case",
                         "collection", "soc", "kernel_us", "bound", "per-core (spread)", "created");
  for (const auto& r : rounds.rounds()) {
    const auto& e = r.evidence();
    const std::string balance = BalanceText(e);
    out << absl::StrFormat("%-6d %-30s %-16s %-16s %12.3f  %-12s %-22s %s\n", r.id(),
                           r.operator_name() + (r.case_id().empty() ? "" : "/" + r.case_id()),
                           r.collection_id(), e.fingerprint().soc(), e.duration().aggregate_us(),
                           e.bound().label().empty() ? "-" : e.bound().label(), balance,
                           Time(r.created_at()));
  }
  for (const auto& p : rounds.series()) {
    out << absl::StrFormat("  series round %d %s %g\n", p.round_id(), Time(p.at()), p.value());
  }
}

void PrintSeriesChanges(const v1::ListRoundsResponse& rounds, std::ostream& out) {
  if (rounds.changes_size() == 0) {
    out << "no change points in " << rounds.series_size() << " points\n";
    return;
  }
  for (const auto& c : rounds.changes()) {
    out << absl::StrFormat(
        "change %s at round %d (%s): median %g -> %g (%+.1f %%), p=%.3f, %d points before, %d "
        "from it\n",
        c.case_id().empty() ? "-" : c.case_id(), c.round_id(), Time(c.at()), c.before_median(),
        c.after_median(), c.change_pct(), c.p_value(), c.points_before(), c.points_after());
  }
}

void PrintRoundsReport(const std::string& collection_id, const v1::ListRoundsResponse& rounds,
                       bool md, std::ostream& out) {
  const std::vector<std::string> head = {"round", "operator/case", "soc",  "kernel_us",   "samples",
                                         "bound", "per-core",      "dvfs", "golden_ratio"};
  auto row = [&](const std::vector<std::string>& cells) {
    if (md) {
      out << "| " << absl::StrJoin(cells, " | ") << " |\n";
    } else {
      out << absl::StrFormat("%-6s %-34s %-16s %11s %7s %-12s %-16s %-8s %s\n", cells[0], cells[1],
                             cells[2], cells[3], cells[4], cells[5], cells[6], cells[7], cells[8]);
    }
  };
  out << (md ? "## Collection " : "collection ") << collection_id << "\n";
  if (md) out << "\n";
  row(head);
  if (md) out << "|" << absl::StrJoin(std::vector<std::string>(head.size(), "---"), "|") << "|\n";
  for (const auto& r : rounds.rounds()) {
    const auto& e = r.evidence();
    const std::string balance = BalanceText(e);
    const std::string golden =
        e.golden().status() == "joined" ? absl::StrFormat("%.3f", e.golden().ratio()) : "-";
    row({absl::StrCat(r.id()), r.operator_name() + "/" + r.case_id(), e.fingerprint().soc(),
         absl::StrFormat("%.3f", e.duration().aggregate_us()),
         absl::StrCat(e.duration().samples_us_size()),
         e.bound().label().empty() ? "-" : e.bound().label(), balance,
         e.dvfs().status().empty() ? "-" : e.dvfs().status(), golden});
  }
  if (rounds.rounds_size() == 0) out << "no rounds (none succeeded yet, or not your collection)\n";
  if (!rounds.next_page_token().empty()) out << "(first 1000 rounds)\n";
}

void PrintAgents(const v1::ListAgentsResponse& agents, std::ostream& out) {
  for (const auto& a : agents.agents()) {
    out << a.agent_id() << "  " << a.host() << "  " << a.state() << "  v" << a.version()
        << "  last seen " << Time(a.last_seen()) << "\n";
    for (const auto& d : a.devices()) {
      out << "  device " << d.device_id() << "  " << d.soc() << "  " << d.state();
      if (d.job_id() > 0) out << "  job " << d.job_id();
      if (!d.quarantine_reason().empty()) {
        out << "  since " << Time(d.quarantined_since()) << ": " << d.quarantine_reason();
      }
      out << "\n";
    }
  }
}

std::string VerdictName(v1::Verdict v) {
  std::string name = v1::Verdict_Name(v);
  return name.rfind("VERDICT_", 0) == 0 ? name.substr(8) : name;
}

std::string RatioText(const v1::DurationComparison& d) {
  if (!(d.ratio() > 0)) return "-";
  std::string s = absl::StrFormat("%.3f", d.ratio());
  if (d.ratio_ci_low() > 0)
    absl::StrAppend(&s, absl::StrFormat(" [%.3f, %.3f]", d.ratio_ci_low(), d.ratio_ci_high()));
  return s;
}

std::string CountsSummary(const v1::ComparisonCounts& n) {
  return absl::StrFormat(
      "%d regressed, %d improved, %d stable / %d comparable of %d matched (%d insufficient, %d not "
      "comparable, %d errored, %d unmatched)",
      n.regressed(), n.improved(), n.stable(), n.comparable(), n.matched(), n.insufficient(),
      n.not_comparable(), n.errored(), n.unmatched());
}

std::string CaseLabel(const v1::RoundComparison& c) {
  return c.case_id().empty() ? c.operator_name() : c.operator_name() + "/" + c.case_id();
}

std::string ProgressBar(const v1::JobCounts& n, int width) {
  const int done = n.succeeded() + n.failed() + n.cancelled();
  const int filled = n.total() > 0 ? std::min(width, done * width / n.total()) : 0;
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '-'), "]");
}

std::string ProgressLine(const v1::Collection& c, const v1::Job* changed) {
  const auto& n = c.counts();
  std::string line =
      absl::StrFormat("%s %d/%d done (succeeded %d, failed %d, running %d)", StateName(c.state()),
                      n.succeeded() + n.failed() + n.cancelled(), n.total(), n.succeeded(),
                      n.failed(), n.running() + n.leased());
  if (changed != nullptr) {
    absl::StrAppend(&line, "  job ", changed->id(), " ", JobLabel(*changed), " ",
                    StateName(changed->state()));
    const auto& p = changed->progress();
    if (changed->state() == v1::JOB_STATE_RUNNING && p.phase() != v1::JOB_PHASE_UNSPECIFIED) {
      absl::StrAppend(&line, " ", PhaseName(p.phase()));
      if (p.step_count() > 0) absl::StrAppend(&line, " ", p.step(), "/", p.step_count());
      if (!p.detail().empty()) absl::StrAppend(&line, " ", p.detail());
    }
  }
  return line;
}

}  // namespace npuperf::client
