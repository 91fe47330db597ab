// `npuperf watch` (and submit's wait): the progress of a collection from its
// WatchCollection stream, reconnecting when the server goes away.
#include <algorithm>
#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "client/commands.h"
#include "client/format.h"
#include "client/terminal_text.h"
#include "common/backoff.h"
#include "common/status_util.h"

namespace npuperf::client {
namespace {

constexpr std::chrono::milliseconds kFirstRetry(500);
constexpr std::chrono::milliseconds kLongestRetry(10'000);

// Folds one watch event into the collection known so far: a snapshot (any
// event carrying jobs) replaces it; a delta brings the collection's own
// fields and the jobs that changed (docs/api.md, "Watches").
void ApplyWatchEvent(const v1::WatchCollectionResponse& e, v1::Collection* c) {
  if (e.full_snapshot() || e.collection().jobs_size() > 0) {
    *c = e.collection();
    return;
  }
  auto jobs = std::move(*c->mutable_jobs());
  *c = e.collection();
  *c->mutable_jobs() = std::move(jobs);
  for (const auto& job : e.changed_jobs()) {
    auto* all = c->mutable_jobs();
    auto it = std::find_if(all->begin(), all->end(),
                           [&job](const v1::Job& j) { return j.id() == job.id(); });
    if (it != all->end()) {
      *it = job;
    } else {
      *all->Add() = job;
    }
  }
}

// What a watch has shown so far, kept across reconnections.
struct Progress {
  v1::Collection last;
  std::string previous;  // the last line shown
  bool drawn = false;    // a terminal line is on screen, not yet ended
};

// One WatchCollection stream until it ends; its status, and whether it
// delivered any event.
absl::Status WatchOnce(Session& s, const std::string& id, Progress& p, std::ostream& err,
                       bool* delivered) {
  grpc::ClientContext ctx;
  s.Prepare(&ctx, std::chrono::hours(24 * 7));
  v1::WatchCollectionRequest req;
  req.set_collection_id(id);
  auto reader = s.collections().WatchCollection(&ctx, req);
  const bool tty = s.config().progress == ProgressStyle::kTerminal;
  v1::WatchCollectionResponse event;
  while (reader->Read(&event)) {
    *delivered = true;
    ApplyWatchEvent(event, &p.last);
    const std::string line =
        ProgressLine(p.last, event.has_changed_job() ? &event.changed_job() : nullptr);
    if (line == p.previous) continue;
    p.previous = line;
    if (tty) {
      const std::string bar_line = ProgressBar(p.last.counts(), 24) + " " + line;
      err << "\r\033[K" << FitToWidth(bar_line, s.config().terminal_columns - 1) << std::flush;
      p.drawn = true;
    } else {
      err << line << "\n";
    }
  }
  return FromGrpcStatus(reader->Finish());
}

}  // namespace

absl::StatusOr<v1::Collection> FollowCollection(Session& s, const std::string& id,
                                                std::ostream& err,
                                                std::chrono::seconds reconnect_for) {
  Progress p;
  Backoff backoff(kFirstRetry, kLongestRetry, std::hash<std::string>()(id));
  std::optional<Clock::MonotonicTime> give_up;  // set at the first failure since an event
  absl::Status st;
  while (true) {
    bool delivered = false;
    st = WatchOnce(s, id, p, err, &delivered);
    // CANCELLED too: this process never cancels a watch (Ctrl-C ends it by
    // the signal), so a CANCELLED stream is the server's: a shutdown cancels
    // the calls still open, including one that reconnected while it drained.
    if (st.code() != absl::StatusCode::kUnavailable && st.code() != absl::StatusCode::kCancelled) {
      break;
    }
    const Clock::MonotonicTime now = s.clock().MonotonicNow();
    if (delivered || !give_up) {
      backoff.Reset();
      give_up = now + reconnect_for;
    }
    const std::chrono::milliseconds delay = backoff.Next();
    if (now + delay > *give_up) break;
    if (p.drawn) err << "\n";
    p.drawn = false;
    err << absl::StrFormat("npuperf: watch %s: %s: %s; reconnecting in %.1f s\n", id,
                           absl::StatusCodeToString(st.code()), st.message(),
                           delay.count() / 1000.0);
    s.clock().SleepFor(delay);
  }
  if (p.drawn) err << "\n";
  if (!st.ok()) return st;
  return p.last;
}

int RunWatch(Session& s, const std::string& id, std::ostream& out, std::ostream& err,
             std::chrono::seconds reconnect_for) {
  absl::StatusOr<v1::Collection> last = FollowCollection(s, id, err, reconnect_for);
  if (!last.ok()) return ReportError(last.status(), s.config(), out, err);
  return FinishCollection(*last, out, s.config());
}

}  // namespace npuperf::client
