// Client settings from flags, environment and a config file, in that order
// of precedence (a flag beats NPUPERF_*, which beats the file).
//
// The file holds `key = value` lines; `#` starts a comment. Keys: server,
// token, tls_ca, timeout (seconds), format (text|json). It is read from
// --config, else $NPUPERF_CONFIG, else $XDG_CONFIG_HOME/npuperf/config (or
// ~/.config/npuperf/config) when that exists.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/commands.h"

namespace npuperf::client {

using Settings = std::map<std::string, std::string>;

// Parses a config file; INVALID_ARGUMENT naming the file, line and key for
// unknown keys or malformed lines, NOT_FOUND when it cannot be read.
absl::StatusOr<Settings> ReadConfigFile(const std::string& path);

// The config file to read: explicit path, else NPUPERF_CONFIG, else the
// per-user default when it exists; empty for none.
std::string ConfigFilePath(const std::string& explicit_path);

// Settings from the environment (NPUPERF_SERVER, NPUPERF_TOKEN,
// NPUPERF_TLS_CA, NPUPERF_TIMEOUT, NPUPERF_FORMAT), empty ones left out.
Settings SettingsFromEnvironment();

// Fills `out` from flags, then env, then file; defaults stay where none
// says anything. INVALID_ARGUMENT naming the setting for bad values.
absl::Status ResolveConfig(const Settings& flags, const Settings& env, const Settings& file,
                           ClientConfig* out);

// The whole lookup: the config file named by ConfigFilePath(config_file)
// (when any), the environment, then ResolveConfig over flags, env and file.
// The errors of ReadConfigFile and ResolveConfig.
absl::StatusOr<ClientConfig> LoadConfig(const Settings& flags, const std::string& config_file);

}  // namespace npuperf::client
