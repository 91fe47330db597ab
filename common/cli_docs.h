// Shell completion and man pages generated from a program's CLI11 definitions
// (the same App tree that parses its command line), so that neither can go
// stale: `npuperf completion bash|zsh`, `npuperf man`, and the daemons'
// hidden --completion / --man-page flags print them.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace npuperf {

// A bash completion script for `program`: after each command path (a visible
// subcommand, nested ones too), its subcommands and flags (with the flags of
// the commands above when they fall through); files otherwise. Source it, or
// install it as /usr/share/bash-completion/completions/<program>.
std::string BashCompletion(const CLI::App& app, const std::string& program);

// The same for zsh (#compdef; install as a `_<program>` file on $fpath).
std::string ZshCompletion(const CLI::App& app, const std::string& program);

// A man page (roff, man(7) macros) of section 1 or 8: NAME, SYNOPSIS,
// DESCRIPTION, OPTIONS (with their environment variables), one subsection per
// visible command, and `footer` (roff, may be empty) at the end.
std::string ManPage(const CLI::App& app, const std::string& program, int section,
                    const std::string& version_line, const std::string& footer);

// The end of the daemons' man pages: where their settings come from.
inline constexpr char kDaemonManFooter[] = R"(.SH ENVIRONMENT
Every flag \-\-foo\-bar is also read from NPUPERF_FOO_BAR (shown with each flag above).
.SH FILES
\-\-config FILE (or NPUPERF_SERVER_CONFIG, NPUPERF_AGENT_CONFIG): a TOML or INI file whose keys are the flag
names without the dashes, [migrate] style sections for a command's flags. A flag on the command line wins over the
environment, which wins over the file.
.SH EXIT STATUS
0 ok (and \-\-help, \-\-version); 2 a usage error (a bad flag or value, named); another non\-zero
code: a failure at run time (logged).
.SH SEE ALSO
docs/operations.md of the npuperf sources.
)";

// The daemons' hidden flags: --completion bash|zsh and --man-page print the
// script or ManPage(app, program, section, version_line, footer) on out and
// end the parse with CLI::Success (exit 0), before any required flag is
// checked. Neither is read from the environment or a config file. app and
// out must outlive app.parse().
void AddGeneratedDocsFlags(CLI::App& app, const std::string& program, int section,
                           const std::string& version_line, const std::string& footer,
                           std::ostream& out);

}  // namespace npuperf
