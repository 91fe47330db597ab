#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/store.h"

namespace npuperf::server {

// Opens the store named by --db ("sqlite:PATH" or "postgres://...") and
// applies pending migrations.
absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db);

}  // namespace npuperf::server
