#pragma once

// Template body of GuardSqlite; included by store_errors.h only.
#include "SQLiteCpp/Exception.h"

namespace npuperf::server {

template <typename F>
auto GuardSqlite(absl::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const SQLite::Exception& e) {
    return FromSqliteException(what, e);
  } catch (const std::exception& e) {
    return FromStdException(what, e);
  }
}

}  // namespace npuperf::server
