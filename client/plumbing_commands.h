// Plumbing subcommands of `npuperf`, hidden from --help: they expose what the
// CLI does internally so that other clients (the Python package, python/) can
// be checked against it byte for byte.
//
//   npuperf bundle pack DIR [--out FILE]   the operator bundle of DIR (common/bundle_tar.h):
//                                          prints "<sha256> <bytes>"; the tar to FILE when given
//   npuperf config show                    the resolved settings (client/config.h) as JSON
//   npuperf completion bash|zsh            the shell completion script (common/cli_docs.h)
//   npuperf man                            the man page npuperf(1), roff
//
// Exit codes: 0 ok, 1 the bundle cannot be packed or written, 2 usage.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "client/cli.h"

namespace CLI {
class App;
}  // namespace CLI

namespace npuperf::client {

// Registers `bundle pack` (offline: runs inside app.parse() and sets
// exit_code, like the offline commands) and `config show` (a server command
// that makes no call; it prints the settings of config_file, the environment
// and the flags). app, chosen, config_file and exit_code must outlive
// app.parse().
void AddPlumbingCommands(CLI::App& app, ServerCommand& chosen, const std::string& config_file,
                         int& exit_code);

// Registers `completion bash|zsh` and `man`, which print what common/cli_docs.h
// makes of app's whole tree (inside app.parse(), exit_code 0).
void AddGeneratedDocsCommands(CLI::App& app, int& exit_code);

// The end of npuperf(1): ENVIRONMENT, FILES, EXIT STATUS (docs/api.md).
std::string ClientManPageFooter();

// `bundle pack`: packs dir as PackBundle does (the 64 MiB limit of submit),
// writes the tar to out_file unless it is empty, prints "<sha256> <bytes>\n".
int RunBundlePack(const std::filesystem::path& dir, const std::filesystem::path& out_file,
                  std::ostream& out, std::ostream& err);

// `config show`: {"config_file", "server", "token_sha256" (empty without a
// token; never the token itself), "tls_ca", "timeout_seconds", "format"}.
int RunConfigShow(const ClientConfig& config, const std::string& config_file, std::ostream& out);

}  // namespace npuperf::client
