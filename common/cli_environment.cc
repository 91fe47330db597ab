#include "common/cli_environment.h"

#include <cstdlib>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"

namespace npuperf {
namespace {

const char* NonEmptyEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// CLI11 applies the file before the environment; this formatter leaves out
// the file's keys whose variable is set, so the environment wins over it.
class EnvironmentFirstConfig : public CLI::ConfigTOML {
 public:
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> read = CLI::ConfigTOML::from_config(input);
    std::erase_if(read, [](const CLI::ConfigItem& item) {
      return item.parents.empty() && NonEmptyEnv(EnvironmentNameOf("--" + item.name)) != nullptr;
    });
    return read;
  }
};

}  // namespace

std::string EnvironmentNameOf(const std::string& long_flag) {
  std::string name = long_flag.rfind("--", 0) == 0 ? long_flag.substr(2) : long_flag;
  return "NPUPERF_" + absl::AsciiStrToUpper(absl::StrReplaceAll(name, {{"-", "_"}}));
}

void AddEnvironmentAndConfig(CLI::App& app, const std::string& program) {
  for (CLI::Option* opt : app.get_options()) {
    // Hidden flags (--man-page) and those already naming a variable keep theirs.
    if (opt->get_lnames().empty() || !opt->get_envname().empty() || opt->get_group().empty()) {
      continue;
    }
    const std::string& name = opt->get_lnames().front();
    if (name == "help" || name == "version") continue;
    opt->envname(EnvironmentNameOf("--" + name));
  }
  const std::string variable = EnvironmentNameOf(program + "-config");
  const char* from_env = NonEmptyEnv(variable);
  // A file named by the variable must exist, as one named by --config.
  app.set_config(
      "--config", from_env != nullptr ? from_env : "",
      "TOML or INI file of flags: keys are flag names without the dashes (env " + variable + ")",
      /*config_required=*/from_env != nullptr);
  app.config_formatter(std::make_shared<EnvironmentFirstConfig>());
  app.allow_config_extras(CLI::config_extras_mode::error);
}

}  // namespace npuperf
