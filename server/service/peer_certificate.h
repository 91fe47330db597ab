#pragma once

#include <string>

#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/server_context.h"
#include "server/core/agent_certificate.h"

namespace npuperf::server {

// The client certificate of ctx's connection, as its TLS handshake verified
// it (--tls-client-ca): present when the auth context carries the peer's PEM
// certificate; its DNS subjectAltNames and subject CN. Not presented on a
// plaintext connection or one without a client certificate.
inline PeerCertificate PeerCertificateOf(const grpc::ServerContextBase& ctx) {
  PeerCertificate cert;
  const auto auth = ctx.auth_context();
  if (auth == nullptr) return cert;
  auto text = [](const grpc::string_ref& v) { return std::string(v.data(), v.size()); };
  cert.presented = !auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty();
  if (!cert.presented) return cert;
  for (const auto& v : auth->FindPropertyValues(GRPC_PEER_DNS_PROPERTY_NAME)) {
    cert.dns_names.push_back(text(v));
  }
  const auto cn = auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
  if (!cn.empty()) cert.common_name = text(cn.front());
  return cert;
}

}  // namespace npuperf::server
