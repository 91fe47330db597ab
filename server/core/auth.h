#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/store/store.h"

namespace npuperf::server {

// What a bearer token stands for.
enum class PrincipalKind {
  kTeam,   // submits and queries (CollectionService, QueryService)
  kAgent,  // runs jobs (AgentService)
};

// "team" / "agent": the text of tokens files and the tokens table.
const char* PrincipalKindName(PrincipalKind kind);
// The kind that text names; nullopt for anything else.
std::optional<PrincipalKind> ParsePrincipalKind(std::string_view text);

// Who is calling: a team or an agent.
struct Principal {
  PrincipalKind kind = PrincipalKind::kTeam;
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
  // UNAUTHENTICATED when missing or unknown; INTERNAL for a stored token of
  // a kind other than team or agent (the schema forbids it).
  absl::StatusOr<Principal> Authenticate(const std::string& authorization);
  bool required() const { return required_; }

 private:
  Store& store_;
  const std::map<std::string, Principal> file_tokens_;
  const bool required_;
};

// Team names starting "npuperf." are the server's own (the canaries' team,
// core/canary_rules.h): no token may carry one, so no person sees or
// spends the server's work as theirs.
bool IsReservedTeamName(std::string_view name);

// Parses a tokens file; errors name the line (a reserved team name too).
absl::StatusOr<std::map<std::string, Principal>> LoadTokensFile(const std::filesystem::path& path);

}  // namespace npuperf::server
