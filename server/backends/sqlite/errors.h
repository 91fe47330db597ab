#pragma once
// SQLite errors -> status codes for SqliteStore (internal to the SQLite
// backend: the PostgreSQL backend maps its own in PgPool::Run).
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace npuperf::server {

// The exception in flight as a status (style.md R3): SQLITE_BUSY/LOCKED ->
// ABORTED; a unique or primary key violation -> ALREADY_EXISTS; a NOT NULL,
// CHECK or trigger violation (bad data) -> INVALID_ARGUMENT; other
// constraints (foreign keys) -> FAILED_PRECONDITION; a full disk ->
// RESOURCE_EXHAUSTED; anything else INTERNAL. `what` prefixes the message.
// Every SqliteStore method runs its statements in a try block and returns
// this from `catch (...)`, so exceptions never leave the store.
// REQUIRES: called inside a catch block.
absl::Status CurrentSqliteError(absl::string_view what);

}  // namespace npuperf::server
