// SqliteStore: bisections (migration 0019; compare/bisections.h drives
// them). The body is the serialized proto; id, key, state and regression are
// columns. One connection and BEGIN IMMEDIATE make the one-per-key insert and
// the compare-and-set atomic.
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

constexpr char kColumns[] = "id, team, idempotency_key, body, version";

BisectionRecord ReadBisection(SQLite::Statement& q) {
  BisectionRecord b;
  b.team = q.getColumn(1).getString();
  b.idempotency_key = q.getColumn(2).getString();
  b.bisection.ParseFromString(BlobOf(q.getColumn(3)));
  b.bisection.set_id(q.getColumn(0).getInt64());
  b.version = q.getColumn(4).getInt64();
  return b;
}

absl::Status NotFound(int64_t id) {
  return absl::NotFoundError(absl::StrCat("bisection ", id, " not found"));
}

}  // namespace

absl::StatusOr<std::pair<BisectionRecord, bool>> SqliteStore::InsertBisection(
    const BisectionRecord& b, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement have(*db_, absl::StrCat("SELECT ", kColumns,
                                              " FROM bisections WHERE team = ? AND "
                                              "idempotency_key = ?"));
    have.bind(1, b.team);
    have.bind(2, b.idempotency_key);
    if (have.executeStep()) return std::pair{ReadBisection(have), false};
    BisectionRecord out = b;
    out.version = 1;
    out.bisection.clear_id();
    const std::string body = out.bisection.SerializeAsString();
    SQLite::Statement ins(*db_,
                          "INSERT INTO bisections (team, idempotency_key, state, regression_id, "
                          "body, version, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, 1, ?, ?)");
    ins.bind(1, b.team);
    ins.bind(2, b.idempotency_key);
    ins.bind(3, static_cast<int>(b.bisection.state()));
    ins.bind(4, b.bisection.regression_id());
    ins.bind(5, body.data(), static_cast<int>(body.size()));
    ins.bind(6, now_ms);
    ins.bind(7, now_ms);
    ins.exec();
    out.bisection.set_id(db_->getLastInsertRowid());
    tx.commit();
    return std::pair{std::move(out), true};
  } catch (...) {
    return CurrentSqliteError("insert bisection");
  }
}

absl::StatusOr<BisectionRecord> SqliteStore::GetBisection(const std::string& team, int64_t id) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, absl::StrCat("SELECT ", kColumns,
                                           " FROM bisections WHERE id = ? AND (? = '' OR team = "
                                           "?)"));
    q.bind(1, id);
    q.bind(2, team);
    q.bind(3, team);
    if (!q.executeStep()) return NotFound(id);
    return ReadBisection(q);
  } catch (...) {
    return CurrentSqliteError("get bisection");
  }
}

absl::StatusOr<std::vector<BisectionRecord>> SqliteStore::ListBisections(const std::string& team,
                                                                         bool include_finished,
                                                                         int32_t limit) {
  std::vector<BisectionRecord> out;
  if (limit <= 0) return out;  // SQLite reads a negative LIMIT as none
  absl::MutexLock lock(&mu_);
  try {
    // The unfinished states as literals, so that SQLite can prove the partial
    // index bisections_unfinished applies.
    SQLite::Statement q(*db_, absl::StrCat("SELECT ", kColumns, " FROM bisections WHERE ",
                                           include_finished ? "" : "state IN (1, 2, 3) AND ",
                                           "(? = '' OR team = ?) ORDER BY id DESC LIMIT ?"));
    q.bind(1, team);
    q.bind(2, team);
    q.bind(3, limit);
    while (q.executeStep()) out.push_back(ReadBisection(q));
    return out;
  } catch (...) {
    return CurrentSqliteError("list bisections");
  }
}

absl::StatusOr<BisectionRecord> SqliteStore::UpdateBisection(const BisectionRecord& b,
                                                             int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    const int64_t id = b.bisection.id();
    SQLite::Statement cur(*db_,
                          "SELECT version, idempotency_key FROM bisections WHERE id = ? AND "
                          "team = ?");
    cur.bind(1, id);
    cur.bind(2, b.team);
    if (!cur.executeStep()) return NotFound(id);
    const int64_t version = cur.getColumn(0).getInt64();
    if (version != b.version) {
      return absl::FailedPreconditionError(absl::StrCat("bisection ", id, " changed since version ",
                                                        b.version, " (now ", version, ")"));
    }
    BisectionRecord out = b;
    out.idempotency_key = cur.getColumn(1).getString();
    out.version = version + 1;
    const std::string body = out.bisection.SerializeAsString();
    SQLite::Statement up(*db_,
                         "UPDATE bisections SET state = ?, regression_id = ?, body = ?, version = "
                         "?, updated_ms = ? WHERE id = ?");
    up.bind(1, static_cast<int>(b.bisection.state()));
    up.bind(2, b.bisection.regression_id());
    up.bind(3, body.data(), static_cast<int>(body.size()));
    up.bind(4, out.version);
    up.bind(5, now_ms);
    up.bind(6, id);
    up.exec();
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("update bisection");
  }
}

}  // namespace npuperf::server
