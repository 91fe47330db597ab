#include "client/plumbing_commands.h"

#include <fstream>
#include <iostream>
#include <memory>

#include "CLI/CLI.hpp"
#include "client/config.h"
#include "common/bundle_tar.h"
#include "common/cli_docs.h"
#include "common/sha256.h"
#include "common/version.h"
#include "nlohmann/json.hpp"

namespace npuperf::client {

int RunBundlePack(const std::filesystem::path& dir, const std::filesystem::path& out_file,
                  std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::string> tar = PackBundle(dir, kMaxBundleBytes);
  if (!tar.ok()) {
    err << "npuperf bundle pack: " << absl::StatusCodeToString(tar.status().code()) << ": "
        << tar.status().message() << "\n";
    return kExitError;
  }
  if (!out_file.empty()) {
    std::ofstream file(out_file, std::ios::binary | std::ios::trunc);
    file.write(tar->data(), static_cast<std::streamsize>(tar->size()));
    if (!file.flush()) {
      err << "npuperf bundle pack: cannot write " << out_file.string() << "\n";
      return kExitError;
    }
  }
  out << Sha256Hex(*tar) << " " << tar->size() << "\n";
  return kExitOk;
}

int RunConfigShow(const ClientConfig& config, const std::string& config_file, std::ostream& out) {
  nlohmann::json j;
  j["config_file"] = ConfigFilePath(config_file);
  j["server"] = config.server;
  j["token_sha256"] = config.token.empty() ? "" : Sha256Hex(config.token);
  j["tls_ca"] = config.tls_ca;
  j["timeout_seconds"] = config.timeout.count();
  j["format"] = config.format == OutputFormat::kJson ? "json" : "text";
  out << j.dump(2) << "\n";
  return kExitOk;
}

void AddPlumbingCommands(CLI::App& app, ServerCommand& chosen, const std::string& config_file,
                         int& exit_code) {
  struct Args {
    std::filesystem::path dir, out_file;
  };
  auto a = std::make_shared<Args>();
  // An empty group hides a subcommand from --help (plumbing, docs/api.md).
  auto* bundle = app.add_subcommand("bundle", "operator bundles (plumbing)")->group("");
  bundle->require_subcommand(1);
  auto* pack = bundle->add_subcommand("pack", "pack DIR as submit does; print sha256 and size");
  pack->add_option("dir", a->dir, "operator directory")->required();
  pack->add_option("--out", a->out_file, "write the tar here");
  pack->callback(
      [a, &exit_code] { exit_code = RunBundlePack(a->dir, a->out_file, std::cout, std::cerr); });

  auto* config = app.add_subcommand("config", "client settings (plumbing)")->group("");
  config->require_subcommand(1);
  auto* show = config->add_subcommand("show", "the resolved settings as JSON (no call)");
  show->callback([&chosen, &config_file] {
    chosen = [&config_file](Session& s, std::ostream& out, std::ostream&) {
      return RunConfigShow(s.config(), config_file, out);
    };
  });
}

std::string ClientManPageFooter() {
  return R"(.SH ENVIRONMENT
NPUPERF_SERVER, NPUPERF_TOKEN, NPUPERF_TLS_CA, NPUPERF_TIMEOUT, NPUPERF_FORMAT: the settings
flags; NPUPERF_CONFIG: the config file. A flag wins over the environment, which wins over the file.
.SH FILES
.TP
~/.config/npuperf/config
key = value lines (server, token, tls_ca, timeout, format); $XDG_CONFIG_HOME is honoured.
.SH EXIT STATUS
0 ok (submit, watch: the collection succeeded; submit \-\-no\-wait: it was queued);
1 error, or a collection that failed or was cancelled; 2 usage error;
3 compare/regressions: a case regressed; 4 compare/regressions: no verdict;
5 the server is unavailable or the deadline passed; 6 not found.
.SH SEE ALSO
docs/api.md of the npuperf sources.
)";
}

void AddGeneratedDocsCommands(CLI::App& app, int& exit_code) {
  auto shell = std::make_shared<std::string>();
  auto* completion = app.add_subcommand("completion", "shell completion script")->group("");
  completion->add_option("shell", *shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  completion->callback([&app, shell, &exit_code] {
    std::cout << (*shell == "bash" ? BashCompletion(app, "npuperf")
                                   : ZshCompletion(app, "npuperf"));
    exit_code = kExitOk;
  });
  auto* man = app.add_subcommand("man", "the man page npuperf(1) (roff)")->group("");
  man->callback([&app, &exit_code] {
    std::cout << ManPage(app, "npuperf", 1, VersionLine("npuperf"), ClientManPageFooter());
    exit_code = kExitOk;
  });
}

}  // namespace npuperf::client
