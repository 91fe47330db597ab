// The command line of npuperf-server: its flags (also NPUPERF_<FLAG> and
// --config, common/cli_environment.h) and subcommands, parsed into a Command
// that main.cc carries out. Pure of side effects but printing CLI11's help,
// version and usage errors.
#pragma once

#include <optional>
#include <string>

#include "server/core/auth.h"
#include "server/server_options.h"

namespace npuperf::server {

// What the command line asks for.
struct Command {
  enum class Action { kServe, kMigrate, kTokenHash, kTokenCreate };
  Action action = Action::kServe;
  ServerOptions options;                            // kServe
  std::string db;                                   // kMigrate, kTokenCreate
  PrincipalKind token_kind = PrincipalKind::kTeam;  // kTokenCreate
  std::string token_name;                           // kTokenCreate
};

// Parses argv into *cmd; returns the exit code when CLI11 already answered
// (help, or a usage error), nullopt to go on.
std::optional<int> ParseCommandLine(int argc, char** argv, Command* cmd);

}  // namespace npuperf::server
