#include "server/core/agent_certificate.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/job_rules.h"

namespace npuperf::server {

absl::StatusOr<std::string> CertificateAgentName(const PeerCertificate& cert) {
  if (cert.dns_names.size() == 1) return cert.dns_names[0];
  if (cert.dns_names.size() > 1) {
    return AgentRefused(AgentRefusal::kCertMismatch,
                        absl::StrCat("the client certificate names ", cert.dns_names.size(),
                                     " DNS names (", absl::StrJoin(cert.dns_names, ", "),
                                     "); an agent certificate must name exactly one agent"));
  }
  if (cert.common_name.empty()) {
    return AgentRefused(AgentRefusal::kCertMismatch,
                        "the client certificate has neither a DNS subjectAltName nor a subject "
                        "CN: it names no agent");
  }
  return cert.common_name;
}

absl::StatusOr<AgentIdentity> DecideAgentCertificate(const PeerCertificate& cert,
                                                     const AgentIdentity& token,
                                                     bool require_cert) {
  if (!cert.presented) {
    if (!require_cert) return token;
    return AgentRefused(
        AgentRefusal::kNoClientCert,
        absl::StrCat("the server requires an agent client certificate "
                     "(--require-agent-cert) and ",
                     token.Describe(), " presented none (npuperf-agent --tls-cert)"));
  }
  auto name = CertificateAgentName(cert);
  if (!name.ok()) return name.status();
  if (!token.bound()) return AgentIdentity::ForHost(*std::move(name));
  if (*token.host() != *name) {
    return AgentRefused(
        AgentRefusal::kCertMismatch,
        absl::StrCat("the client certificate names agent '", *name, "' but the call uses ",
                     token.Describe(), ": an agent must present its own certificate"));
  }
  return token;
}

}  // namespace npuperf::server
