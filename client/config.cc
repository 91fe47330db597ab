#include "client/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace npuperf::client {
namespace {

// Setting name → environment variable.
const std::map<std::string, std::string>& Known() {
  static const auto* known = new std::map<std::string, std::string>{{"server", "NPUPERF_SERVER"},
                                                                    {"token", "NPUPERF_TOKEN"},
                                                                    {"tls_ca", "NPUPERF_TLS_CA"},
                                                                    {"timeout", "NPUPERF_TIMEOUT"},
                                                                    {"format", "NPUPERF_FORMAT"}};
  return *known;
}

}  // namespace

absl::StatusOr<Settings> ReadConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("config file ", path, ": cannot be read"));
  Settings out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const std::string text(absl::StripAsciiWhitespace(line));
    if (text.empty()) continue;
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", n, ": want key = value"));
    }
    std::string key(absl::StripAsciiWhitespace(text.substr(0, eq)));
    std::string value(absl::StripAsciiWhitespace(text.substr(eq + 1)));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (Known().count(key) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", n, ": unknown key '", key,
                                                     "' (server, token, tls_ca, timeout, format)"));
    }
    out[key] = value;
  }
  return out;
}

std::string ConfigFilePath(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("NPUPERF_CONFIG"); env != nullptr && *env != '\0') return env;
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::filesystem::path(home) / ".config";
  } else {
    return "";
  }
  std::error_code ec;
  const auto path = dir / "npuperf" / "config";
  return std::filesystem::exists(path, ec) ? path.string() : "";
}

Settings SettingsFromEnvironment() {
  Settings out;
  for (const auto& [key, var] : Known()) {
    const char* v = std::getenv(var.c_str());
    if (v != nullptr && *v != '\0') out[key] = v;
  }
  return out;
}

absl::Status ResolveConfig(const Settings& flags, const Settings& env, const Settings& file,
                           ClientConfig* out) {
  auto pick = [&](const std::string& key) -> const std::string* {
    for (const Settings* s : {&flags, &env, &file}) {
      auto it = s->find(key);
      if (it != s->end()) return &it->second;
    }
    return nullptr;
  };
  if (const std::string* v = pick("server")) out->server = *v;
  if (const std::string* v = pick("token")) out->token = *v;
  if (const std::string* v = pick("tls_ca")) {
    // A CA that cannot be read must never fall back to the system roots.
    std::ifstream ca(*v);
    std::string pem((std::istreambuf_iterator<char>(ca)), std::istreambuf_iterator<char>());
    if (!ca || pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("tls_ca '", *v, "': not a readable PEM certificate file"));
    }
    out->tls_ca = *v;
  }
  if (const std::string* v = pick("format")) {
    if (*v != "text" && *v != "json") {
      return absl::InvalidArgumentError(absl::StrCat("format '", *v, "': want text or json"));
    }
    out->format = *v == "json" ? OutputFormat::kJson : OutputFormat::kText;
  }
  if (const std::string* v = pick("timeout")) {
    int seconds = 0;
    if (!absl::SimpleAtoi(*v, &seconds) || seconds <= 0 || seconds > 86400) {
      return absl::InvalidArgumentError(absl::StrCat("timeout '", *v, "': want 1..86400 seconds"));
    }
    out->timeout = std::chrono::seconds(seconds);
  }
  return absl::OkStatus();
}

absl::StatusOr<ClientConfig> LoadConfig(const Settings& flags, const std::string& config_file) {
  Settings file;
  if (const std::string path = ConfigFilePath(config_file); !path.empty()) {
    auto read = ReadConfigFile(path);
    if (!read.ok()) return read.status();
    file = *std::move(read);
  }
  ClientConfig config;
  if (absl::Status st = ResolveConfig(flags, SettingsFromEnvironment(), file, &config); !st.ok()) {
    return st;
  }
  return config;
}

}  // namespace npuperf::client
