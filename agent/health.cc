#include "agent/health.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npuperf::agent {
namespace {

// JSON string literal; agent ids and reasons are ASCII, but quote safely anyway.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

HealthReport DecideHealth(const HealthInputs& in, Clock::MonotonicTime now) {
  using std::chrono::milliseconds;
  const milliseconds limit = in.heartbeat * kHealthyHeartbeats;
  std::optional<milliseconds> since;
  if (in.last_contact) since = std::chrono::duration_cast<milliseconds>(now - *in.last_contact);
  std::string reason;
  if (!in.registered) {
    reason = "not registered with the server";
  } else if (!since) {
    reason = "no contact with the server yet";
  } else if (*since > limit) {
    reason = absl::StrCat("no session contact for ", since->count(), " ms (limit ", limit.count(),
                          " ms = ", kHealthyHeartbeats, " heartbeats)");
  }
  HealthReport r;
  r.healthy = reason.empty();
  r.http_status = r.healthy ? 200 : 503;
  r.json = absl::StrCat("{\"status\":", r.healthy ? "\"ok\"" : "\"degraded\"",
                        ",\"registered\":", in.registered ? "true" : "false",
                        ",\"agent_id\":", Quote(in.agent_id), ",\"devices\":", in.devices,
                        ",\"running_jobs\":", in.running_jobs, ",\"spool_depth\":", in.spool_depth,
                        ",\"last_contact_ms\":", since ? absl::StrCat(since->count()) : "null",
                        r.healthy ? "" : absl::StrCat(",\"reason\":", Quote(reason)), "}");
  return r;
}

}  // namespace npuperf::agent
