#include "server/core/agent_rules.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "server/core/constants.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

using Violations = std::vector<FieldViolation>;

void CheckString(const std::string& value, const std::string& field, bool required,
                 Violations* out) {
  if (required && value.empty()) {
    out->push_back({field, "required"});
  } else if (value.size() > kMaxAgentStringBytes) {
    out->push_back({field, absl::StrCat("longer than ", kMaxAgentStringBytes, " bytes")});
  }
}

// False (with a violation) when `count` exceeds `max`: the elements are then
// not checked one by one.
bool CheckCount(int count, int max, const std::string& field, Violations* out) {
  if (count <= max) return true;
  out->push_back({field, absl::StrCat(count, " entries, at most ", max)});
  return false;
}

void CheckLabels(const google::protobuf::Map<std::string, std::string>& labels, Violations* out) {
  if (!CheckCount(static_cast<int>(labels.size()), kMaxAgentLabels, "labels", out)) return;
  for (const auto& [key, value] : labels) {
    const std::string shown = key.substr(0, kMaxAgentLabelKeyBytes);
    if (key.empty() || key.size() > kMaxAgentLabelKeyBytes) {
      out->push_back({"labels", absl::StrCat("key '", shown, "' must be 1..",
                                             kMaxAgentLabelKeyBytes, " bytes")});
    } else if (value.size() > kMaxAgentLabelValueBytes) {
      out->push_back({absl::StrCat("labels[", shown, "]"),
                      absl::StrCat("longer than ", kMaxAgentLabelValueBytes, " bytes")});
    }
  }
}

// An npu-smi reading an agent reports: bounded strings, plausible numbers.
void CheckReading(const v1::DeviceInfo& d, const std::string& field, Violations* out) {
  CheckString(d.health_detail(), field + ".health_detail", /*required=*/false, out);
  if (!d.has_reading()) return;
  const v1::DeviceReading& r = d.reading();
  const std::string rf = field + ".reading";
  CheckString(r.health(), rf + ".health", false, out);
  CheckString(r.error_code(), rf + ".error_code", false, out);
  CheckString(r.problem(), rf + ".problem", false, out);
  for (const auto& [mhz, name] : {std::pair{r.aicore_rated_mhz(), ".aicore_rated_mhz"},
                                  std::pair{r.aicore_current_mhz(), ".aicore_current_mhz"}}) {
    if (mhz < 0 || mhz > kMaxChipClockMhz) {
      out->push_back({rf + name, absl::StrCat("must be in 0..", kMaxChipClockMhz)});
    }
  }
  if (r.has_temperature_c() && !(r.temperature_c() >= -273 && r.temperature_c() <= 1000)) {
    out->push_back({rf + ".temperature_c", "must be a temperature in -273..1000"});
  }
  if (r.has_power_w() && !(r.power_w() >= 0 && r.power_w() <= 100'000)) {
    out->push_back({rf + ".power_w", "must be a power in 0..100000"});
  }
}

void CheckDevices(const v1::RegisterAgentRequest& req, Violations* out) {
  if (req.devices().empty()) out->push_back({"devices", "at least one device"});
  if (!CheckCount(req.devices_size(), kMaxAgentDevices, "devices", out)) return;
  std::map<int32_t, int> seen;  // device id -> index
  for (int i = 0; i < req.devices_size(); ++i) {
    const v1::DeviceInfo& d = req.devices(i);
    const std::string field = absl::StrCat("devices[", i, "]");
    if (d.device_id() < 0 || d.device_id() > kMaxAgentDeviceId) {
      out->push_back({field + ".device_id", absl::StrCat("must be in 0..", kMaxAgentDeviceId)});
    } else if (auto [it, fresh] = seen.emplace(d.device_id(), i); !fresh) {
      out->push_back({field + ".device_id", absl::StrCat("device ", d.device_id(),
                                                         " is also devices[", it->second, "]")});
    }
    CheckString(d.soc(), field + ".soc", /*required=*/true, out);
    if (!v1::DeviceState_IsValid(d.state())) {
      out->push_back({field + ".state", absl::StrCat("unknown device state ", d.state())});
    }
    CheckReading(d, field, out);
  }
}

// The registered device with this id and SoC, or nullptr.
const v1::DeviceInfo* Registered(const v1::RegisterAgentRequest& registered,
                                 const v1::DeviceInfo& d) {
  for (const auto& r : registered.devices()) {
    if (r.device_id() == d.device_id() && r.soc() == d.soc()) return &r;
  }
  return nullptr;
}

std::string NotRegistered(const v1::DeviceInfo& d) {
  return absl::StrCat("device ", d.device_id(), " (", d.soc().substr(0, kMaxAgentStringBytes),
                      ") is not a device this agent registered");
}

}  // namespace

Violations ValidateRegistration(const v1::RegisterAgentRequest& req) {
  Violations out;
  CheckString(req.host(), "host", /*required=*/true, &out);
  CheckString(req.boot_id(), "boot_id", /*required=*/true, &out);
  CheckString(req.instance_id(), "instance_id", /*required=*/true, &out);
  CheckString(req.slot(), "slot", /*required=*/false, &out);
  CheckString(req.version(), "version", /*required=*/false, &out);
  CheckString(req.msprof_version(), "msprof_version", /*required=*/false, &out);
  CheckString(req.cann_version(), "cann_version", /*required=*/false, &out);
  CheckString(req.driver_version(), "driver_version", /*required=*/false, &out);
  if (CheckCount(req.capabilities_size(), kMaxAgentCapabilities, "capabilities", &out)) {
    for (int i = 0; i < req.capabilities_size(); ++i) {
      CheckString(req.capabilities(i), absl::StrCat("capabilities[", i, "]"), false, &out);
    }
  }
  CheckLabels(req.labels(), &out);
  CheckDevices(req, &out);
  CheckCount(req.running_jobs_size(), kMaxAgentRunningJobs, "running_jobs", &out);
  return out;
}

Violations ValidateHeartbeat(const v1::Heartbeat& hb, const v1::RegisterAgentRequest& registered) {
  Violations out;
  CheckCount(hb.running_jobs_size(), kMaxAgentRunningJobs, "heartbeat.running_jobs", &out);
  if (!CheckCount(hb.devices_size(), kMaxAgentDevices, "heartbeat.devices", &out)) return out;
  for (int i = 0; i < hb.devices_size(); ++i) {
    const v1::DeviceInfo& d = hb.devices(i);
    const std::string field = absl::StrCat("heartbeat.devices[", i, "]");
    if (Registered(registered, d) == nullptr) {
      out.push_back({field, NotRegistered(d)});
    } else if (!v1::DeviceState_IsValid(d.state())) {
      out.push_back({field + ".state", absl::StrCat("unknown device state ", d.state())});
    }
    CheckReading(d, field, &out);
  }
  return out;
}

Violations ValidateOffer(const v1::LeaseJobRequest& req,
                         const v1::RegisterAgentRequest& registered) {
  Violations out;
  if (!CheckCount(req.free_devices_size(), kMaxAgentDevices, "free_devices", &out)) return out;
  std::set<int32_t> offered;
  for (int i = 0; i < req.free_devices_size(); ++i) {
    const v1::DeviceInfo& d = req.free_devices(i);
    const std::string field = absl::StrCat("free_devices[", i, "]");
    if (Registered(registered, d) == nullptr) {
      out.push_back({field, NotRegistered(d)});
    } else if (!offered.insert(d.device_id()).second) {
      out.push_back({field, absl::StrCat("device ", d.device_id(), " offered twice")});
    }
    CheckReading(d, field, &out);
  }
  return out;
}

AgentsViewer AgentsViewer::Of(const Principal& p, bool auth_required) {
  if (!auth_required) return {Scope::kEverything, ""};
  if (p.kind == PrincipalKind::kAgent) return {Scope::kOwnHost, p.name};
  return {Scope::kTeam, p.name};
}

v1::ListAgentsResponse ViewAgents(std::vector<AgentRecord> agents, const AgentsViewer& viewer) {
  v1::ListAgentsResponse resp;
  for (auto& record : agents) {
    v1::AgentStatus& a = record.status;
    if (viewer.scope == AgentsViewer::Scope::kOwnHost && a.host() != viewer.name) continue;
    if (viewer.scope == AgentsViewer::Scope::kTeam) {
      a.clear_host();
      a.clear_labels();
      for (int i = 0; i < a.devices_size(); ++i) {
        const bool own = i < static_cast<int>(record.job_teams.size()) &&
                         record.job_teams[static_cast<size_t>(i)] == viewer.name;
        if (!own) a.mutable_devices(i)->clear_job_id();
      }
    }
    *resp.add_agents() = std::move(a);
  }
  return resp;
}

SeenWrite SeenWrite::Of(const google::protobuf::RepeatedPtrField<v1::DeviceInfo>& devices,
                        int64_t now_ms) {
  SeenWrite w;
  w.at_ms = now_ms;
  for (const v1::DeviceInfo& d : devices) w.states[d.device_id()] = d.state();
  return w;
}

v1::DeviceState StoredDeviceState(v1::DeviceState reported) {
  return reported == v1::DEVICE_STATE_BUSY ? v1::DEVICE_STATE_IDLE : reported;
}

bool SeenWriteDue(const SeenWrite* last, const v1::Heartbeat& hb, int64_t now_ms,
                  int64_t refresh_ms) {
  if (last == nullptr) return true;
  // A clock stepped back counts as due: the write is what was always done.
  if (now_ms - last->at_ms >= refresh_ms || now_ms < last->at_ms) return true;
  for (const v1::DeviceInfo& d : hb.devices()) {
    auto it = last->states.find(d.device_id());
    if (it == last->states.end() || it->second != StoredDeviceState(d.state())) return true;
  }
  return false;
}

int64_t SeenRefreshMs(int64_t agent_retention_ms) {
  const int64_t refresh = std::chrono::milliseconds(kAgentSeenRefresh).count();
  return std::max<int64_t>(1, std::min(refresh, agent_retention_ms / 4));
}

}  // namespace npuperf::server
