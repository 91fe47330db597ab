#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/store.h"

namespace npuperf::server {

// Who is calling: a team or an agent.
struct Principal {
  std::string kind;  // "team" or "agent"
  std::string name;
};

// Bearer-token authentication. Tokens are stored as sha256 hex only: from
// --tokens-file ("team|agent NAME SHA256HEX" per line, '#' comments) and
// from the store (`npuperf-server token create`). With auth disabled (no
// tokens file: development mode) every caller is team "default" and may
// also act as an agent. Thread-safe.
class Authenticator {
 public:
  Authenticator(Store& store, std::map<std::string, Principal> file_tokens, bool required);

  // From the "authorization" metadata value ("Bearer <token>").
  // UNAUTHENTICATED when missing or unknown.
  absl::StatusOr<Principal> Authenticate(const std::string& authorization);
  bool required() const { return required_; }

 private:
  Store& store_;
  const std::map<std::string, Principal> file_tokens_;
  const bool required_;
};

// Parses a tokens file; errors name the line.
absl::StatusOr<std::map<std::string, Principal>> LoadTokensFile(const std::filesystem::path& path);

}  // namespace npuperf::server
