#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "server/core/auth.h"

namespace npuperf::server {

// Which agents an AgentService caller may act for: the one agent identity
// of its credential, the host name it may register as and whose agent ids it
// may use. Today the credential is an agent token (its name is the host:
// tokens file line `agent HOST SHA256`, `npuperf-server token create --agent
// HOST`); a client certificate naming the host maps to the same
// identity here (core/agent_certificate.h), so nothing past this class knows
// how the caller proved it.
// With authentication disabled (development mode) the identity is unbound:
// it may act for any host. docs/security.md, "Agents and leases".
class AgentIdentity {
 public:
  // The identity of an authenticated caller. auth_required false
  // (development mode): unbound, whatever the principal. Authorize() lets
  // only agent principals reach AgentService when authentication is on, so
  // p.name is then the host.
  static AgentIdentity Of(const Principal& p, bool auth_required) {
    return auth_required ? ForHost(p.name) : Unbound();
  }
  // Bound to one host.
  static AgentIdentity ForHost(std::string host) { return AgentIdentity(std::move(host)); }
  // May act for any host (development mode, tests).
  static AgentIdentity Unbound() { return AgentIdentity(std::nullopt); }

  bool bound() const { return host_.has_value(); }
  // The host it is bound to; nullopt when unbound.
  const std::optional<std::string>& host() const { return host_; }
  // Whether the caller may register as, or use agent ids registered by, host.
  bool MayActFor(std::string_view host) const { return !host_ || *host_ == host; }
  // What the caller is, for error messages: "agent token for host X" or
  // "an unauthenticated caller".
  std::string Describe() const {
    return host_ ? absl::StrCat("the agent token of host '", *host_, "'")
                 : "an unauthenticated caller (development mode)";
  }

 private:
  explicit AgentIdentity(std::optional<std::string> host) : host_(std::move(host)) {}
  std::optional<std::string> host_;  // nullopt: unbound
};

}  // namespace npuperf::server
