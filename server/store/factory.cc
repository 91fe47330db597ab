#include "server/store/factory.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/store/sqlite/sqlite_store.h"
#if NPUPERF_WITH_POSTGRES
#include "server/store/postgres/postgres_store.h"
#endif

namespace npuperf::server {

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db,
                                                 [[maybe_unused]] Clock& clock) {
  if (absl::StartsWith(db, "sqlite:")) {
    const std::string path = db.substr(7);
    if (path.empty()) return absl::InvalidArgumentError("--db sqlite: needs a path");
    if (path != ":memory:") {
      std::error_code ec;
      // The directories above the database's own; SqliteStore::Open creates
      // that one 0700.
      const auto parent = std::filesystem::path(path).parent_path();
      if (parent.has_parent_path()) std::filesystem::create_directories(parent.parent_path(), ec);
    }
    auto store = SqliteStore::Open(path);
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(std::move(*store));
  }
  if (absl::StartsWith(db, "postgres://") || absl::StartsWith(db, "postgresql://")) {
#if NPUPERF_WITH_POSTGRES
    return PostgresStore::Open(db, clock);
#else
    return absl::UnimplementedError(
        "this npuperf-server was built without PostgreSQL (NPUPERF_WITH_POSTGRES=OFF); use "
        "--db sqlite:PATH");
#endif
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--db '", db, "': want sqlite:PATH or postgres://user@host:port/dbname"));
}

}  // namespace npuperf::server
