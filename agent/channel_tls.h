#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace npuperf::agent {

// TLS of the agent's channel to the server, read once at start: the CA that
// signed the server's certificate and, for mTLS, this agent's certificate
// chain and private key (docs/security.md, "Agent client certificates").
struct ChannelTls {
  std::string root_pem;  // empty: plaintext
  std::string cert_pem;  // empty: no client certificate
  std::string key_pem;
};

// The files the flags name.
struct ChannelTlsFiles {
  std::string ca;    // --tls-ca
  std::string cert;  // --tls-cert
  std::string key;   // --tls-key
};

// Reads the files: each must be a PEM file (the key one holding a PRIVATE
// KEY); --tls-cert and --tls-key come together and need --tls-ca; the key
// must be the agent's alone (CheckPrivateFile, owner). INVALID_ARGUMENT or
// FAILED_PRECONDITION naming the flag and the file otherwise.
absl::StatusOr<ChannelTls> LoadChannelTls(const ChannelTlsFiles& files, uid_t owner);

}  // namespace npuperf::agent
