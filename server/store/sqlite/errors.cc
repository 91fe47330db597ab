#include "server/store/sqlite/errors.h"

#include <sqlite3.h>

#include <exception>
#include <string>

#include "SQLiteCpp/Exception.h"
#include "absl/strings/str_cat.h"

namespace npuperf::server {

absl::Status CurrentSqliteError(absl::string_view what) {
  try {
    throw;
  } catch (const SQLite::Exception& e) {
    const std::string message = absl::StrCat(what, ": ", e.what());
    switch (e.getErrorCode()) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED: return absl::AbortedError(message);
      case SQLITE_CONSTRAINT: return absl::AlreadyExistsError(message);
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
