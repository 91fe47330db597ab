#include "server/backends/sqlite/errors.h"

#include <sqlite3.h>

#include <exception>
#include <string>

#include "SQLiteCpp/Exception.h"
#include "absl/strings/str_cat.h"

namespace npuperf::server {
namespace {

// SQLITE_CONSTRAINT by its extended code: a duplicate key is ALREADY_EXISTS;
// a value the schema refuses (NOT NULL, which a NaN bound as a REAL becomes,
// CHECK, or a trigger's RAISE(ABORT)) is INVALID_ARGUMENT; a reference to a
// missing row (FOREIGN KEY) is FAILED_PRECONDITION.
absl::Status ConstraintError(int extended, const std::string& message) {
  switch (extended) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_ROWID: return absl::AlreadyExistsError(message);
    case SQLITE_CONSTRAINT_NOTNULL:
    case SQLITE_CONSTRAINT_CHECK:
    case SQLITE_CONSTRAINT_TRIGGER:
    case SQLITE_CONSTRAINT_DATATYPE: return absl::InvalidArgumentError(message);
    default: return absl::FailedPreconditionError(message);
  }
}

}  // namespace

absl::Status CurrentSqliteError(absl::string_view what) {
  try {
    throw;
  } catch (const SQLite::Exception& e) {
    const std::string message = absl::StrCat(what, ": ", e.what());
    switch (e.getErrorCode()) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED: return absl::AbortedError(message);
      case SQLITE_CONSTRAINT: return ConstraintError(e.getExtendedErrorCode(), message);
      case SQLITE_FULL: return absl::ResourceExhaustedError(message);
      default: return absl::InternalError(message);
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what, ": ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(what, ": unknown exception"));
  }
}

}  // namespace npuperf::server
