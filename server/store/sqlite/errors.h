#pragma once

#include <exception>
#include "absl/strings/string_view.h"
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace SQLite {
class Exception;
}

namespace npuperf::server {

// Backend exceptions -> status codes (style.md R3): SQLITE_BUSY/LOCKED ->
// ABORTED; constraint violations -> ALREADY_EXISTS; everything else INTERNAL
// with the message.
absl::Status FromSqliteException(absl::string_view what, const SQLite::Exception& e);
absl::Status FromStdException(absl::string_view what, const std::exception& e);

// Runs f, turning exceptions into statuses. f returns absl::Status or
// absl::StatusOr<T>.
template <typename F>
auto GuardSqlite(absl::string_view what, F&& f) -> decltype(f());

}  // namespace npuperf::server

#include "server/store/sqlite/errors_inl.h"
