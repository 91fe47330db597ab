#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace npuperf {

// `bytes` bytes from OpenSSL's CSPRNG (RAND_bytes), as 2 * bytes lowercase
// hex digits: for secrets (lease secrets, bearer tokens), where absl::BitGen
// (not a CSPRNG) must not be used. UNAVAILABLE when the generator fails (it
// could not be seeded). Thread-safe.
absl::StatusOr<std::string> SecureRandomHex(size_t bytes);

}  // namespace npuperf
