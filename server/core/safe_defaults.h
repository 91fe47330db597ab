#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::server {

// Whether HOST of a listen address HOST:PORT is a loopback one: 127.0.0.0/8,
// [::1] or localhost. An empty host, 0.0.0.0 and [::] listen everywhere.
bool IsLoopbackListen(const std::string& listen);

// What the serving command was given that the safe defaults decide on.
struct SafetyInputs {
  std::string listen;             // --listen
  bool tls = false;               // --tls-cert/--tls-key given
  bool allow_plaintext = false;   // --allow-plaintext
  bool insecure_no_auth = false;  // --insecure-no-auth
  int64_t tokens = 0;             // tokens known at start (file and database)
};

// How the server runs, and what it warns about at start.
struct SafetyDecision {
  bool auth_required = true;
  // Plaintext on a non-loopback address (--allow-plaintext): exported as
  // npuperf_server_plaintext_listener.
  bool plaintext_exposed = false;
  std::vector<std::string> warnings;
};

// The safe defaults (docs/security.md, "Bundles, defaults and resources"):
// authentication is always on unless --insecure-no-auth, which only a
// loopback listen address accepts; a non-loopback address needs TLS or
// --allow-plaintext. INVALID_ARGUMENT naming the flag otherwise. Pure.
absl::StatusOr<SafetyDecision> DecideSafety(const SafetyInputs& in);

}  // namespace npuperf::server
