// The command line of `npuperf` (CLI11). cli.cc: the settings flags, help,
// and what a failed parse prints. One function per group of server commands
// registers its subcommands, their flags and help: cli_collections.cc
// (collections and rounds), cli_compare.cc (comparisons); main.cc calls the
// groups in order. Parsing a subcommand only chooses what to run; main.cc runs
// the choice once the settings are resolved, because the Session needs them.
// The offline commands (summarize, list-op-names) are registered by
// offline_commands.h.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <string>

#include "client/commands.h"
#include "client/compare_commands.h"
#include "client/config.h"
#include "client/report_commands.h"

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace npuperf::client {

// A parsed server command, bound to its arguments: runs against a connected
// session and returns the exit code.
using ServerCommand = std::function<int(Session& s, std::ostream& out, std::ostream& err)>;

// Makes `run` the chosen command when cmd is parsed (`chosen` must outlive
// app.parse()).
void Choose(CLI::App* cmd, ServerCommand& chosen, ServerCommand run);

// --timeout D (<n>s|m|h|d) of a command that waits (confirm, confirmation,
// bisect, bisection, timeline): how long it waits; help names the default.
void AddWaitTimeout(CLI::App* cmd, std::chrono::seconds& timeout, const std::string& help);

// --server, --token, --tls-ca, --format and --timeout into flags (the keys of
// config.h), --config into config_file. Both must outlive app.parse(). Call it
// before adding the commands: it makes every command fall through to these
// flags, so they are accepted anywhere on the line (`npuperf list --format
// json`). --format is one option wherever it is written: a command with a
// --format of its own (compare, regressions: also junit, markdown, html;
// summarize: md) gets the value written before it too (`npuperf --format
// junit compare A B`), checked by its own rule; any other command takes text
// or json, and another value is a ValidationError naming the commands it goes
// with. Its own --format after the command wins over a text or json before it.
void AddSettingFlags(CLI::App& app, Settings& flags, std::string& config_file);

// `npuperf help [COMMAND...]`: the help of the app, or of that command, on
// out (exit_code 0); an unknown command as UnknownCommand (exit_code 2).
// out, err and exit_code must outlive app.parse().
void AddHelpCommand(CLI::App& app, std::ostream& out, std::ostream& err, int& exit_code);

// What main.cc does with a failed parse: --help and --version print (exit
// 0); a missing or unknown command prints the commands and the nearest one
// (UnknownCommand), also with --help (`npuperf bogus --help`, exit 2); any
// other error is CLI11's message naming the flag. Returns the exit code: 0,
// or kExitUsage.
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
// submit, discover, get, watch, cancel, list (cli_collections.cc).
void AddCollectionCommands(CLI::App& app, ServerCommand& chosen);
// round, rounds, history, agents (cli_collections.cc).
void AddRoundCommands(CLI::App& app, ServerCommand& chosen);
// compare, regressions, triage, confirm, confirmation, calibrate, noise,
// baseline pin, report (cli_compare.cc).
void AddCompareCommands(CLI::App& app, ServerCommand& chosen);

// report --style: text, md or json, and --format json wins (docs/api.md).
ReportStyle ReportStyleOf(const std::string& style, OutputFormat format);

}  // namespace npuperf::client
