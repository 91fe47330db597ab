#include "common/secure_random.h"

#include <openssl/rand.h>

#include <climits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace npuperf {

absl::StatusOr<std::string> SecureRandomHex(size_t bytes) {
  if (bytes == 0 || bytes > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("SecureRandomHex: bytes must be in 1..INT_MAX");
  }
  std::vector<unsigned char> buf(bytes);
  if (RAND_bytes(buf.data(), static_cast<int>(bytes)) != 1) {
    return absl::UnavailableError("the random generator failed (RAND_bytes)");
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
}

}  // namespace npuperf
