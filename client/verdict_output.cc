#include "client/verdict_output.h"

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/format.h"
#include "client/noise_commands.h"
#include "client/report_commands.h"

namespace npuperf::client {
namespace {

// Verdicts the practical threshold took part in (the others never reached it).
bool HasThreshold(v1::Verdict v) {
  return v == v1::VERDICT_IMPROVED || v == v1::VERDICT_REGRESSED || v == v1::VERDICT_STABLE;
}

// The JSON envelope: schema, exit code and summary around the proto3 JSON
// of the response.
void PrintEnvelope(const char* schema, const std::string& kind,
                   const google::protobuf::Message& result, int exit_code,
                   const std::string& summary, const nlohmann::json& extra, std::ostream& out) {
  nlohmann::json j = extra.is_object() ? extra : nlohmann::json::object();
  j["schema"] = schema;
  j["kind"] = kind;
  j["exit_code"] = exit_code;
  j["summary"] = summary;
  j["result"] = nlohmann::json::parse(ToJson(result));
  out << j.dump(2) << "\n";
}

}  // namespace

v1::CompareOptions OptionsOf(const VerdictArgs& v) {
  v1::CompareOptions o;
  o.set_alpha(v.alpha);
  o.set_duration_threshold_pct(v.threshold_pct);
  o.set_ratio_threshold_pp(v.ratio_threshold_pp);
  return o;
}

void PrintComparisonTable(const google::protobuf::RepeatedPtrField<v1::RoundComparison>& rows,
                          std::ostream& out) {
  out << absl::StrFormat("%-34s %-15s %11s %11s  %-24s %-9s %s\n", "operator/case", "verdict",
                         "base_us", "cand_us", "ratio [CI]", "p", "rule / flags");
  for (const auto& c : rows) {
    const auto& d = c.duration();
    std::string tail = c.rule();
    if (const std::string t = ThresholdText(d); !t.empty() && HasThreshold(c.verdict())) {
      absl::StrAppend(&tail, "  [", t, "]");
    }
    if (c.flags_size() > 0) absl::StrAppend(&tail, "  {", absl::StrJoin(c.flags(), ", "), "}");
    out << absl::StrFormat(
        "%-34s %-15s %11.3f %11.3f  %-24s %-9.2g %s\n",
        c.case_id().empty() ? c.operator_name() : c.operator_name() + "/" + c.case_id(),
        VerdictName(c.verdict()), d.baseline_us(), d.candidate_us(), RatioText(d), d.p_value(),
        tail);
  }
  PrintSuspectHint(rows, out);
}

void PrintSuspectHint(const google::protobuf::RepeatedPtrField<v1::RoundComparison>& rows,
                      std::ostream& out) {
  int shown = 0;
  int suspect = 0;
  for (const auto& c : rows) {
    const bool flagged = absl::c_any_of(
        c.flags(), [](const std::string& f) { return absl::StartsWith(f, "device_suspect:"); });
    if (!flagged) continue;
    if (suspect++ == 0) {
      out << "device_suspect: these verdicts rest on rounds a device produced after its last "
             "passing canary, before its canaries quarantined it; confirm them on another "
             "device:\n";
    }
    if (shown++ < 5) {
      out << "  npuperf confirm " << c.baseline_round_id() << " " << c.candidate_round_id()
          << "   # " << c.operator_name() << (c.case_id().empty() ? "" : "/") << c.case_id()
          << "\n";
    }
  }
  if (suspect > shown) out << "  ... and " << suspect - shown << " more\n";
}

v1::ComparisonCounts CountsOfOne(v1::Verdict v) {
  v1::ComparisonCounts n;
  n.set_matched(1);
  switch (v) {
    case v1::VERDICT_IMPROVED:
      n.set_improved(1);
      n.set_comparable(1);
      break;
    case v1::VERDICT_REGRESSED:
      n.set_regressed(1);
      n.set_comparable(1);
      break;
    case v1::VERDICT_STABLE:
      n.set_stable(1);
      n.set_comparable(1);
      break;
    case v1::VERDICT_INSUFFICIENT: n.set_insufficient(1); break;
    case v1::VERDICT_NOT_COMPARABLE: n.set_not_comparable(1); break;
    default: n.set_errored(1); break;
  }
  return n;
}

VerdictFormat FormatOf(const VerdictArgs& v, const ClientConfig& c) {
  if (v.format != VerdictFormat::kDefault) return v.format;
  return c.format == OutputFormat::kJson ? VerdictFormat::kJson : VerdictFormat::kText;
}

ClientConfig ErrorConfig(const Session& s, const VerdictArgs& v) {
  ClientConfig c = s.config();
  c.format = FormatOf(v, c) == VerdictFormat::kJson ? OutputFormat::kJson : OutputFormat::kText;
  return c;
}

int Emit(Session& s, const VerdictArgs& args, Verdicts v, std::ostream& out) {
  v.report.exit_code = ExitCodeOf(v.exit_counts.value_or(v.report.counts), args.fail_on);
  switch (FormatOf(args, s.config())) {
    case VerdictFormat::kJson:
      PrintEnvelope(v.schema, v.kind, *v.result, v.report.exit_code, v.report.summary, v.extra,
                    out);
      break;
    case VerdictFormat::kJunit: out << JunitXml(v.report, s.clock().SystemNow()); break;
    case VerdictFormat::kMarkdown: out << MarkdownComment(v.report); break;
    case VerdictFormat::kHtml: out << ComparisonHtml(v.report); break;
    default: v.text(out);
  }
  return v.report.exit_code;
}

}  // namespace npuperf::client
