#include "server/store/sqlite/errors.h"

#include <sqlite3.h>

#include "SQLiteCpp/Exception.h"
#include "absl/strings/str_cat.h"

namespace npuperf::server {

absl::Status FromSqliteException(absl::string_view what, const SQLite::Exception& e) {
  const std::string message = absl::StrCat(what, ": ", e.what());
  switch (e.getErrorCode()) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::AbortedError(message);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(message);
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status FromStdException(absl::string_view what, const std::exception& e) {
  return absl::InternalError(absl::StrCat(what, ": ", e.what()));
}

}  // namespace npuperf::server
