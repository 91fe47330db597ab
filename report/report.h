// The HTML report pages of npuperf (docs/reports.md): self-contained
// documents (inline SVG charts drawn by svg.h, an inline stylesheet, no
// script, no network at view time) rendered from the API's messages. Every
// string of the messages is tenant input and is escaped (html.h Escape).
// The caller fetches the messages (client/report_commands.cc); this library
// does no I/O. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/device_service.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::report {

// A round: kernel time (samples and their range), bound and routing label,
// pipe ratios per core type against the 80 % / 70 % rules, per-core balance
// with the slowest and fastest cores and the two-cluster hint, the Memory,
// L2 and conflict tables coloured by the findings table
// (evidence/findings.h), DVFS, the findings, fingerprint, errors, warnings.
std::string RenderRoundPage(const v1::Round& round);

// A timeline_evidence document (evidence/timeline.h TimelineToJson): the
// monitored lanes over the target window with the events coloured by pipe
// class and the same-lane compute+movement overlap marked, the attribution
// and pipeline status and the limitations.
std::string RenderTimelinePage(const std::string& timeline_json);

// A collection: one row per job (operator x case) with its state, kernel
// time, bound and a sparkline of that case's history. `history` holds
// rounds of the collection's operators (any order, any collection; rounds
// without a matching job are ignored); each case's line is its rounds in
// id order (the newest 60), this collection's round marked.
std::string RenderCollectionPage(const v1::Collection& collection,
                                 const std::vector<v1::Round>& history);

// A comparison of two rounds, two collections or a regressions listing.
struct ComparisonPage {
  std::string title;    // e.g. "npuperf compare c-1 c-2"
  std::string summary;  // the summary line with denominators
  std::vector<v1::RoundComparison> comparisons;
  v1::ComparisonCounts counts;
  std::vector<std::string> unmatched;  // "operator/case" on one side only
  double geomean_ratio = 0;            // 0: none
  // Two rounds compared: their evidence.json documents (v1::Evidence::
  // evidence_json), whose measured rooflines the page draws on one chart.
  std::string baseline_evidence_json, candidate_evidence_json;
};
// The verdict table coloured by verdict, a forest plot of the duration
// ratio intervals, the bound-route, per-core and DVFS changes, the finding
// changes and the notable metric deltas.
std::string RenderComparisonPage(const ComparisonPage& page);

// An operator's history: the rounds of one operator (all cases, or one).
struct HistoryPage {
  std::string operator_name;
  std::vector<v1::Round> rounds;  // any order; grouped by case, id order inside
  // The pinned baseline's rounds (one per case at most), e.g. of a pinned
  // collection; empty: no baseline line.
  std::vector<v1::Round> baseline;
  std::string baseline_name;  // e.g. "baseline round 12" or "baseline collection c-3"
  // Verdicts of rounds against the baseline (or against their predecessor),
  // keyed by candidate_round_id; a round without one is drawn unmarked.
  std::vector<v1::RoundComparison> verdicts;
};
// Per case: kernel time over rounds with the baseline line, verdict
// markers, and a table of rounds with their labels.
std::string RenderHistoryPage(const HistoryPage& page);

// An implementation comparison (CompareImplementations, docs/reports.md
// "Release report"): the operator table (scenarios, the candidate/base
// ratio in the core and Task Duration scopes, the two labelled means), a
// bar chart of those ratios per operator in both scopes, every case with its
// two scopes, and the cases and operators not compared with their reasons.
std::string RenderImplementationPage(const std::string& title,
                                     const v1::CompareImplementationsResponse& r);
// The release report: operators and pass rate per model group with the
// operators that did not pass, then each implementation comparison as above.
std::string RenderReleasePage(const std::string& title, const v1::ReleaseReport& r);
// "COMPARED", "SHAPE_MISMATCH", ... (the enum name without IMPLEMENTATION_CASE_).
std::string ImplementationStatusText(v1::ImplementationCaseStatus s);

// "IMPROVED", "REGRESSED", ... (the enum name without VERDICT_).
std::string VerdictText(v1::Verdict v);

// ---- In the browser (the server's /ui pages, server/ui/) ----

// The team's start page: its newest collections and rounds, each linked
// to its /ui page, and a form that opens /ui/compare.
std::string RenderIndexPage(const std::string& team, const std::vector<v1::Collection>& collections,
                            const std::vector<v1::Round>& rounds);
// The device quarantines (current and released, newest first) and the
// newest canaries, as DeviceService lists them (hosts only when the viewer
// may see them).
std::string RenderDevicesPage(const std::vector<v1::DeviceQuarantine>& quarantines,
                              const std::vector<v1::Canary>& canaries);
// The team's bisections (newest first), each linked to its page.
std::string RenderBisectionsPage(const std::string& team, const std::vector<v1::Bisection>& list);
// One bisection: state, ends, culprits with their explanation (the
// standard rounds linked, the notable metric deltas), revisions and runs.
std::string RenderBisectionPage(const v1::Bisection& b);
// The login form (POST /ui/login: token, next); error is shown when set.
// next is the local /ui path to return to (the caller checked it).
std::string RenderLoginPage(const std::string& next, const std::string& error);
// `page` with a navigation bar (the links, then a logout button) before its
// heading. hrefs are local paths the caller built (escaped here).
std::string WithNav(std::string page,
                    const std::vector<std::pair<std::string, std::string>>& links);
// <a href="href">text</a>, both escaped.
std::string Link(std::string_view href, std::string_view text);
// Percent-encodes every byte but [A-Za-z0-9-._~]: for query values in links.
std::string UrlComponent(std::string_view text);

}  // namespace npuperf::report
