#include "server/core/safe_defaults.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace npuperf::server {

bool IsLoopbackListen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  const std::string host = colon == std::string::npos ? listen : listen.substr(0, colon);
  return host == "localhost" || host == "[::1]" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::StatusOr<SafetyDecision> DecideSafety(const SafetyInputs& in) {
  const bool loopback = IsLoopbackListen(in.listen);
  SafetyDecision d;
  if (in.insecure_no_auth) {
    if (!loopback) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--insecure-no-auth is accepted only on a loopback --listen address, not ", in.listen));
    }
    d.auth_required = false;
    d.warnings.push_back("--insecure-no-auth: authentication disabled (loopback only)");
  } else if (in.tokens == 0) {
    d.warnings.push_back(
        "no tokens yet: every call is refused until one is created (npuperf-server token create "
        "or --tokens-file)");
  }
  if (!in.tls && !loopback) {
    if (!in.allow_plaintext) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--listen ", in.listen,
          " is not a loopback address: give --tls-cert/--tls-key, or --allow-plaintext to send "
          "bearer tokens in clear"));
    }
    d.plaintext_exposed = true;
    d.warnings.push_back(
        absl::StrCat("--allow-plaintext: bearer tokens cross the network in clear on ", in.listen));
  }
  return d;
}

}  // namespace npuperf::server
