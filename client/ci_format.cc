#include "client/ci_format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/format.h"

namespace npuperf::client {
namespace {

// GitHub refuses comments over 65,536 characters; stop adding rows before.
constexpr size_t kMaxCommentBytes = 60'000;

// The outcome class of a verdict, in the order the Markdown lists them.
enum class Outcome { kRegressed, kErrored, kNotComparable, kInsufficient, kImproved, kStable };

Outcome OutcomeOf(v1::Verdict v) {
  switch (v) {
    case v1::VERDICT_REGRESSED: return Outcome::kRegressed;
    case v1::VERDICT_NOT_COMPARABLE: return Outcome::kNotComparable;
    case v1::VERDICT_INSUFFICIENT: return Outcome::kInsufficient;
    case v1::VERDICT_IMPROVED: return Outcome::kImproved;
    case v1::VERDICT_STABLE: return Outcome::kStable;
    default: return Outcome::kErrored;  // ERRORED, and UNSPECIFIED from a newer server
  }
}

int NoVerdict(const v1::ComparisonCounts& n) {
  return n.insufficient() + n.not_comparable() + n.errored();
}

// "baseline 12.500 us -> candidate 13.500 us, ratio 1.080 [1.050, 1.110],
// p=0.001 (5 vs 5 samples), rounds 41 -> 42", then bound, balance, flags
// and fingerprint differences on their own lines.
std::string Numbers(const v1::RoundComparison& c) {
  const auto& d = c.duration();
  std::string s = absl::StrFormat(
      "baseline %.3f us -> candidate %.3f us, ratio %s, p=%.3g (%d vs %d samples), rounds %d -> "
      "%d",
      d.baseline_us(), d.candidate_us(), RatioText(d), d.p_value(), d.baseline_samples_us_size(),
      d.candidate_samples_us_size(), c.baseline_round_id(), c.candidate_round_id());
  if (c.bound_changed()) {
    absl::StrAppend(&s, "\nbound ", c.baseline_bound(), " -> ", c.candidate_bound());
  }
  if (c.balance_changed()) {
    absl::StrAppend(&s, "\nper-core ", c.baseline_balance(), " -> ", c.candidate_balance());
  }
  if (c.flags_size() > 0) absl::StrAppend(&s, "\nflags ", absl::StrJoin(c.flags(), ", "));
  for (const auto& f : c.fingerprint_differences()) {
    absl::StrAppend(&s, "\nfingerprint ", f.field(), ": ", f.baseline(), " -> ", f.candidate(),
                    f.blocking() ? " (blocking)" : " (informative)");
  }
  return s;
}

std::string Attr(const std::string& name, const std::string& value) {
  return absl::StrCat(" ", name, "=\"", XmlEscape(value), "\"");
}

struct SuiteCounts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

// One <testcase>; `body` is its child element (or empty for a pass).
std::string Testcase(const std::string& classname, const std::string& name, const std::string& body,
                     const std::string& out) {
  std::string s = absl::StrCat("    <testcase", Attr("classname", classname), Attr("name", name),
                               " time=\"0\">\n");
  if (!body.empty()) absl::StrAppend(&s, "      ", body, "\n");
  if (!out.empty()) {
    absl::StrAppend(&s, "      <system-out>", XmlEscape(out), "</system-out>\n");
  }
  absl::StrAppend(&s, "    </testcase>\n");
  return s;
}

std::string CaseTestcase(const v1::RoundComparison& c, const std::string& triaged, SuiteCounts& n) {
  const std::string classname = "npuperf." + c.operator_name();
  const std::string label = CaseLabel(c);
  const std::string verdict = VerdictName(c.verdict());
  ++n.tests;
  if (!triaged.empty() && OutcomeOf(c.verdict()) == Outcome::kRegressed) {
    ++n.skipped;  // seen and triaged before: not a new failure
    return Testcase(
        classname, label,
        absl::StrCat("<skipped", Attr("message", verdict + ", " + triaged + ": " + c.rule()), "/>"),
        Numbers(c));
  }
  switch (OutcomeOf(c.verdict())) {
    case Outcome::kRegressed:
      ++n.failures;
      return Testcase(classname, label,
                      absl::StrCat("<failure", Attr("type", verdict), Attr("message", c.rule()),
                                   ">", XmlEscape(Numbers(c)), "</failure>"),
                      "");
    case Outcome::kErrored:
    case Outcome::kNotComparable:
      ++n.errors;
      return Testcase(classname, label,
                      absl::StrCat("<error", Attr("type", verdict), Attr("message", c.rule()), ">",
                                   XmlEscape(Numbers(c)), "</error>"),
                      "");
    case Outcome::kInsufficient:
      ++n.skipped;
      return Testcase(classname, label,
                      absl::StrCat("<skipped", Attr("message", verdict + ": " + c.rule()), "/>"),
                      Numbers(c));
    default:
      return Testcase(classname, label, "",
                      absl::StrCat(verdict, ": ", c.rule(), "\n", Numbers(c)));
  }
}

// regressions: the verdicts that come as counts only.
std::string CountTestcases(const v1::ComparisonCounts& counts, SuiteCounts& n) {
  std::string s;
  if (const int none = NoVerdict(counts); none > 0) {
    ++n.tests;
    ++n.errors;
    const std::string why = absl::StrFormat(
        "%d cases reached no verdict: %d insufficient, %d not comparable, %d errored", none,
        counts.insufficient(), counts.not_comparable(), counts.errored());
    absl::StrAppend(
        &s, Testcase("npuperf.regressions", "no verdict",
                     absl::StrCat("<error type=\"NO_VERDICT\"", Attr("message", why), "/>"), ""));
  }
  if (const int passed = counts.improved() + counts.stable(); passed > 0) {
    ++n.tests;
    absl::StrAppend(&s, Testcase("npuperf.regressions", "comparable cases", "",
                                 absl::StrFormat("%d improved, %d stable", counts.improved(),
                                                 counts.stable())));
  }
  return s;
}

std::string Timestamp(Clock::SystemTime now) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S", absl::FromChrono(now), absl::UTCTimeZone());
}

// A Markdown table cell: one line, pipes escaped, no HTML.
std::string Cell(const std::string& text) {
  std::string s;
  for (char ch : text) {
    switch (ch) {
      case '|': s += "\\|"; break;
      case '<': s += "&lt;"; break;
      case '&': s += "&amp;"; break;
      case '\n': s += "; "; break;
      default: s += ch;
    }
  }
  return s;
}

constexpr char kTableHead[] =
    "| case | verdict | baseline µs | candidate µs | ratio [CI] | p | rule / flags |\n"
    "|---|---|---:|---:|---|---:|---|\n";

std::string Row(const v1::RoundComparison& c) {
  const auto& d = c.duration();
  std::string rule = c.rule();
  if (c.flags_size() > 0) absl::StrAppend(&rule, " {", absl::StrJoin(c.flags(), ", "), "}");
  const std::string verdict = VerdictName(c.verdict());
  const bool loud = OutcomeOf(c.verdict()) != Outcome::kStable;
  return absl::StrFormat("| %s | %s | %.3f | %.3f | %s | %.2g | %s |\n", Cell(CaseLabel(c)),
                         loud ? "**" + verdict + "**" : verdict, d.baseline_us(), d.candidate_us(),
                         RatioText(d), d.p_value(), Cell(rule));
}

std::string Headline(const VerdictReport& r) {
  const auto& n = r.counts;
  const int triaged = static_cast<int>(
      std::count_if(r.triaged.begin(), r.triaged.end(), [](const auto& t) { return !t.empty(); }));
  if (n.regressed() > triaged) return absl::StrCat(n.regressed() - triaged, " regressed");
  if (triaged > 0) return absl::StrCat("no new regression (", triaged, " triaged before)");
  if (n.comparable() == 0) return "no comparable case";
  if (NoVerdict(n) > 0) {
    return absl::StrCat("no verdict for ", NoVerdict(n), " of ", n.matched(), " cases");
  }
  return "nothing regressed";
}

// Appends the rows of `rows` as a table while the comment stays under the
// limit; notes how many were left out.
void AppendTable(const std::vector<const v1::RoundComparison*>& rows, std::string& md) {
  md += kTableHead;
  size_t shown = 0;
  for (const auto* c : rows) {
    const std::string row = Row(*c);
    if (md.size() + row.size() > kMaxCommentBytes) break;
    md += row;
    ++shown;
  }
  if (shown < rows.size()) {
    absl::StrAppend(&md, "\n… ", rows.size() - shown, " more rows: see `--format json`\n");
  }
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string s;
  s.reserve(text.size());
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': s += "&amp;"; break;
      case '<': s += "&lt;"; break;
      case '>': s += "&gt;"; break;
      case '"': s += "&quot;"; break;
      case '\'': s += "&apos;"; break;
      default:
        if (u >= 0x20 || ch == '\t' || ch == '\n' || ch == '\r') s += ch;
    }
  }
  return s;
}

std::string JunitXml(const VerdictReport& r, Clock::SystemTime now) {
  SuiteCounts n;
  std::string cases;
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    cases += CaseTestcase(r.comparisons[i], i < r.triaged.size() ? r.triaged[i] : "", n);
  }
  for (const auto& u : r.unmatched) {
    ++n.tests;
    ++n.skipped;
    const size_t slash = u.find('/');
    cases += Testcase("npuperf." + u.substr(0, slash), u,
                      "<skipped message=\"unmatched: present on one side only\"/>", "");
  }
  if (r.regressed_rows_only) cases += CountTestcases(r.counts, n);
  // <testsuites> has no skipped attribute in the common schema; <testsuite> has.
  const std::string totals =
      absl::StrFormat(" tests=\"%d\" failures=\"%d\" errors=\"%d\"", n.tests, n.failures, n.errors);
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&xml, "<testsuites", Attr("name", "npuperf"), totals, " time=\"0\">\n");
  absl::StrAppend(&xml, "  <testsuite", Attr("name", r.title), totals,
                  absl::StrFormat(" skipped=\"%d\" time=\"0\"", n.skipped),
                  Attr("timestamp", Timestamp(now)), ">\n");
  absl::StrAppend(&xml, "    <properties>\n");
  auto property = [&](const std::string& name, const std::string& value) {
    absl::StrAppend(&xml, "      <property", Attr("name", name), Attr("value", value), "/>\n");
  };
  property("summary", r.summary);
  property("exit_code", absl::StrCat(r.exit_code));
  if (r.geomean_ratio > 0) property("geomean_ratio", absl::StrFormat("%.6g", r.geomean_ratio));
  absl::StrAppend(&xml, "    </properties>\n", cases, "  </testsuite>\n</testsuites>\n");
  return xml;
}

std::string MarkdownComment(const VerdictReport& r) {
  std::vector<const v1::RoundComparison*> shown, folded;
  std::vector<std::string> triaged;  // "`op/case`: ACKNOWLEDGED (regression 12)"
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    const v1::RoundComparison& c = r.comparisons[i];
    if (i < r.triaged.size() && !r.triaged[i].empty()) {
      triaged.push_back(absl::StrCat("`", CaseLabel(c), "`: ", r.triaged[i]));
      continue;
    }
    (OutcomeOf(c.verdict()) == Outcome::kStable ? folded : shown).push_back(&c);
  }
  std::stable_sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) {
    return OutcomeOf(a->verdict()) < OutcomeOf(b->verdict());
  });
  std::string md = absl::StrCat("<!-- npuperf-verdict -->\n### ", r.title, ": ", Headline(r),
                                "\n\n", Cell(r.summary), ".");
  if (r.geomean_ratio > 0) {
    absl::StrAppend(&md, absl::StrFormat(" Geomean duration ratio **%.3f** over %d comparable "
                                         "cases (below 1 is faster).",
                                         r.geomean_ratio, r.counts.comparable()));
  }
  absl::StrAppend(&md, " Exit code ", r.exit_code, ".\n\n");
  if (shown.empty()) {
    md += r.regressed_rows_only
              ? (triaged.empty() ? "No case regressed.\n" : "No new regression.\n")
              : "No case changed.\n";
  } else {
    AppendTable(shown, md);
  }
  if (!triaged.empty()) {
    absl::StrAppend(&md, "\nTriaged before (not new): ", absl::StrJoin(triaged, ", "), ".\n");
  }
  if (folded.empty() && r.unmatched.empty()) return md;
  std::vector<std::string> parts;
  if (!folded.empty()) parts.push_back(absl::StrCat(folded.size(), " stable"));
  if (!r.unmatched.empty()) parts.push_back(absl::StrCat(r.unmatched.size(), " unmatched"));
  absl::StrAppend(&md, "\n<details><summary>", absl::StrJoin(parts, ", "), "</summary>\n\n");
  if (!folded.empty()) AppendTable(folded, md);
  if (!r.unmatched.empty()) {
    absl::StrAppend(&md, folded.empty() ? "" : "\n", "Present on one side only: `",
                    absl::StrJoin(r.unmatched, "`, `"), "`\n");
  }
  md += "\n</details>\n";
  return md;
}

}  // namespace npuperf::client
