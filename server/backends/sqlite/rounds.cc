// SqliteStore: rounds, their metric series, and baselines pinned per team
// and label.
#include <map>
#include <string>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/backends/sqlite/sqlite_store.h"

namespace npuperf::server {

absl::StatusOr<v1::Round> SqliteStore::GetRound(const std::string& team, int64_t round_id) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        absl::StrCat("SELECT ", kRoundColumns, " FROM rounds r WHERE r.id = ?"));
    q.bind(1, round_id);
    if (!q.executeStep() || (!team.empty() && q.getColumn(4).getString() != team)) {
      return absl::NotFoundError(absl::StrCat("round ", round_id, " not found"));
    }
    v1::Round round = RoundFromRow(q, true);
    SQLite::Statement l(*db_, "SELECT key, value FROM collection_labels WHERE collection_id = ?");
    l.bind(1, round.collection_id());
    while (l.executeStep()) {
      (*round.mutable_labels())[l.getColumn(0).getString()] = l.getColumn(1).getString();
    }
    return round;
  } catch (...) {
    return CurrentSqliteError("get round");
  }
}

absl::StatusOr<RoundPage> SqliteStore::ListRounds(const RoundFilter& f) {
  absl::MutexLock lock(&mu_);
  try {
    std::string sql = absl::StrCat("SELECT ", kRoundColumns,
                                   ", m.value FROM rounds r LEFT JOIN round_metrics m ON "
                                   "m.round_id = r.id AND m.name = :metric WHERE r.team = :team "
                                   "AND r.created_ms >= :since");
    if (!f.newest_first) sql += " AND r.id > :after";
    if (f.newest_first && f.after_id > 0) sql += " AND r.id < :after";
    if (!f.operator_name.empty()) sql += " AND r.operator_name = :op";
    if (!f.case_id.empty()) sql += " AND r.case_id = :case";
    if (!f.collection_id.empty()) sql += " AND r.collection_id = :coll";
    if (f.until_ms > 0) sql += " AND r.created_ms < :until";
    AppendLabelFilter(&sql, f.labels.size(), "r.collection_id");
    // Rounds of the server's own collections (a label key starting
    // "npuperf.", core/limits.h kServerLabelPrefix) only when asked for; the
    // key range ['npuperf.', 'npuperf/') is that prefix.
    if (!f.include_server_rounds && f.collection_id.empty()) {
      sql +=
          " AND NOT EXISTS (SELECT 1 FROM collection_labels x WHERE x.collection_id = "
          "r.collection_id AND x.key >= 'npuperf.' AND x.key < 'npuperf/')";
    }
    sql += f.newest_first ? " ORDER BY r.id DESC LIMIT :limit" : " ORDER BY r.id LIMIT :limit";
    SQLite::Statement q(*db_, sql);
    q.bind(":metric", f.metric);
    q.bind(":team", f.team);
    if (!f.newest_first || f.after_id > 0) q.bind(":after", f.after_id);
    q.bind(":since", f.since_ms);
    if (!f.operator_name.empty()) q.bind(":op", f.operator_name);
    if (!f.case_id.empty()) q.bind(":case", f.case_id);
    if (!f.collection_id.empty()) q.bind(":coll", f.collection_id);
    if (f.until_ms > 0) q.bind(":until", f.until_ms);
    BindLabelFilter(q, f.labels);
    q.bind(":limit", f.limit + 1);
    RoundPage page;
    while (q.executeStep()) {
      if (static_cast<int32_t>(page.rounds.size()) == f.limit) {
        page.last_id = page.rounds.back().id();
        break;
      }
      v1::Round r = RoundFromRow(q, false);
      if (!f.metric.empty() && !q.getColumn(9).isNull()) {
        v1::MetricPoint* p = &page.series.emplace_back();
        p->set_round_id(r.id());
        *p->mutable_at() = r.created_at();
        p->set_value(q.getColumn(9).getDouble());
      }
      page.rounds.push_back(std::move(r));
    }
    // Labels of the collection, as GetRound gives them: one read per
    // collection on the page.
    std::map<std::string, google::protobuf::Map<std::string, std::string>> labels;
    SQLite::Statement l(*db_, "SELECT key, value FROM collection_labels WHERE collection_id = ?");
    for (v1::Round& r : page.rounds) {
      auto [it, fresh] = labels.try_emplace(r.collection_id());
      if (fresh) {
        l.reset();
        l.bind(1, r.collection_id());
        while (l.executeStep()) it->second[l.getColumn(0).getString()] = l.getColumn(1).getString();
      }
      *r.mutable_labels() = it->second;
    }
    return page;
  } catch (...) {
    return CurrentSqliteError("list rounds");
  }
}

absl::StatusOr<Baseline> SqliteStore::PinBaseline(const std::string& team, const Baseline& pin) {
  absl::MutexLock lock(&mu_);
  try {
    const bool round = pin.round_id > 0;
    SQLite::Statement q(*db_, round ? "SELECT 1 FROM rounds WHERE id = ? AND team = ?"
                                    : "SELECT 1 FROM collections WHERE id = ? AND team = ?");
    if (round) {
      q.bind(1, pin.round_id);
    } else {
      q.bind(1, pin.collection_id);
    }
    q.bind(2, team);
    if (!q.executeStep()) {
      return absl::NotFoundError(
          round ? absl::StrCat("round ", pin.round_id, " not found")
                : absl::StrCat("collection ", pin.collection_id, " not found"));
    }
    SQLite::Statement put(*db_,
                          "INSERT OR REPLACE INTO baselines (team, label, round_id, collection_id, "
                          "pinned_ms) VALUES (?, ?, ?, ?, ?)");
    put.bind(1, team);
    put.bind(2, pin.label);
    if (round) {
      put.bind(3, pin.round_id);
      put.bind(4);
    } else {
      put.bind(3);
      put.bind(4, pin.collection_id);
    }
    put.bind(5, pin.pinned_ms);
    put.exec();
    return pin;
  } catch (...) {
    return CurrentSqliteError("pin baseline");
  }
}

absl::StatusOr<Baseline> SqliteStore::GetBaseline(const std::string& team,
                                                  const std::string& label) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_,
                        "SELECT round_id, collection_id, pinned_ms FROM baselines WHERE team = ? "
                        "AND label = ?");
    q.bind(1, team);
    q.bind(2, label);
    if (!q.executeStep())
      return absl::NotFoundError(absl::StrCat("no baseline pinned for ", label));
    Baseline b;
    b.label = label;
    if (!q.getColumn(0).isNull()) b.round_id = q.getColumn(0).getInt64();
    if (!q.getColumn(1).isNull()) b.collection_id = q.getColumn(1).getString();
    b.pinned_ms = q.getColumn(2).getInt64();
    return b;
  } catch (...) {
    return CurrentSqliteError("get baseline");
  }
}

}  // namespace npuperf::server
