// SqliteStore: confirmations (migration 0015; compare/confirmations.h drives
// them). The body and options are serialized protos; id, rounds and state
// are columns. One connection and BEGIN IMMEDIATE make the one-per-pair
// insert and the compare-and-set atomic.
#include <utility>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/backends/sqlite/sqlite_store.h"

namespace npuperf::server {
namespace {

constexpr char kColumns[] = "id, team, options, body, version";

ConfirmationRecord ReadConfirmation(SQLite::Statement& q) {
  ConfirmationRecord c;
  c.team = q.getColumn(1).getString();
  c.options.ParseFromString(BlobOf(q.getColumn(2)));
  c.confirmation.ParseFromString(BlobOf(q.getColumn(3)));
  c.confirmation.set_id(q.getColumn(0).getInt64());
  c.version = q.getColumn(4).getInt64();
  return c;
}

absl::Status NotFound(int64_t id) {
  return absl::NotFoundError(absl::StrCat("confirmation ", id, " not found"));
}

}  // namespace

absl::StatusOr<std::pair<ConfirmationRecord, bool>> SqliteStore::InsertConfirmation(
    const ConfirmationRecord& c, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement have(*db_, absl::StrCat("SELECT ", kColumns,
                                              " FROM confirmations WHERE team = ? AND "
                                              "baseline_round_id = ? AND candidate_round_id = ? "
                                              "AND state <> ?"));
    have.bind(1, c.team);
    have.bind(2, c.confirmation.baseline_round_id());
    have.bind(3, c.confirmation.candidate_round_id());
    have.bind(4, static_cast<int>(v1::CONFIRMATION_STATE_UNCONFIRMED));
    if (have.executeStep()) return std::pair{ReadConfirmation(have), false};
    ConfirmationRecord out = c;
    out.version = 1;
    out.confirmation.clear_id();
    const std::string options = c.options.SerializeAsString();
    const std::string body = out.confirmation.SerializeAsString();
    SQLite::Statement ins(*db_,
                          "INSERT INTO confirmations (team, baseline_round_id, candidate_round_id, "
                          "state, options, body, version, created_ms, updated_ms) VALUES (?, ?, ?, "
                          "?, ?, ?, 1, ?, ?)");
    ins.bind(1, c.team);
    ins.bind(2, c.confirmation.baseline_round_id());
    ins.bind(3, c.confirmation.candidate_round_id());
    ins.bind(4, static_cast<int>(c.confirmation.state()));
    ins.bind(5, options.data(), static_cast<int>(options.size()));
    ins.bind(6, body.data(), static_cast<int>(body.size()));
    ins.bind(7, now_ms);
    ins.bind(8, now_ms);
    ins.exec();
    out.confirmation.set_id(db_->getLastInsertRowid());
    tx.commit();
    return std::pair{std::move(out), true};
  } catch (...) {
    return CurrentSqliteError("insert confirmation");
  }
}

absl::StatusOr<ConfirmationRecord> SqliteStore::GetConfirmation(const std::string& team,
                                                                int64_t id) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, absl::StrCat("SELECT ", kColumns,
                                           " FROM confirmations WHERE id = ? AND (? = '' OR "
                                           "team = ?)"));
    q.bind(1, id);
    q.bind(2, team);
    q.bind(3, team);
    if (!q.executeStep()) return NotFound(id);
    return ReadConfirmation(q);
  } catch (...) {
    return CurrentSqliteError("get confirmation");
  }
}

absl::StatusOr<std::vector<ConfirmationRecord>> SqliteStore::ListPendingConfirmations(
    int32_t limit) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, absl::StrCat("SELECT ", kColumns,
                                           " FROM confirmations WHERE state = ? ORDER BY id "
                                           "LIMIT ?"));
    q.bind(1, static_cast<int>(v1::CONFIRMATION_STATE_PENDING));
    q.bind(2, limit);
    std::vector<ConfirmationRecord> out;
    while (q.executeStep()) out.push_back(ReadConfirmation(q));
    return out;
  } catch (...) {
    return CurrentSqliteError("list pending confirmations");
  }
}

absl::StatusOr<ConfirmationRecord> SqliteStore::UpdateConfirmation(const ConfirmationRecord& c,
                                                                   int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    const int64_t id = c.confirmation.id();
    SQLite::Statement cur(*db_, "SELECT version FROM confirmations WHERE id = ? AND team = ?");
    cur.bind(1, id);
    cur.bind(2, c.team);
    if (!cur.executeStep()) return NotFound(id);
    const int64_t version = cur.getColumn(0).getInt64();
    if (version != c.version) {
      return absl::FailedPreconditionError(absl::StrCat(
          "confirmation ", id, " changed since version ", c.version, " (now ", version, ")"));
    }
    ConfirmationRecord out = c;
    out.version = version + 1;
    const std::string body = out.confirmation.SerializeAsString();
    SQLite::Statement up(*db_,
                         "UPDATE confirmations SET state = ?, body = ?, version = ?, updated_ms = "
                         "? WHERE id = ?");
    up.bind(1, static_cast<int>(c.confirmation.state()));
    up.bind(2, body.data(), static_cast<int>(body.size()));
    up.bind(3, out.version);
    up.bind(4, now_ms);
    up.bind(5, id);
    up.exec();
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("update confirmation");
  }
}

}  // namespace npuperf::server
