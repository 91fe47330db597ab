#pragma once
// The device-health decisions (docs/operations.md, "Device health"), as pure
// functions: DeviceHealth (core/device_health.h) applies them to what agents
// report, ReadQueries and the gauges apply the overlay.
//
// Why these rules:
// - A chip that npu-smi rates "Alarm" or "Critical" (common/chip_health.h)
//   is quarantined at once: no verdict may rest on a chip the driver calls
//   faulty, and the agent already withholds it. A "Warning" is recorded with
//   the round (a covariate), not quarantined: minor alarms (a warm chip) are
//   common and a fleet that quarantined them would run out of devices.
// - A quarantine ends automatically only after the chip has read healthy for
//   kHealthyStreakToRelease without a break: one healthy reading of a chip
//   that flaps between OK and Critical must not put it back in service. The
//   streak is counted per server replica in memory; a restart starts it over
//   (the conservative side). A person may release it at once
//   (ReleaseDevice), audited with who and why; only the teams given with
//   --device-admin may, because a quarantine protects every team's verdicts.
// - Quarantine withholds new leases only. A job already running there
//   finishes (its agent reads the chip after the profiled runs and fails the
//   attempt, retryable, when the chip went critical meanwhile).
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/device_service.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/core/auth.h"
#include "server/store/records.h"

namespace npuperf::server {

// QuarantineRecord::source values.
inline constexpr char kQuarantineByNpuSmi[] = "npu_smi";
inline constexpr char kQuarantineByCanary[] = "canary";
// The actor of an automatic release.
inline constexpr char kHealthSystemActor[] = "npuperf";
// How long a quarantined chip must read healthy before it is released.
inline constexpr std::chrono::minutes kHealthyStreakToRelease{10};

// A device of the fleet: (host, device id).
using DeviceKey = std::pair<std::string, int32_t>;

// The quarantine a device's report asks for (source npu_smi, the reason
// naming the status and error code), or nullopt when its reading is not
// critical (or absent).
std::optional<QuarantineRecord> QuarantineFor(const std::string& host, const v1::DeviceInfo& d,
                                              int64_t now_ms);

// Whether a report says the chip reads healthy now: a reading whose Health
// Status is "OK" (a Warning, a missing or unread status is not).
bool ReadsHealthy(const v1::DeviceInfo& d);

// Whether p may release devices: any caller when authentication is off
// (development); else a team named by --device-admin. PERMISSION_DENIED
// naming the flag otherwise (agents never may).
absl::Status CheckDeviceAdmin(const Principal& p, bool auth_required,
                              const std::set<std::string>& admins);

// A release request: host 1..kMaxAgentStringBytes, device_id
// 0..kMaxAgentDeviceId, a note of at most kMaxReleaseNoteBytes of UTF-8 text
// (tab and newline the only control characters); INVALID_ARGUMENT naming
// each bad field.
absl::Status CheckReleaseRequest(const v1::ReleaseDeviceRequest& req);

// An agents listing as people see it: every device with a current
// quarantine reads state "quarantined", with the reason and since when.
void OverlayQuarantines(const std::vector<QuarantineRecord>& current,
                        std::vector<AgentRecord>* agents);

// The wire form of a quarantine.
v1::DeviceQuarantine QuarantineToProto(const QuarantineRecord& q);

}  // namespace npuperf::server
