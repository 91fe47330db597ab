// The soak's invariant checker. It reads the npuperf schema with libpqxx
// directly: this is a test tool, not the product, so SQL here is fine
// (the product's SQL stays in server/backends/postgres).
#include "tests/chaos/checker.h"

#include <fstream>
#include <map>
#include <sstream>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/integration/process_harness.h"

namespace npuperf::chaos {
namespace fs = std::filesystem;
namespace {

struct JobRow {
  std::string collection;
  int state = 0;
  int attempt = 0;
  int64_t round_id = 0;
};

struct RoundRow {
  int64_t id = 0;
  int attempt = 0;
};

struct CollectionRow {
  int state = 0;
  bool cancel_requested = false;
  v1::JobCounts counts;  // from its jobs rows
};

struct Db {
  std::map<int64_t, JobRow> jobs;
  std::map<int64_t, std::vector<RoundRow>> rounds;  // by job
  std::map<std::string, CollectionRow> collections;
  std::vector<std::string> queue_rows;  // collection_queue leftovers
};

bool IsTerminal(int state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

void CountJob(int state, v1::JobCounts* c) {
  c->set_total(c->total() + 1);
  switch (state) {
    case v1::JOB_STATE_QUEUED: c->set_queued(c->queued() + 1); break;
    case v1::JOB_STATE_LEASED: c->set_leased(c->leased() + 1); break;
    case v1::JOB_STATE_RUNNING: c->set_running(c->running() + 1); break;
    case v1::JOB_STATE_SUCCEEDED: c->set_succeeded(c->succeeded() + 1); break;
    case v1::JOB_STATE_FAILED: c->set_failed(c->failed() + 1); break;
    case v1::JOB_STATE_CANCELLED: c->set_cancelled(c->cancelled() + 1); break;
    default: break;
  }
}

// The collection state its jobs imply (server/core/job_state.cc's rule,
// restated so that a drift of either shows).
int ExpectedCollectionState(const CollectionRow& c) {
  const auto& n = c.counts;
  if (n.succeeded() + n.failed() + n.cancelled() != n.total()) return -1;
  if (c.cancel_requested && n.cancelled() > 0) return v1::COLLECTION_STATE_CANCELLED;
  if (n.failed() > 0) return v1::COLLECTION_STATE_FAILED;
  if (n.cancelled() > 0) return v1::COLLECTION_STATE_CANCELLED;
  return v1::COLLECTION_STATE_SUCCEEDED;
}

absl::StatusOr<Db> ReadDb(const std::string& url) {
  try {
    pqxx::connection conn(url);
    pqxx::work tx(conn);
    Db db;
    for (const auto& r : tx.exec("SELECT id, state, cancel_reason <> '' FROM collections")) {
      db.collections[r[0].as<std::string>()] = {r[1].as<int>(), r[2].as<bool>(), {}};
    }
    for (const auto& r : tx.exec("SELECT id, collection_id, state, attempt, COALESCE(round_id, "
                                 "0) FROM jobs ORDER BY id")) {
      JobRow j{r[1].as<std::string>(), r[2].as<int>(), r[3].as<int>(), r[4].as<int64_t>()};
      CountJob(j.state, &db.collections[j.collection].counts);
      db.jobs[r[0].as<int64_t>()] = j;
    }
    for (const auto& r : tx.exec("SELECT id, job_id, attempt FROM rounds ORDER BY id")) {
      db.rounds[r[1].as<int64_t>()].push_back({r[0].as<int64_t>(), r[2].as<int>()});
    }
    for (const auto& r : tx.exec("SELECT collection_id, queued, live FROM collection_queue")) {
      db.queue_rows.push_back(absl::StrCat(r[0].as<std::string>(), " queued=", r[1].as<int>(),
                                           " live=", r[2].as<int>()));
    }
    return db;
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("read the database: ", e.what()));
  }
}

// Collects at most kMaxFacts facts per invariant (and how many more).
class Findings {
 public:
  void Add(const std::string& invariant, std::string fact) {
    auto& f = facts_[invariant];
    if (f.size() < 20) f.push_back(std::move(fact));
    ++counts_[invariant];
  }
  std::vector<Violation> Take() {
    std::vector<Violation> out;
    for (auto& [inv, list] : facts_) {
      std::string text = absl::StrJoin(list, "\n    ");
      if (counts_[inv] > static_cast<int>(list.size())) {
        absl::StrAppend(&text, "\n    ... and ", counts_[inv] - list.size(), " more");
      }
      out.push_back({absl::StrCat(inv, " (", counts_[inv], ")"), text});
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>> facts_;
  std::map<std::string, int> counts_;
};

void CheckJobs(const Db& db, Findings& f) {
  for (const auto& [id, j] : db.jobs) {
    if (!IsTerminal(j.state)) {
      f.Add("terminal", absl::StrCat("job ", id, " of ", j.collection, " is in state ", j.state,
                                     " (attempt ", j.attempt, ")"));
    }
    auto it = db.rounds.find(id);
    const size_t n = it == db.rounds.end() ? 0 : it->second.size();
    if (j.state == v1::JOB_STATE_SUCCEEDED) {
      if (n != 1) {
        f.Add("one-round", absl::StrCat("succeeded job ", id, " has ", n, " rounds"));
      } else if (it->second[0].id != j.round_id || it->second[0].attempt != j.attempt) {
        f.Add("one-round", absl::StrCat("job ", id, " names round ", j.round_id, " of attempt ",
                                        j.attempt, "; its round is ", it->second[0].id,
                                        " of attempt ", it->second[0].attempt));
      }
    } else if (n != 0) {
      f.Add("one-round", absl::StrCat("job ", id, " in state ", j.state, " has ", n, " rounds"));
    }
  }
}

void CheckCollections(const Db& db, const CheckInput& in, Findings& f) {
  for (const auto& [id, c] : db.collections) {
    const int want = ExpectedCollectionState(c);
    if (want >= 0 && want != c.state) {
      f.Add("counts",
            absl::StrCat("collection ", id, " is in state ", c.state, "; its jobs make it ", want,
                         " (", c.counts.ShortDebugString(), ")"));
    }
  }
  for (const auto& row : db.queue_rows) f.Add("counts", "collection_queue row left: " + row);
  for (const auto& s : in.submitted) {
    auto it = db.collections.find(s.id);
    if (it == db.collections.end()) {
      f.Add("counts", "submitted collection " + s.id + " is not in the database");
      continue;
    }
    const v1::JobCounts& want = it->second.counts;
    if (want.total() != s.jobs) {
      f.Add("counts", absl::StrCat(s.id, ": the submission answered ", s.jobs,
                                   " jobs, the database holds ", want.total()));
    }
    auto got = in.get(s);
    if (!got.ok()) {
      f.Add("counts", absl::StrCat(s.id, ": GetCollection failed: ", got.status().ToString()));
    } else if (got->counts().SerializeAsString() != want.SerializeAsString() ||
               got->state() != it->second.state) {
      f.Add("counts", absl::StrCat(s.id, ": the API says ", got->counts().ShortDebugString(),
                                   " state ", got->state(), "; its jobs are ",
                                   want.ShortDebugString(), " state ", it->second.state));
    }
  }
}

void CheckFiles(const CheckInput& in, Findings& f) {
  for (const auto& log : in.conflict_logs) {
    std::ifstream file(log);
    for (std::string line; std::getline(file, line);) {
      if (!line.empty()) f.Add("no-double-book", log.string() + ": " + line);
    }
  }
  for (const auto& spool : in.spools) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(spool, ec)) {
      f.Add("spools-empty", "left in the spool: " + e.path().string());
    }
  }
}

void CheckLeases(const LeaseHistory& h, Findings& f) {
  for (const auto& p : h.problems) {
    f.Add("no-stale-result", absl::StrCat("job ", p.job_id, ": ", p.what));
  }
  const int64_t now =
      testing::WallClock().SystemNow().time_since_epoch() / std::chrono::milliseconds(1);
  for (const auto& [a, b] : OverlappingLeases(h.leases, now)) {
    f.Add("no-double-book",
          absl::StrCat(a.host, " device ", a.device, ": job ", a.job_id, " attempt ", a.attempt,
                       " leased ", a.start_ms, "..", a.end_ms, " (", a.end_kind, ") overlaps job ",
                       b.job_id, " attempt ", b.attempt, " leased ", b.start_ms, "..", b.end_ms,
                       " (", b.end_kind, ")"));
  }
}

JobFigures Figures(const Db& db, const LeaseHistory& h) {
  JobFigures out;
  for (const auto& [id, j] : db.jobs) {
    ++out.jobs;
    out.succeeded += j.state == v1::JOB_STATE_SUCCEEDED;
    out.failed += j.state == v1::JOB_STATE_FAILED;
    out.cancelled += j.state == v1::JOB_STATE_CANCELLED;
    out.retried += j.attempt > 1;
  }
  out.attempts = static_cast<int64_t>(h.leases.size());
  out.expired = h.expired;
  return out;
}

}  // namespace

absl::StatusOr<CheckResult> Check(const CheckInput& in) {
  auto db = ReadDb(in.db_url);
  if (!db.ok()) return db.status();
  auto history = ReadLeaseHistory(in.db_url);
  if (!history.ok()) return history.status();
  Findings f;
  CheckJobs(*db, f);
  CheckCollections(*db, in, f);
  CheckFiles(in, f);
  CheckLeases(*history, f);
  CheckResult out;
  out.violations = f.Take();
  out.figures = Figures(*db, *history);
  out.history = *std::move(history);
  return out;
}

}  // namespace npuperf::chaos
