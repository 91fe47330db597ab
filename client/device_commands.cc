#include "client/device_commands.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/format.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::client {
namespace {

using google::protobuf::util::TimeUtil;

std::string When(const google::protobuf::Timestamp& t) {
  return t.seconds() == 0 && t.nanos() == 0 ? "-" : TimeUtil::ToString(t);
}

void PrintQuarantines(const v1::ListQuarantinesResponse& resp, std::ostream& out) {
  if (resp.quarantines_size() == 0) {
    out << "no device is quarantined\n";
    return;
  }
  for (const v1::DeviceQuarantine& q : resp.quarantines()) {
    const std::string device = q.host().empty() ? absl::StrCat("device ", q.device_id())
                                                : absl::StrCat(q.host(), ":", q.device_id());
    out << absl::StrFormat("%-24s %-16s %-8s since %s: %s\n", device, q.soc(), q.source(),
                           When(q.since()), q.reason());
    if (q.has_released_at()) {
      out << "  released " << When(q.released_at()) << " by " << q.released_by();
      if (!q.release_note().empty()) out << ": " << q.release_note();
      out << "\n";
    }
  }
}

// "h1:3" -> (h1, 3); the host may hold ':' (the last one splits).
absl::Status ParseDevice(const std::string& text, std::string* host, int32_t* device) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(text.substr(colon + 1), device) || *device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device '", text, "': want HOST:DEV, e.g. npu-host-3:5 (npuperf agents)"));
  }
  *host = text.substr(0, colon);
  return absl::OkStatus();
}

void PrintCanaries(const v1::ListCanariesResponse& resp, std::ostream& out) {
  if (resp.canaries_size() == 0) {
    out << "no canary has run (the server runs them with --canary-interval)\n";
    return;
  }
  for (const v1::Canary& c : resp.canaries()) {
    const std::string device = c.host().empty() ? absl::StrCat("device ", c.device_id())
                                                : absl::StrCat(c.host(), ":", c.device_id());
    out << absl::StrFormat("%-6d %-20s %-14s %-12s %s", c.id(), When(c.created_at()), device,
                           c.state(), c.soc());
    if (c.kernel_us() > 0) out << absl::StrFormat("  %.2f us", c.kernel_us());
    if (c.reference_us() > 0) {
      out << absl::StrFormat(" vs %s %.2f us (%+.1f %%, threshold %.1f %%)", c.reference(),
                             c.reference_us(), c.excess_pct(), c.threshold_pct());
    }
    out << "\n";
    if (!c.reason().empty() && c.state() != "pass") out << "       " << c.reason() << "\n";
  }
  if (!resp.next_page_token().empty()) out << "(more: --limit to see more)\n";
}

absl::Status NoDeviceService() {
  return absl::UnavailableError("this session has no DeviceService channel");
}

}  // namespace

int RunDevices(Session& s, bool include_released, std::ostream& out, std::ostream& err) {
  if (s.devices() == nullptr) return ReportError(NoDeviceService(), s.config(), out, err);
  v1::ListQuarantinesRequest req;
  req.set_include_released(include_released);
  v1::ListQuarantinesResponse resp;
  const absl::Status st = s.Call(&Devices::ListQuarantines, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  if (s.config().format == OutputFormat::kJson) {
    out << ToJson(resp) << "\n";
  } else {
    PrintQuarantines(resp, out);
  }
  return kExitOk;
}

int RunDeviceRelease(Session& s, const ReleaseArgs& args, std::ostream& out, std::ostream& err) {
  v1::ReleaseDeviceRequest req;
  int32_t device = 0;
  if (absl::Status bad = ParseDevice(args.device, req.mutable_host(), &device); !bad.ok()) {
    return ReportUsage("devices release", std::string(bad.message()), s.config(), out, err);
  }
  if (args.note.empty()) {
    return ReportUsage("devices release",
                       "--note: say why the device may take jobs again (kept with it)", s.config(),
                       out, err);
  }
  if (s.devices() == nullptr) return ReportError(NoDeviceService(), s.config(), out, err);
  req.set_device_id(device);
  req.set_note(args.note);
  v1::ReleaseDeviceResponse resp;
  const absl::Status st = s.Call(&Devices::ReleaseDevice, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  if (s.config().format == OutputFormat::kJson) {
    out << ToJson(resp) << "\n";
  } else {
    out << "released " << args.device << " (quarantined since " << When(resp.quarantine().since())
        << ": " << resp.quarantine().reason() << ")\n";
  }
  return kExitOk;
}

int RunCanaries(Session& s, const CanariesArgs& args, std::ostream& out, std::ostream& err) {
  v1::ListCanariesRequest req;
  if (!args.device.empty()) {
    int32_t device = 0;
    if (absl::Status bad = ParseDevice(args.device, req.mutable_host(), &device); !bad.ok()) {
      return ReportUsage("devices canaries", std::string(bad.message()), s.config(), out, err);
    }
    req.set_device_id(device);
  } else if (args.device_id >= 0) {
    req.set_device_id(args.device_id);
  }
  req.set_soc(args.soc);
  req.set_limit(args.limit);
  if (s.devices() == nullptr) return ReportError(NoDeviceService(), s.config(), out, err);
  v1::ListCanariesResponse resp;
  const absl::Status st = s.Call(&Devices::ListCanaries, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  if (s.config().format == OutputFormat::kJson) {
    out << ToJson(resp) << "\n";
  } else {
    PrintCanaries(resp, out);
  }
  return kExitOk;
}

}  // namespace npuperf::client
