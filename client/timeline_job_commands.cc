#include "client/timeline_job_commands.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/compare_commands.h"
#include "client/format.h"
#include "common/input_rules.h"

namespace npuperf::client {
namespace {

// How often --wait reads the timeline collections.
constexpr std::chrono::seconds kTimelinePoll{2};

bool Terminal(v1::CollectionState s) {
  return s == v1::COLLECTION_STATE_SUCCEEDED || s == v1::COLLECTION_STATE_FAILED ||
         s == v1::COLLECTION_STATE_CANCELLED;
}

// The timeline round of one run's collection, when it succeeded.
absl::StatusOr<v1::Round> TimelineRound(Session& s, const v1::TimelineRun& run) {
  v1::ListRoundsRequest req;
  req.set_collection_id(run.collection_id());
  req.set_page_size(1);
  v1::ListRoundsResponse resp;
  if (absl::Status st = s.Call(&Queries::ListRounds, req, &resp); !st.ok()) return st;
  if (resp.rounds().empty()) {
    return absl::NotFoundError(absl::StrCat("collection ", run.collection_id(), " has no round"));
  }
  return resp.rounds(0);
}

void PrintRun(const v1::TimelineRun& run, std::ostream& out) {
  out << "timeline of round " << run.round_id() << " " << run.operator_name()
      << (run.case_id().empty() ? "" : "/" + run.case_id()) << ": collection "
      << run.collection_id() << (run.created() ? " queued" : " (already queued)") << "\n";
}

void PrintTimeline(const v1::Round& r, std::ostream& out) {
  const v1::TimelineSummary& t = r.evidence().timeline();
  out << absl::StrFormat(
      "  round %d: %s, %d lanes, %d events in a %s us window, same-lane overlap %s us "
      "(%d event pairs); pipeline evidence %s\n",
      r.id(), t.attribution_status(), t.monitored_lanes(), t.events_in_window(),
      absl::StrFormat("%.3f", static_cast<double>(t.target_duration_ns()) / 1000.0),
      absl::StrFormat("%.3f", static_cast<double>(t.overlap_ns()) / 1000.0), t.raw_event_pairs(),
      t.pipeline_evidence_status());
  out << "  round " << t.anchor_round_id()
      << " may be closed: " << (t.completion_eligible() ? "yes" : "no") << " (roofline "
      << t.roofline_terminal_status() << ", pipeline overlap " << t.pipeline_overlap_status()
      << (t.tile_dag_attestation_sha256().empty()
              ? ""
              : ", attestation sha256 " + t.tile_dag_attestation_sha256())
      << ")\n";
  for (const std::string& b : t.completion_blockers()) out << "    blocked: " << b << "\n";
}

}  // namespace

int RunTimelineJob(Session& s, const TimelineJobArgs& a, std::ostream& out, std::ostream& err) {
  v1::SubmitTimelineRequest req;
  int64_t id = 0;
  if (a.targets.size() == 1 && !IsRoundId(a.targets[0], &id)) {
    req.set_collection_id(a.targets[0]);
    for (const std::string& c : a.case_ids) req.add_case_ids(c);
  } else {
    for (const std::string& t : a.targets) {
      if (!IsRoundId(t, &id)) {
        return ReportUsage("timeline", "give round ids (digits) or one collection id", s.config(),
                           out, err);
      }
      req.add_round_ids(id);
    }
    if (!a.case_ids.empty()) {
      return ReportUsage("timeline", "--case goes with a collection id (a round has one case)",
                         s.config(), out, err);
    }
  }
  if (!a.tile_dag_attestation.empty()) {
    // At most the server's 64 KiB, read up to one byte past it (never all of /dev/zero).
    std::ifstream in(a.tile_dag_attestation, std::ios::binary);
    std::string text(kMaxTileDagAttestationBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad() || (!in && !in.eof())) {
      return ReportUsage("timeline", "cannot read --tile-dag-attestation " + a.tile_dag_attestation,
                         s.config(), out, err);
    }
    text.resize(static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxTileDagAttestationBytes) {
      return ReportUsage("timeline", "--tile-dag-attestation is over 64 KiB", s.config(), out, err);
    }
    req.set_tile_dag_attestation(std::move(text));
  }
  v1::SubmitTimelineResponse resp;
  if (absl::Status st = s.Call(&Collections::SubmitTimeline, req, &resp); !st.ok()) {
    return ReportError(st, s.config(), out, err);
  }
  const bool json = s.config().format == OutputFormat::kJson;
  if (!a.wait) {
    if (json) {
      out << ToJson(resp) << "\n";
    } else {
      for (const v1::TimelineRun& run : resp.runs()) PrintRun(run, out);
    }
    return kExitOk;
  }
  // --wait: follow every collection to its end.
  const Clock::MonotonicTime deadline = s.clock().MonotonicNow() + a.timeout;
  std::vector<v1::Collection> ends(resp.runs_size());
  for (;;) {
    bool running = false;
    for (int i = 0; i < resp.runs_size(); ++i) {
      if (Terminal(ends[i].state())) continue;
      absl::StatusOr<v1::Collection> c = FetchCollection(s, resp.runs(i).collection_id());
      if (!c.ok()) return ReportError(c.status(), s.config(), out, err);
      ends[i] = *std::move(c);
      running = running || !Terminal(ends[i].state());
    }
    if (!running) break;
    if (s.clock().MonotonicNow() >= deadline) {
      err << "npuperf timeline: still running past --timeout\n";
      if (json) out << ToJson(resp) << "\n";
      return kExitNoVerdict;
    }
    s.clock().SleepFor(kTimelinePoll);
  }
  int code = kExitOk;
  v1::ListRoundsResponse found;  // the timeline rounds, for --format json
  for (int i = 0; i < resp.runs_size(); ++i) {
    const v1::TimelineRun& run = resp.runs(i);
    if (!json) PrintRun(run, out);
    if (ends[i].state() != v1::COLLECTION_STATE_SUCCEEDED) {
      code = kExitError;
      const std::string why = ends[i].jobs().empty() ? "" : ends[i].jobs(0).reason();
      err << "npuperf timeline: round " << run.round_id() << ": collection " << run.collection_id()
          << " " << v1::CollectionState_Name(ends[i].state()) << (why.empty() ? "" : ": " + why)
          << "\n";
      continue;
    }
    absl::StatusOr<v1::Round> r = TimelineRound(s, run);
    if (!r.ok()) return ReportError(r.status(), s.config(), out, err);
    if (!json) PrintTimeline(*r, out);
    *found.add_rounds() = *std::move(r);
  }
  if (json) out << ToJson(found) << "\n";
  return code;
}

}  // namespace npuperf::client
