#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"

namespace npuperf::agent {

// What the agent knows about itself when /healthz is asked (Agent::Health).
struct HealthInputs {
  // RegisterAgent succeeded and no re-registration is pending.
  bool registered = false;
  std::string agent_id;
  // Last message from the server on the session stream (or the registration).
  // Default: never.
  std::optional<Clock::MonotonicTime> last_contact;
  // Heartbeat period the server asked for. Default: 1 s.
  std::chrono::milliseconds heartbeat{1000};
  int devices = 0;
  int running_jobs = 0;
  int64_t spool_depth = 0;
};

// The answer of GET /healthz.
struct HealthReport {
  bool healthy = false;
  int http_status = 503;  // 200 when healthy
  // {"status":"ok"|"degraded","registered":..,"agent_id":..,"devices":..,
  //  "running_jobs":..,"spool_depth":..,"last_contact_ms":..|null[,"reason":..]}
  std::string json;
};

// Session contact older than this many heartbeats makes the agent degraded.
inline constexpr int kHealthyHeartbeats = 3;

// Healthy = registered and the session heard from the server within
// kHealthyHeartbeats heartbeat periods of `now`. Pure; thread-safe.
HealthReport DecideHealth(const HealthInputs& in, Clock::MonotonicTime now);

}  // namespace npuperf::agent
