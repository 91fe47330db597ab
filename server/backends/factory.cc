#include "server/backends/factory.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/sqlite_store.h"
#if NPUPERF_WITH_POSTGRES
#include "server/backends/postgres/postgres_store.h"
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

std::string RedactDbUrl(const std::string& db) {
  std::string out = db;
  // URL user info: scheme://user:PASSWORD@host
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t auth_begin = scheme + 3;
    const size_t auth_end = out.find_first_of("/?#", auth_begin);
    const size_t at = out.rfind('@', auth_end == std::string::npos ? out.size() : auth_end);
    if (at != std::string::npos && at > auth_begin) {
      const size_t colon = out.find(':', auth_begin);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=VALUE, in a query string (up to '&') or a conninfo (up to a space).
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    const size_t value = p + 9;
    const size_t end = out.find_first_of("& ", value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

}  // namespace npuperf::server
