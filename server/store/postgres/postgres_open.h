#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/store.h"

namespace npuperf::server {

// Opens the PostgreSQL Store (PostgresStore, libpqxx) at url
// ("postgres://user@host:port/db" or "postgresql://..."; libpq URI options
// such as ?options=-csearch_path%3Dschema apply) with pool_size connections,
// applying pending migrations. Kept apart from postgres_store.h so callers
// (store_factory.cc, tests, benchmarks) never include <pqxx/...> (R1).
// UNAVAILABLE when the database is unreachable.
absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url, int pool_size = 4);

}  // namespace npuperf::server
