// SqliteStore: regressions and their triage (migration 0013;
// core/triage_rules.h decides). One connection and BEGIN IMMEDIATE make each
// observation batch and each compare-and-set atomic.
#include <optional>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/triage_rules.h"

namespace npuperf::server {
namespace {

#define NPUPERF_SQLITE_REGRESSION_COLUMNS                                                   \
  "id, team, operator_name, case_id, baseline_label, rule, state, confirmed, detected_ms, " \
  "last_seen_ms, first_round_id, last_round_id, seen_rounds, COALESCE(ended_ms, 0)"

RegressionRecord ReadRegression(SQLite::Statement& q) {
  RegressionRecord r;
  r.id = q.getColumn(0).getInt64();
  r.key.team = q.getColumn(1).getString();
  r.key.operator_name = q.getColumn(2).getString();
  r.key.case_id = q.getColumn(3).getString();
  r.key.baseline_label = q.getColumn(4).getString();
  r.key.rule = q.getColumn(5).getString();
  r.state = static_cast<v1::RegressionState>(q.getColumn(6).getInt());
  r.confirmed = q.getColumn(7).getInt() != 0;
  r.detected_ms = q.getColumn(8).getInt64();
  r.last_seen_ms = q.getColumn(9).getInt64();
  r.first_round_id = q.getColumn(10).getInt64();
  r.last_round_id = q.getColumn(11).getInt64();
  r.seen_rounds = q.getColumn(12).getInt();
  r.ended_ms = q.getColumn(13).getInt64();
  return r;
}

std::optional<RegressionRecord> CurrentOf(SQLite::Database& db, const RegressionKey& k) {
  SQLite::Statement q(db, "SELECT " NPUPERF_SQLITE_REGRESSION_COLUMNS
                          " FROM regressions WHERE team = ? AND operator_name = ? AND case_id = ? "
                          "AND baseline_label = ? AND rule = ? AND ended_ms IS NULL");
  q.bind(1, k.team);
  q.bind(2, k.operator_name);
  q.bind(3, k.case_id);
  q.bind(4, k.baseline_label);
  q.bind(5, k.rule);
  if (!q.executeStep()) return std::nullopt;
  return ReadRegression(q);
}

std::optional<RegressionRecord> ById(SQLite::Database& db, const std::string& team, int64_t id) {
  SQLite::Statement q(db, "SELECT " NPUPERF_SQLITE_REGRESSION_COLUMNS
                          " FROM regressions WHERE id = ? AND team = ?");
  q.bind(1, id);
  q.bind(2, team);
  if (!q.executeStep()) return std::nullopt;
  return ReadRegression(q);
}

void AddTransition(SQLite::Database& db, int64_t id, const RegressionTransitionRecord& t) {
  SQLite::Statement ins(db,
                        "INSERT INTO regression_transitions (regression_id, seq, from_state, "
                        "to_state, actor, note, at_ms) VALUES (?, (SELECT COALESCE(MAX(seq), 0) + "
                        "1 FROM regression_transitions WHERE regression_id = ?), ?, ?, ?, ?, ?)");
  ins.bind(1, id);
  ins.bind(2, id);
  ins.bind(3, static_cast<int>(t.from));
  ins.bind(4, static_cast<int>(t.to));
  ins.bind(5, t.actor);
  ins.bind(6, t.note);
  ins.bind(7, t.at_ms);
  ins.exec();
}

// Writes r's mutable columns back.
void Save(SQLite::Database& db, const RegressionRecord& r) {
  SQLite::Statement up(db,
                       "UPDATE regressions SET state = ?, confirmed = ?, last_seen_ms = ?, "
                       "last_round_id = ?, seen_rounds = ?, ended_ms = NULLIF(?, 0) WHERE id = ?");
  up.bind(1, static_cast<int>(r.state));
  up.bind(2, r.confirmed ? 1 : 0);
  up.bind(3, r.last_seen_ms);
  up.bind(4, r.last_round_id);
  up.bind(5, r.seen_rounds);
  up.bind(6, r.ended_ms);
  up.bind(7, r.id);
  up.exec();
}

// Inserts a new regression; its id.
int64_t Insert(SQLite::Database& db, const RegressionRecord& r) {
  SQLite::Statement ins(db,
                        "INSERT INTO regressions (team, operator_name, case_id, baseline_label, "
                        "rule, state, detected_ms, last_seen_ms, first_round_id, last_round_id, "
                        "seen_rounds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  ins.bind(1, r.key.team);
  ins.bind(2, r.key.operator_name);
  ins.bind(3, r.key.case_id);
  ins.bind(4, r.key.baseline_label);
  ins.bind(5, r.key.rule);
  ins.bind(6, static_cast<int>(r.state));
  ins.bind(7, r.detected_ms);
  ins.bind(8, r.last_seen_ms);
  ins.bind(9, r.first_round_id);
  ins.bind(10, r.last_round_id);
  ins.bind(11, r.seen_rounds);
  ins.exec();
  return db.getLastInsertRowid();
}

// One observation (Store::ObserveRegressions): loads the key's current
// regression, saves what core/triage_rules.h's ApplyObservation made of it.
RegressionRecord Observe(SQLite::Database& db, const RegressionObservation& o, int64_t now_ms) {
  std::optional<RegressionRecord> cur = CurrentOf(db, o.key);
  ObservationOutcome out = ApplyObservation(cur ? &*cur : nullptr, o, now_ms);
  if (out.action == ObservationAction::kNothing) return RegressionRecord();
  if (out.action == ObservationAction::kOpen) {
    out.record.id = Insert(db, out.record);
  } else {
    Save(db, out.record);
  }
  if (out.transition) AddTransition(db, out.record.id, *out.transition);
  return out.Current();
}

}  // namespace

absl::StatusOr<std::vector<RegressionRecord>> SqliteStore::ObserveRegressions(
    const std::vector<RegressionObservation>& seen, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<RegressionRecord> out;
    out.reserve(seen.size());
    for (const RegressionObservation& o : seen) out.push_back(Observe(*db_, o, now_ms));
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("observe regressions");
  }
}

absl::StatusOr<RegressionRecord> SqliteStore::TriageRegression(const RegressionTriage& t) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::optional<RegressionRecord> r = ById(*db_, t.team, t.id);
    if (!r) return absl::NotFoundError(absl::StrCat("regression ", t.id, " not found"));
    if (absl::Status s = CheckTriage(*r, t.expected, t.next); !s.ok()) return s;
    const RegressionRecord next = ApplyTriage(*r, t.next, t.now_ms);
    Save(*db_, next);
    AddTransition(*db_, next.id, {r->state, next.state, t.team, t.note, t.now_ms});
    tx.commit();
    return next;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("triage regression ", t.id));
  }
}

absl::StatusOr<RegressionDetail> SqliteStore::GetRegression(const std::string& team, int64_t id) {
  absl::MutexLock lock(&mu_);
  try {
    std::optional<RegressionRecord> r = ById(*db_, team, id);
    if (!r) return absl::NotFoundError(absl::StrCat("regression ", id, " not found"));
    RegressionDetail d;
    d.regression = *r;
    SQLite::Statement q(*db_,
                        "SELECT from_state, to_state, actor, note, at_ms FROM "
                        "regression_transitions WHERE regression_id = ? ORDER BY seq");
    q.bind(1, id);
    while (q.executeStep()) {
      RegressionTransitionRecord t;
      t.from = static_cast<v1::RegressionState>(q.getColumn(0).getInt());
      t.to = static_cast<v1::RegressionState>(q.getColumn(1).getInt());
      t.actor = q.getColumn(2).getString();
      t.note = q.getColumn(3).getString();
      t.at_ms = q.getColumn(4).getInt64();
      d.transitions.push_back(std::move(t));
    }
    return d;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("regression ", id));
  }
}

absl::StatusOr<std::vector<RegressionCount>> SqliteStore::CountRegressions(
    const std::string& team) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(
        *db_,
        "SELECT rule, state, confirmed, COUNT(*) FROM regressions WHERE (? = '' OR "
        "team = ?) GROUP BY rule, state, confirmed ORDER BY rule, state, confirmed");
    q.bind(1, team);
    q.bind(2, team);
    std::vector<RegressionCount> out;
    while (q.executeStep()) {
      RegressionCount c;
      c.rule = q.getColumn(0).getString();
      c.state = static_cast<v1::RegressionState>(q.getColumn(1).getInt());
      c.confirmed = q.getColumn(2).getInt() != 0;
      c.count = q.getColumn(3).getInt64();
      out.push_back(std::move(c));
    }
    return out;
  } catch (...) {
    return CurrentSqliteError("count regressions");
  }
}

}  // namespace npuperf::server
