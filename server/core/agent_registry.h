#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "npuperf/v1/agent_service.pb.h"
#include "server/core/agent_identity.h"
#include "server/core/agent_rules.h"
#include "server/core/metrics.h"
#include "server/store/store.h"

namespace npuperf::server {

// The scheduler's agents: registrations (validated, bound to the caller's
// identity, cached by agent id), the check every AgentService call naming an
// agent id makes, and the refusals counted in
// npuperf_server_agent_calls_refused_total{method,reason}. An agent id
// stands for one (host, boot, instance), so its host never changes and the
// cache can only miss, never lie about it. Thread-safe; the store and metrics
// must outlive it.
class AgentRegistry {
 public:
  AgentRegistry(Store& store, ServerMetrics& metrics);

  // Stores req as agent agent_id: INVALID_ARGUMENT with every field violation
  // (ValidateRegistration), PERMISSION_DENIED (kWrongHost) when `who` may
  // not act for req.host(); nothing is stored then.
  absl::Status Register(const AgentIdentity& who, const std::string& agent_id,
                        const v1::RegisterAgentRequest& req, int64_t now_ms);
  // What agent_id registered (devices, labels; no running jobs), when `who`
  // may act for it: NOT_FOUND (kUnknownAgent) for an unknown, lost or empty
  // agent id, PERMISSION_DENIED (kForeignAgent) for another host's agent.
  // Refusals are counted under `method`.
  absl::StatusOr<v1::RegisterAgentRequest> Authorize(const AgentIdentity& who,
                                                     const std::string& agent_id,
                                                     const char* method);
  // Counts the refusal status carries (its AgentRefusal), if any; returns it.
  absl::Status Count(const char* method, absl::Status status);
  // Counts each refused attempt of a renewal or adoption.
  void Count(const char* method, const std::vector<RefusedAttempt>& refused);
  // Drops pruned agents from the cache.
  void Forget(const std::vector<std::string>& agent_ids);

  // Whether hb must write its agent's last-seen time and device states
  // (agent_rules.h SeenWriteDue, against what this server last wrote).
  bool SeenWriteDue(const v1::Heartbeat& hb, int64_t now_ms, int64_t refresh_ms);
  // Remembers that agent_id's `written` devices (the states stored) were
  // written at now_ms; ok false forgets what was written (the next heartbeat
  // writes).
  void SeenWritten(const std::string& agent_id, const std::vector<v1::DeviceInfo>& written,
                   int64_t now_ms, bool ok);

 private:
  void Cache(const std::string& agent_id, v1::RegisterAgentRequest info);

  Store& store_;
  ServerMetrics& metrics_;
  absl::Mutex mu_;
  std::map<std::string, v1::RegisterAgentRequest> agents_ ABSL_GUARDED_BY(mu_);
  // What this server last wrote of each agent's last-seen time and devices
  // (Register, Heartbeat); bounded like agents_.
  std::map<std::string, SeenWrite> seen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
