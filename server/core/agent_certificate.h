#pragma once
// Agent client certificates (mTLS), pure: which agent a verified client
// certificate names, and whether an AgentService call may act with it.
// docs/security.md, "Agent client certificates".
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/agent_identity.h"

namespace npuperf::server {

// What the TLS handshake proved about a caller (the service adapter reads it
// from grpc::ServerContext::auth_context()).
struct PeerCertificate {
  // A client certificate was presented; the handshake verified it against
  // --tls-client-ca (a certificate that fails verification ends the
  // connection before any call).
  bool presented = false;
  std::vector<std::string> dns_names;  // its subjectAltName DNS entries
  std::string common_name;             // its subject CN ("" when none)
};

// The agent a certificate names, the one rule: its subjectAltName DNS entry
// when it has exactly one; its subject CN when it has none. More than one
// DNS entry (one certificate, one agent), or neither a DNS entry nor a CN,
// names no agent: PERMISSION_DENIED (kCertMismatch) saying which. URI, IP
// and e-mail entries are not consulted.
// REQUIRES: cert.presented.
absl::StatusOr<std::string> CertificateAgentName(const PeerCertificate& cert);

// The identity an AgentService call acts with, given the identity of its
// token and the certificate its connection presented:
// - no certificate: the token's identity, unless require_cert
//   (--require-agent-cert): UNAUTHENTICATED (kNoClientCert);
// - a certificate (whether or not required) must name the agent the token
//   is bound to (its host): PERMISSION_DENIED (kCertMismatch) otherwise;
// - with an unbound token identity (development mode) the certificate binds
//   the call to the host it names.
// Every refusal is an AgentRefused status (core/job_rules.h) whose message
// names the certificate's agent and the token's host.
absl::StatusOr<AgentIdentity> DecideAgentCertificate(const PeerCertificate& cert,
                                                     const AgentIdentity& token, bool require_cert);

}  // namespace npuperf::server
