// npuperf: the command-line client.
//
//   npuperf [--server HOST:PORT] [--token T] [--format text|json] <command> ...
//
// Settings: flags, then NPUPERF_* environment, then the config file
// (client/config.h). Exit codes (docs/api.md): 0 ok, 1 error (or a
// collection that did not succeed), 2 usage error, 5 server unavailable or
// deadline exceeded, 6 not found; compare and regressions add 3 (regressed)
// and 4 (nothing comparable or insufficient evidence).
//
// Wiring only: the commands are registered by client/cli.h and
// client/offline_commands.h; this file creates the one RealClock and the
// session.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "client/artifact_commands.h"
#include "client/cli.h"
#include "client/offline_commands.h"
#include "client/plumbing_commands.h"
#include "client/terminal_text.h"
#include "client/version_command.h"
#include "common/bundle_tar.h"
#include "common/clock.h"
#include "common/version.h"

int main(int argc, char** argv) {
  using namespace npuperf::client;
  npuperf::UseUtf8PathNames();  // bundles may hold non-ASCII names (libarchive reads LC_CTYPE)
  CLI::App app{
      "npuperf: submit NPU operator profiling to npuperf-server, follow it, read the evidence"};
  app.require_subcommand(1);
  app.set_version_flag("--version", npuperf::VersionLine("npuperf"));
  Settings flags;
  std::string config_file;
  AddSettingFlags(app, flags, config_file);
  ServerCommand command;
  AddCollectionCommands(app, command);
  AddRoundCommands(app, command);
  AddCompareCommands(app, command);
  AddArtifactCommands(app, command);  // artifacts, fetch
  AddVersionCommand(app, command);
  int exit_code = kExitOk;
  AddOfflineCommands(app, exit_code);                         // they run inside app.parse()
  AddPlumbingCommands(app, command, config_file, exit_code);  // hidden: bundle pack, config show
  AddHelpCommand(app, std::cout, std::cerr, exit_code);
  AddGeneratedDocsCommands(app, exit_code);  // hidden: completion bash|zsh, man

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e, std::cout, std::cerr);
  }
  absl::StatusOr<ClientConfig> config = LoadConfig(flags, config_file);
  if (!config.ok()) {
    std::cerr << "npuperf: " << config.status().message() << "\n";
    return kExitUsage;
  }
  if (!command) return exit_code;
  config->progress = ::isatty(STDERR_FILENO) ? ProgressStyle::kTerminal : ProgressStyle::kLines;
  config->terminal_columns = TerminalColumns(STDERR_FILENO, std::getenv("COLUMNS"));
  npuperf::RealClock clock;
  return command(*Session::Connect(*config, clock), std::cout, std::cerr);
}
