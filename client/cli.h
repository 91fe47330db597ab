// The command line of `npuperf`'s server commands (CLI11): one function per
// command group registers its subcommands, their flags and help. Parsing a
// subcommand only chooses what to run; main.cc runs the choice once the
// settings are resolved, because the Session needs them. The offline commands
// (summarize, list-op-names) are registered by offline_commands.h.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "client/commands.h"
#include "client/compare_commands.h"
#include "client/config.h"

namespace CLI {
class App;
}  // namespace CLI

namespace npuperf::client {

// A parsed server command, bound to its arguments: runs against a connected
// session and returns the exit code.
using ServerCommand = std::function<int(Session& s, std::ostream& out, std::ostream& err)>;

// --server, --token, --tls-ca, --format and --timeout into flags (the keys of
// config.h), --config into config_file. Both must outlive app.parse().
void AddSettingFlags(CLI::App& app, Settings& flags, std::string& config_file);

// The groups. When one of their subcommands is parsed, `chosen` is set to it;
// it stays empty otherwise. `chosen` must outlive app.parse().
// submit, get, watch, cancel, list.
void AddCollectionCommands(CLI::App& app, ServerCommand& chosen);
// round, rounds, agents.
void AddRoundCommands(CLI::App& app, ServerCommand& chosen);
// compare, regressions, baseline pin, report.
void AddCompareCommands(CLI::App& app, ServerCommand& chosen);

// report --style: text, md or json, and --format json wins (docs/api.md).
ReportStyle ReportStyleOf(const std::string& style, OutputFormat format);

}  // namespace npuperf::client
