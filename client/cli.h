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
class ParseError;
}  // namespace CLI

namespace npuperf::client {

// A parsed server command, bound to its arguments: runs against a connected
// session and returns the exit code.
using ServerCommand = std::function<int(Session& s, std::ostream& out, std::ostream& err)>;

// --server, --token, --tls-ca, --format and --timeout into flags (the keys of
// config.h), --config into config_file. Both must outlive app.parse(). Call it
// before adding the commands: it makes every command fall through to these
// flags, so they are accepted anywhere on the line (`npuperf list --format
// json`); a command's own flag of the same name (compare --format) wins after
// that command.
void AddSettingFlags(CLI::App& app, Settings& flags, std::string& config_file);

// `npuperf help [COMMAND...]`: the help of the app, or of that command, on
// out (exit_code 0); an unknown command as UnknownCommand (exit_code 2).
// out, err and exit_code must outlive app.parse().
void AddHelpCommand(CLI::App& app, std::ostream& out, std::ostream& err, int& exit_code);

// What main.cc does with a failed parse: --help and --version print (exit
// 0); a missing or unknown command prints the commands and the nearest one
// (UnknownCommand); any other error is CLI11's message naming the flag.
// Returns the exit code: 0, or kExitUsage.
int ReportParseError(CLI::App& app, const CLI::ParseError& e, std::ostream& out, std::ostream& err);

// "npuperf: unknown command 'sumbit' (did you mean 'submit'?)" (the
// suggestion only when one is within edit distance 2), then the visible
// commands of app with their descriptions. Empty `word`: "a command is
// required".
void UnknownCommand(const CLI::App& app, const std::string& word, std::ostream& err);

// The optimal-string-alignment distance of a and b (insertions, deletions,
// substitutions and adjacent transpositions each cost 1).
int EditDistance(const std::string& a, const std::string& b);

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
