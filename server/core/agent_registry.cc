#include "server/core/agent_registry.h"

#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "server/core/agent_rules.h"
#include "server/core/constants.h"
#include "server/core/job_rules.h"

namespace npuperf::server {

AgentRegistry::AgentRegistry(Store& store, ServerMetrics& metrics)
    : store_(store), metrics_(metrics) {}

absl::Status AgentRegistry::Register(const AgentIdentity& who, const std::string& agent_id,
                                     const v1::RegisterAgentRequest& req, int64_t now_ms) {
  const std::vector<FieldViolation> bad = ValidateRegistration(req);
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  if (!who.MayActFor(req.host())) {
    return Count("RegisterAgent",
                 AgentRefused(AgentRefusal::kWrongHost,
                              absl::StrCat(who.Describe(), " may not register host '", req.host(),
                                           "' (an agent token's name is the host it serves)")));
  }
  if (absl::Status s = store_.UpsertAgent(agent_id, req, now_ms); !s.ok()) return s;
  {
    // The store marked the older instances of this host, boot and slot lost.
    absl::MutexLock lock(&mu_);
    std::erase_if(agents_, [&](const auto& entry) {
      return entry.first != agent_id && entry.second.host() == req.host() &&
             entry.second.boot_id() == req.boot_id() && entry.second.slot() == req.slot();
    });
  }
  Cache(agent_id, req);
  {
    // UpsertAgent wrote last_seen and exactly the registered devices.
    absl::MutexLock lock(&mu_);
    if (seen_.size() >= kMaxCachedAgents) seen_.clear();
    seen_[agent_id] = SeenWrite::Of(req.devices(), now_ms);
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::RegisterAgentRequest> AgentRegistry::Authorize(const AgentIdentity& who,
                                                                  const std::string& agent_id,
                                                                  const char* method) {
  v1::RegisterAgentRequest info;
  bool cached = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = agents_.find(agent_id);
    if (it != agents_.end()) {
      info = it->second;
      cached = true;
    }
  }
  if (!cached) {
    auto stored = agent_id.empty() ? absl::NotFoundError("no agent_id") : store_.GetAgent(agent_id);
    if (absl::IsNotFound(stored.status())) {
      return Count(method, AgentRefused(AgentRefusal::kUnknownAgent,
                                        absl::StrCat("agent '", agent_id.substr(0, 64),
                                                     "' is not registered; register again")));
    }
    if (!stored.ok()) return stored.status();
    info = *std::move(stored);
    Cache(agent_id, info);
  }
  if (!who.MayActFor(info.host())) {
    return Count(method, AgentRefused(AgentRefusal::kForeignAgent,
                                      absl::StrCat(who.Describe(), " may not act for agent ",
                                                   agent_id, " of another host")));
  }
  return info;
}

absl::Status AgentRegistry::Count(const char* method, absl::Status status) {
  if (auto why = AgentRefusalOf(status)) metrics_.CountAgentRefusal(method, AgentRefusalName(*why));
  return status;
}

void AgentRegistry::Count(const char* method, const std::vector<RefusedAttempt>& refused) {
  for (const auto& r : refused) metrics_.CountAgentRefusal(method, AgentRefusalName(r.reason));
}

void AgentRegistry::Forget(const std::vector<std::string>& agent_ids) {
  absl::MutexLock lock(&mu_);
  for (const auto& id : agent_ids) {
    agents_.erase(id);
    seen_.erase(id);
  }
}

bool AgentRegistry::SeenWriteDue(const v1::Heartbeat& hb, int64_t now_ms, int64_t refresh_ms) {
  absl::MutexLock lock(&mu_);
  auto it = seen_.find(hb.agent_id());
  return server::SeenWriteDue(it == seen_.end() ? nullptr : &it->second, hb, now_ms, refresh_ms);
}

void AgentRegistry::SeenWritten(const std::string& agent_id,
                                const std::vector<v1::DeviceInfo>& written, int64_t now_ms,
                                bool ok) {
  absl::MutexLock lock(&mu_);
  if (!ok) {
    seen_.erase(agent_id);
    return;
  }
  if (seen_.size() >= kMaxCachedAgents) seen_.clear();
  SeenWrite& w = seen_[agent_id];
  w.at_ms = now_ms;
  for (const v1::DeviceInfo& d : written) w.states[d.device_id()] = d.state();
}

void AgentRegistry::Cache(const std::string& agent_id, v1::RegisterAgentRequest info) {
  info.clear_running_jobs();
  absl::MutexLock lock(&mu_);
  if (agents_.size() >= kMaxCachedAgents) agents_.clear();
  agents_[agent_id] = std::move(info);
}

}  // namespace npuperf::server
