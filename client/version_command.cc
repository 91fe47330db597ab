#include "client/version_command.h"

#include <ostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "client/format.h"
#include "common/status_util.h"
#include "common/version.h"
#include "nlohmann/json.hpp"

namespace npuperf::client {

void AddVersionCommand(CLI::App& app, ServerCommand& chosen) {
  app.add_subcommand("version", "show the client's version and the server's")->callback([&chosen] {
    chosen = RunVersion;
  });
}

int RunVersion(Session& s, std::ostream& out, std::ostream& err) {
  const bool json = s.config().format == OutputFormat::kJson;
  if (!json) out << "client   " << VersionLine("npuperf") << "\n";
  v1::GetServerInfoResponse info;
  auto st = s.Call(&Queries::GetServerInfo, v1::GetServerInfoRequest(), &info);
  if (!st.ok()) {
    if (!json) err << "npuperf version: server " << s.config().server << " unreachable\n";
    return ReportError(st, s.config(), out, err);
  }
  if (json) {
    nlohmann::json j;
    j["client"] = {{"version", std::string(Version())}, {"commit", std::string(Commit())}};
    j["server"] = nlohmann::json::parse(ToJson(info));
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << "server   npuperf-server " << info.version() << " (commit " << info.commit()
      << "), schema " << info.schema_version() << " (" << info.database() << ")\n";
  out << "features " << absl::StrJoin(info.features(), ", ") << "\n";
  if (info.version() != Version()) {
    err << "npuperf version: the server runs " << info.version() << ", this client is " << Version()
        << "\n";
  }
  return kExitOk;
}

}  // namespace npuperf::client
