// `npuperf version`: the client's release and the server's (GetServerInfo).
//
//   client  npuperf 0.1.0 (commit 358cc9e1a2b3)
//   server  npuperf-server 0.1.0 (commit 358cc9e1a2b3), schema 7 (sqlite)
//   features watch, bundle_upload, ...
//
// With --format json: {"client": {"version", "commit"}, "server":
// GetServerInfoResponse}. Without a server the client line is printed, then
// the error (exit 5, unavailable, like every other command).
#pragma once

#include <iosfwd>

#include "client/cli.h"

namespace CLI {
class App;
}  // namespace CLI

namespace npuperf::client {

// Registers `version`; chosen runs RunVersion.
void AddVersionCommand(CLI::App& app, ServerCommand& chosen);

int RunVersion(Session& s, std::ostream& out, std::ostream& err);

}  // namespace npuperf::client
