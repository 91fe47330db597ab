#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "server/store/store.h"

namespace npuperf::server {

// Opens the store named by --db ("sqlite:PATH", or "postgres://..." /
// "postgresql://..." when built with NPUPERF_WITH_POSTGRES) and applies
// pending migrations. clock must outlive the store: the PostgreSQL backend
// takes its deadlines, retry backoff and reconnect waits from it.
absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db, Clock& clock);

// --db as it may be logged or shown: the password of a URL's user info
// ("postgres://user:secret@host/db") and every `password=` parameter of its
// query string or of a key=value connection string become "***".
std::string RedactDbUrl(const std::string& db);

}  // namespace npuperf::server
