#pragma once
// The agents domain's rules, pure: what a registration, a heartbeat and a
// LeaseJob offer may contain (limits in constants.h), and what each caller
// may see of the agents (ListAgents). docs/api.md, "Agents"; docs/security.md,
// "Agents and leases".
#include <string>
#include <vector>

#include "common/status_util.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/core/auth.h"
#include "server/store/records.h"

namespace npuperf::server {

// RegisterAgent: host, boot_id and instance_id present; 1..kMaxAgentDevices
// devices with distinct ids in 0..kMaxAgentDeviceId, a SoC and a known state;
// at most kMaxAgentLabels labels, kMaxAgentCapabilities capabilities and
// kMaxAgentRunningJobs running jobs; no string longer than its bound. Every
// violation, each naming its field (a count over its bound is one violation,
// and its elements are not checked one by one).
std::vector<FieldViolation> ValidateRegistration(const v1::RegisterAgentRequest& req);

// A heartbeat of the agent registered as `registered`: each listed device is
// one it registered (same id and SoC) in a known state, and the counts are
// bounded. Fields are named "heartbeat.devices[i]", ...
std::vector<FieldViolation> ValidateHeartbeat(const v1::Heartbeat& hb,
                                              const v1::RegisterAgentRequest& registered);

// LeaseJob: each offered device is one the agent registered (same id and
// SoC), offered once. Fields are named "free_devices[i]".
std::vector<FieldViolation> ValidateOffer(const v1::LeaseJobRequest& req,
                                          const v1::RegisterAgentRequest& registered);

// Who reads ListAgents, and so what of it they see.
struct AgentsViewer {
  enum class Scope {
    kEverything,  // development mode (authentication off): every field of every agent
    kTeam,        // every agent's devices, SoCs and states; not hosts, labels, or the ids of
                  // other teams' running jobs (its own jobs' ids it sees)
    kOwnHost,     // an agent token: everything, of the agents of its own host only
  };
  Scope scope = Scope::kTeam;
  std::string name;  // the team (kTeam) or the host (kOwnHost)

  // From the caller's principal; auth_required false: kEverything.
  static AgentsViewer Of(const Principal& p, bool auth_required);
};

// The listing `viewer` may see of the stored agents.
v1::ListAgentsResponse ViewAgents(std::vector<AgentRecord> agents, const AgentsViewer& viewer);

}  // namespace npuperf::server
