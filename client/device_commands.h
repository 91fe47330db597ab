// The device-health commands of `npuperf` (docs/operations.md, "Device
// health"): `devices [--all]` lists the quarantined devices (with --all the
// released ones too: who released them and why); `devices release HOST:DEV
// --note TEXT` puts a quarantined device back in service (a team named by
// the server's --device-admin only); `devices canaries [HOST:DEV | --device
// DEV] [--soc S] [--limit N]` lists the canaries run on idle devices and how
// each compared with its SoC's other devices and its own history.
//
// Exit codes: 0 done, 1 an error (FAILED_PRECONDITION: the device is not
// quarantined; PERMISSION_DENIED: not a device admin), 2 usage (a bad
// HOST:DEV, an empty note), 5 unavailable.
#pragma once

#include <ostream>
#include <string>

#include "client/commands.h"

namespace npuperf::client {

int RunDevices(Session& s, bool include_released, std::ostream& out, std::ostream& err);

struct ReleaseArgs {
  std::string device;  // HOST:DEV
  std::string note;
};
int RunDeviceRelease(Session& s, const ReleaseArgs& args, std::ostream& out, std::ostream& err);

struct CanariesArgs {
  std::string device;  // HOST:DEV (device admins), or ""
  int device_id = -1;  // --device DEV (any host), -1: any
  std::string soc;
  int limit = 0;  // 0: the server's default (100)
};
int RunCanaries(Session& s, const CanariesArgs& args, std::ostream& out, std::ostream& err);

}  // namespace npuperf::client
