// Environment variables and a config file for the daemons' command lines
// (npuperf-server, npuperf-agent), on CLI11's own machinery.
//
// Every long flag of the app itself, --foo-bar, is also read from
// NPUPERF_FOO_BAR (a flag that already names its variable keeps it), and
// --config FILE (or $NPUPERF_<PROGRAM>_CONFIG, e.g. NPUPERF_SERVER_CONFIG)
// reads a TOML or INI file whose keys are the flag names without the dashes
// (`max-uploads = 8`, `label = ["a=b", "c=d"]`, a `[migrate]` section for a
// subcommand's flags). Precedence: a flag on the command line, then the
// environment, then the file. A key the program does not know, or a value
// it refuses, is an error naming it; so is a named file that cannot be read.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace npuperf {

// The environment variable of a long flag: "--max-uploads" →
// "NPUPERF_MAX_UPLOADS".
std::string EnvironmentNameOf(const std::string& long_flag);

// Adds the variables and --config to app (call it after every flag is
// defined, before app.parse()). `program` is "server" or "agent": the
// config file's variable is NPUPERF_SERVER_CONFIG or NPUPERF_AGENT_CONFIG.
void AddEnvironmentAndConfig(CLI::App& app, const std::string& program);

}  // namespace npuperf
