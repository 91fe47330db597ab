#pragma once
// The agents domain's rules, pure: what a registration, a heartbeat and a
// LeaseJob offer may contain (limits in constants.h), and what each caller
// may see of the agents (ListAgents). docs/api.md, "Agents"; docs/security.md,
// "Agents and leases".
#include <cstdint>
#include <map>
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

// What the server last wrote of an agent from its registration or a
// heartbeat: when, and each device's stored state (by device id).
struct SeenWrite {
  int64_t at_ms = 0;
  std::map<int32_t, v1::DeviceState> states;

  static SeenWrite Of(const google::protobuf::RepeatedPtrField<v1::DeviceInfo>& devices,
                      int64_t now_ms);
};

// The state a heartbeat stores of a device it reports in `reported`: BUSY
// ("running one of this agent's jobs") is stored as IDLE. Whether a device
// runs one of our jobs is its live lease, which every reader of the stored
// state asks first (DeviceStatusName: ListAgents, the device gauges,
// confirmations' free devices); storing the flip at every job's start and
// end was a write per job (issue 36), and a BUSY left stored after the job
// would show a device busy that no lease holds.
v1::DeviceState StoredDeviceState(v1::DeviceState reported);

// Whether a heartbeat must write its agent's last-seen time and device states
// (Store::UpdateDevices, each as StoredDeviceState): when nothing is
// remembered (`last` null: another replica's session, a restart), when a
// device it lists would be stored in a state other than the remembered one,
// or when the last write is refresh_ms old or more.
// Otherwise the write changes nothing but last_seen, by less than refresh_ms:
// it was a statement a second per agent (issue 36: about 0.8 a job in
// fleet_bench, the fourth costliest, and 2,500 a second for 10,000 idle
// devices). last_seen is shown by ListAgents and read by PruneAgents
// (retention of days), so refresh_ms is small against both (SeenRefreshMs).
bool SeenWriteDue(const SeenWrite* last, const v1::Heartbeat& hb, int64_t now_ms,
                  int64_t refresh_ms);

// kAgentSeenRefresh, or a quarter of agent_retention when that is shorter (an
// agent that heartbeats is never pruned), and at least 1 ms.
int64_t SeenRefreshMs(int64_t agent_retention_ms);

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
