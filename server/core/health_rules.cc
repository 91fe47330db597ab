#include "server/core/health_rules.h"

#include "absl/strings/str_cat.h"
#include "common/chip_health.h"
#include "common/input_rules.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/limits.h"

namespace npuperf::server {

using google::protobuf::util::TimeUtil;

std::optional<QuarantineRecord> QuarantineFor(const std::string& host, const v1::DeviceInfo& d,
                                              int64_t now_ms) {
  if (!d.has_reading()) return std::nullopt;
  const std::string reason = CriticalReason(d.reading());
  if (reason.empty()) return std::nullopt;
  QuarantineRecord q;
  q.host = host;
  q.device_id = d.device_id();
  q.soc = d.soc();
  q.reason = reason;
  q.source = kQuarantineByNpuSmi;
  q.since_ms = now_ms;
  return q;
}

bool ReadsHealthy(const v1::DeviceInfo& d) {
  return d.has_reading() && ClassifyHealth(d.reading().health()) == ChipHealth::kOk;
}

absl::Status CheckDeviceAdmin(const Principal& p, bool auth_required,
                              const std::set<std::string>& admins) {
  if (!auth_required) return absl::OkStatus();
  if (p.kind == PrincipalKind::kTeam && admins.contains(p.name)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat(p.kind == PrincipalKind::kAgent ? "an agent" : absl::StrCat("team ", p.name),
                   " may not release devices (the server's --device-admin names the teams "
                   "that may)"));
}

absl::Status CheckReleaseRequest(const v1::ReleaseDeviceRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.host().empty() || req.host().size() > kMaxAgentStringBytes) {
    bad.push_back({"host", absl::StrCat("must be 1..", kMaxAgentStringBytes, " bytes")});
  }
  if (req.device_id() < 0 || req.device_id() > kMaxAgentDeviceId) {
    bad.push_back({"device_id", absl::StrCat("must be in 0..", kMaxAgentDeviceId)});
  }
  if (const std::string problem = NoteProblem(req.note(), kMaxReleaseNoteBytes); !problem.empty()) {
    bad.push_back({"note", problem});
  }
  if (bad.empty()) return absl::OkStatus();
  return InvalidArgumentWithFields(bad);
}

void OverlayQuarantines(const std::vector<QuarantineRecord>& current,
                        std::vector<AgentRecord>* agents) {
  std::map<DeviceKey, const QuarantineRecord*> by_device;
  for (const QuarantineRecord& q : current) by_device[{q.host, q.device_id}] = &q;
  for (AgentRecord& a : *agents) {
    for (v1::DeviceStatus& d : *a.status.mutable_devices()) {
      auto it = by_device.find({a.status.host(), d.device_id()});
      if (it == by_device.end()) continue;
      d.set_state("quarantined");
      d.set_quarantine_reason(it->second->reason);
      *d.mutable_quarantined_since() = TimeUtil::MillisecondsToTimestamp(it->second->since_ms);
    }
  }
}

v1::DeviceQuarantine QuarantineToProto(const QuarantineRecord& q) {
  v1::DeviceQuarantine out;
  out.set_id(q.id);
  out.set_host(q.host);
  out.set_device_id(q.device_id);
  out.set_soc(q.soc);
  out.set_reason(q.reason);
  out.set_source(q.source);
  *out.mutable_since() = TimeUtil::MillisecondsToTimestamp(q.since_ms);
  if (q.source == "canary") {
    *out.mutable_suspect_since() = TimeUtil::MillisecondsToTimestamp(q.suspect_since_ms);
  }
  if (q.released_ms > 0) {
    *out.mutable_released_at() = TimeUtil::MillisecondsToTimestamp(q.released_ms);
    out.set_released_by(q.released_by);
    out.set_release_note(q.release_note);
  }
  return out;
}

}  // namespace npuperf::server
