// SqliteStore: opening and migrating the database, and the steps several
// methods share inside their transaction (events, collection state).
#include "server/backends/sqlite/sqlite_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/core/job_state.h"
#include "server/store/migrator.h"

namespace npuperf::server {
namespace fs = std::filesystem;

SqliteStore::SqliteStore(std::unique_ptr<SQLite::Database> db) : db_(std::move(db)) {}
SqliteStore::~SqliteStore() = default;

namespace {

// Applies pending migrations, each in its own BEGIN IMMEDIATE transaction
// with its schema_migrations row.
absl::Status Migrate(SQLite::Database& db) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
      "name TEXT NOT NULL, applied_ms INTEGER NOT NULL)");
  MigrationTarget target;
  target.applied_versions = [&db]() -> absl::StatusOr<std::vector<int>> {
    std::vector<int> out;
    SQLite::Statement q(db, "SELECT version FROM schema_migrations ORDER BY version");
    while (q.executeStep()) out.push_back(q.getColumn(0).getInt());
    return out;
  };
  target.apply = [&db](const Migration& m) -> absl::Status {
    try {
      SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
      db.exec(m.sql);
      SQLite::Statement ins(db,
                            "INSERT INTO schema_migrations (version, name, applied_ms) "
                            "VALUES (?, ?, strftime('%s','now') * 1000)");
      ins.bind(1, m.version);
      ins.bind(2, m.name);
      ins.exec();
      tx.commit();
      return absl::OkStatus();
    } catch (...) {
      return CurrentSqliteError(m.name);
    }
  };
  return ApplyMigrations(EmbeddedMigrations(SqlDialect::kSqlite), target).status();
}

// The database holds every team's bundles and evidence: its directory is
// created 0700 when missing (an existing one keeps its mode), the file 0600
// (SQLite gives its -wal and -shm files the database file's mode), and an
// existing file and its -wal/-shm are narrowed to 0600.
absl::Status PrepareDatabaseFile(const std::string& path) {
  if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return absl::OkStatus();
  const fs::path file(path);
  std::error_code ec;
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (!fs::exists(dir, ec)) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::UnavailableError(
          absl::StrCat("create directory ", dir.string(), ": ", std::strerror(errno)));
    }
  }
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  ::close(fd);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string f = path + suffix;
    if (fs::exists(f, ec)) ::chmod(f.c_str(), 0600);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  if (auto s = PrepareDatabaseFile(path); !s.ok()) return s;
  try {
    auto db = std::make_unique<SQLite::Database>(
        path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_FULLMUTEX);
    db->setBusyTimeout(10'000);
    db->exec("PRAGMA journal_mode=WAL");
    db->exec("PRAGMA synchronous=NORMAL");
    db->exec("PRAGMA foreign_keys=ON");
    if (absl::Status s = Migrate(*db); !s.ok()) return s;
    return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(db)));
  } catch (...) {
    return CurrentSqliteError("open " + path);
  }
}

void SqliteStore::AddEvent(int64_t now_ms, const std::string& collection_id, int64_t job_id,
                           EventKind kind, const std::string& detail) {
  SQLite::Statement q(*db_,
                      "INSERT INTO events (at_ms, collection_id, job_id, kind, detail) "
                      "VALUES (?,?,?,?,?)");
  q.bind(1, now_ms);
  q.bind(2, collection_id);
  q.bind(3, job_id);
  q.bind(4, EventKindName(kind));
  q.bind(5, detail);
  q.exec();
}

SqliteStore::StoredCollection SqliteStore::LoadStoredCollection(const std::string& collection_id) {
  SQLite::Statement c(*db_, "SELECT state, cancel_reason FROM collections WHERE id = ?");
  c.bind(1, collection_id);
  if (!c.executeStep()) return {};
  return {static_cast<v1::CollectionState>(c.getColumn(0).getInt()),
          !c.getColumn(1).getString().empty()};
}

bool SqliteStore::OthersUnfinished(const std::string& collection_id, int64_t job_id) {
  SQLite::Statement q(*db_,
                      "SELECT EXISTS (SELECT 1 FROM jobs WHERE collection_id = ? AND state IN "
                      "(?, ?, ?) AND id <> ?)");
  q.bind(1, collection_id);
  q.bind(2, kQueued);
  q.bind(3, kLeased);
  q.bind(4, kRunning);
  q.bind(5, job_id);
  return q.executeStep() && q.getColumn(0).getInt() != 0;
}

std::optional<LeaseFacts> SqliteStore::LoadLease(int64_t job_id) {
  SQLite::Statement q(*db_,
                      "SELECT state, attempt, fencing_token, agent_id, host, lease_expires_ms, "
                      "lease_secret_sha256 FROM jobs WHERE id = ?");
  q.bind(1, job_id);
  if (!q.executeStep()) return std::nullopt;
  LeaseFacts f;
  f.state = static_cast<v1::JobState>(q.getColumn(0).getInt());
  f.attempt = q.getColumn(1).getInt();
  f.fencing_token = q.getColumn(2).getInt64();
  f.agent_id = q.getColumn(3).getString();  // "" for NULL
  f.host = q.getColumn(4).getString();
  f.lease_expires_ms = q.getColumn(5).getInt64();
  if (!q.getColumn(6).isNull()) f.secret_sha256 = q.getColumn(6).getString();
  return f;
}

void SqliteStore::RefreshCollectionState(const std::string& collection_id, int64_t now_ms) {
  SQLite::Statement counts(
      *db_, "SELECT state, COUNT(*) FROM jobs WHERE collection_id = ? GROUP BY state");
  counts.bind(1, collection_id);
  v1::JobCounts c;
  while (counts.executeStep()) {
    for (int i = 0; i < counts.getColumn(1).getInt(); ++i) {
      CountJob(static_cast<v1::JobState>(counts.getColumn(0).getInt()), &c);
    }
  }
  const v1::CollectionState state = DeriveCollectionState(c, CollectionCancelled(collection_id));
  SQLite::Statement up(*db_,
                       "UPDATE collections SET state = ?, finished_ms = CASE WHEN ? THEN "
                       "COALESCE(finished_ms, ?) ELSE NULL END WHERE id = ?");
  up.bind(1, static_cast<int>(state));
  up.bind(2, IsTerminal(state) ? 1 : 0);
  up.bind(3, now_ms);
  up.bind(4, collection_id);
  up.exec();
}

}  // namespace npuperf::server
