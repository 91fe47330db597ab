// SqliteStore: device canaries (migration 0020; compare/canaries.h drives
// them). One connection and BEGIN IMMEDIATE make the one-per-slot insert and
// the compare-and-set atomic.
#include <string>
#include <utility>
#include <vector>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/sqlite_store.h"

namespace npuperf::server {
namespace {

constexpr int32_t kMaxListed = 1000;  // Store::ListCanaries

constexpr char kColumns[] =
    "id, host, device_id, soc, slot, state, collection_id, round_id, kernel_us, reference, "
    "reference_us, excess_pct, threshold_pct, reason, created_ms, finished_ms, version";

CanaryRecord ReadCanary(SQLite::Statement& q) {
  CanaryRecord c;
  c.id = q.getColumn(0).getInt64();
  c.host = q.getColumn(1).getString();
  c.device_id = q.getColumn(2).getInt();
  c.soc = q.getColumn(3).getString();
  c.slot = q.getColumn(4).getInt64();
  c.state = q.getColumn(5).getString();
  c.collection_id = q.getColumn(6).getString();
  c.round_id = q.getColumn(7).getInt64();
  c.kernel_us = q.getColumn(8).getDouble();
  c.reference = q.getColumn(9).getString();
  c.reference_us = q.getColumn(10).getDouble();
  c.excess_pct = q.getColumn(11).getDouble();
  c.threshold_pct = q.getColumn(12).getDouble();
  c.reason = q.getColumn(13).getString();
  c.created_ms = q.getColumn(14).getInt64();
  c.finished_ms = q.getColumn(15).getInt64();
  c.version = q.getColumn(16).getInt64();
  return c;
}

// Binds every column of c but id and version, from parameter 1 on, in
// kColumns' order (the insert and the update write the same fields).
void BindFields(SQLite::Statement& q, const CanaryRecord& c) {
  q.bind(1, c.host);
  q.bind(2, c.device_id);
  q.bind(3, c.soc);
  q.bind(4, c.slot);
  q.bind(5, c.state);
  q.bind(6, c.collection_id);
  q.bind(7, c.round_id);
  q.bind(8, c.kernel_us);
  q.bind(9, c.reference);
  q.bind(10, c.reference_us);
  q.bind(11, c.excess_pct);
  q.bind(12, c.threshold_pct);
  q.bind(13, c.reason);
  q.bind(14, c.created_ms);
  q.bind(15, c.finished_ms);
}
constexpr int kBoundFields = 15;

}  // namespace

absl::StatusOr<std::pair<CanaryRecord, bool>> SqliteStore::InsertCanary(const CanaryRecord& c) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement have(*db_, absl::StrCat("SELECT ", kColumns,
                                              " FROM canaries WHERE host = ? AND device_id = ? "
                                              "AND slot = ?"));
    have.bind(1, c.host);
    have.bind(2, c.device_id);
    have.bind(3, c.slot);
    if (have.executeStep()) return std::pair{ReadCanary(have), false};
    SQLite::Statement ins(*db_,
                          "INSERT INTO canaries (host, device_id, soc, slot, state, collection_id, "
                          "round_id, kernel_us, reference, reference_us, excess_pct, "
                          "threshold_pct, reason, created_ms, finished_ms, version) VALUES (?, ?, "
                          "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)");
    BindFields(ins, c);
    ins.exec();
    CanaryRecord out = c;
    out.id = db_->getLastInsertRowid();
    out.version = 1;
    tx.commit();
    return std::pair{std::move(out), true};
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("insert canary ", c.host, ":", c.device_id));
  }
}

absl::StatusOr<CanaryRecord> SqliteStore::UpdateCanary(const CanaryRecord& c) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement cur(*db_, "SELECT version FROM canaries WHERE id = ?");
    cur.bind(1, c.id);
    if (!cur.executeStep()) {
      return absl::NotFoundError(absl::StrCat("canary ", c.id, " not found"));
    }
    const int64_t version = cur.getColumn(0).getInt64();
    if (version != c.version) {
      return absl::FailedPreconditionError(absl::StrCat("canary ", c.id, " changed since version ",
                                                        c.version, " (now ", version, ")"));
    }
    CanaryRecord out = c;
    out.version = version + 1;
    SQLite::Statement up(*db_,
                         "UPDATE canaries SET host = ?, device_id = ?, soc = ?, slot = ?, state = "
                         "?, collection_id = ?, round_id = ?, kernel_us = ?, reference = ?, "
                         "reference_us = ?, excess_pct = ?, threshold_pct = ?, reason = ?, "
                         "created_ms = ?, finished_ms = ?, version = ? WHERE id = ?");
    BindFields(up, c);
    up.bind(kBoundFields + 1, out.version);
    up.bind(kBoundFields + 2, c.id);
    up.exec();
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError(absl::StrCat("update canary ", c.id));
  }
}

absl::StatusOr<std::vector<CanaryRecord>> SqliteStore::ListCanaries(const CanaryFilter& f) {
  if (f.limit < 1 || f.limit > kMaxListed) {
    return InvalidArgumentWithFields({{"limit", absl::StrCat("must be 1..", kMaxListed)}});
  }
  std::vector<CanaryRecord> out;
  if (f.pending_only && f.finished_only) return out;  // no canary is both
  // Only the conditions f sets, with the state as a literal: SQLite then
  // picks canaries_by_device, canaries_by_soc or the partial index
  // canaries_pending (an "? = '' OR host = ?" would hide them).
  std::string where;
  const auto add = [&where](const char* condition) {
    absl::StrAppend(&where, where.empty() ? " WHERE " : " AND ", condition);
  };
  if (!f.host.empty()) add("host = ?");
  if (f.device_id >= 0) add("device_id = ?");
  if (!f.soc.empty()) add("soc = ?");
  if (f.pending_only) add("state = 'pending'");
  if (f.finished_only) add("state <> 'pending'");
  if (f.before_id > 0) add("id < ?");
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, absl::StrCat("SELECT ", kColumns, " FROM canaries", where,
                                           " ORDER BY id DESC LIMIT ?"));
    int n = 0;
    if (!f.host.empty()) q.bind(++n, f.host);
    if (f.device_id >= 0) q.bind(++n, f.device_id);
    if (!f.soc.empty()) q.bind(++n, f.soc);
    if (f.before_id > 0) q.bind(++n, f.before_id);
    q.bind(++n, f.limit);
    while (q.executeStep()) out.push_back(ReadCanary(q));
    return out;
  } catch (...) {
    return CurrentSqliteError("list canaries");
  }
}

}  // namespace npuperf::server
