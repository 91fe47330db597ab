#include "server/core/auth.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/sha256.h"

namespace npuperf::server {

Authenticator::Authenticator(Store& store, std::map<std::string, Principal> file_tokens,
                             bool required)
    : store_(store), file_tokens_(std::move(file_tokens)), required_(required) {}

const char* PrincipalKindName(PrincipalKind kind) {
  return kind == PrincipalKind::kAgent ? "agent" : "team";
}

std::optional<PrincipalKind> ParsePrincipalKind(std::string_view text) {
  if (text == "team") return PrincipalKind::kTeam;
  if (text == "agent") return PrincipalKind::kAgent;
  return std::nullopt;
}

absl::StatusOr<Principal> Authenticator::Authenticate(const std::string& authorization) {
  if (!required_) return Principal{PrincipalKind::kTeam, "default"};
  absl::string_view value = authorization;
  if (!absl::ConsumePrefix(&value, "Bearer ") || value.empty()) {
    return absl::UnauthenticatedError("missing bearer token (authorization: Bearer <token>)");
  }
  const std::string hash = Sha256Hex(std::string(absl::StripAsciiWhitespace(value)));
  if (auto it = file_tokens_.find(hash); it != file_tokens_.end()) return it->second;
  auto stored = store_.LookupToken(hash);
  if (absl::IsNotFound(stored.status())) return absl::UnauthenticatedError("unknown token");
  if (!stored.ok()) return stored.status();
  const std::optional<PrincipalKind> kind = ParsePrincipalKind(stored->first);
  if (!kind) return absl::InternalError(absl::StrCat("token of unknown kind ", stored->first));
  return Principal{*kind, stored->second};
}

bool IsReservedTeamName(std::string_view name) { return name.starts_with("npuperf."); }

absl::StatusOr<std::map<std::string, Principal>> LoadTokensFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read tokens file ", path.string()));
  std::map<std::string, Principal> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text.front() == '#') continue;
    std::vector<std::string> parts = absl::StrSplit(text, ' ', absl::SkipEmpty());
    const std::optional<PrincipalKind> kind =
        parts.size() == 3 ? ParsePrincipalKind(parts[0]) : std::nullopt;
    if (!kind || !IsSha256Hex(parts[2])) {
      return absl::InvalidArgumentError(absl::StrCat(
          path.string(), ":", n,
          ": want 'team|agent NAME SHA256HEX' (hash with `npuperf-server token hash`)"));
    }
    if (*kind == PrincipalKind::kTeam && IsReservedTeamName(parts[1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          path.string(), ":", n, ": team names starting \"npuperf.\" are the server's own"));
    }
    out[parts[2]] = Principal{*kind, parts[1]};
  }
  return out;
}

}  // namespace npuperf::server
