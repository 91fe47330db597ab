#include "client/cli.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/duration_text.h"

namespace npuperf::client {
namespace {

// The formats every command prints (OutputFormat); the settings take only
// these.
bool IsSettingFormat(const std::string& f) { return f == "text" || f == "json"; }

// The deepest command parsed (app itself when none).
CLI::App* ChosenCommand(CLI::App& app) {
  CLI::App* at = &app;
  for (auto subs = app.get_subcommands(); !subs.empty(); subs = at->get_subcommands()) {
    at = subs.front();
  }
  return at;
}

// Whether cmd has a --format of its own that accepts value.
bool TakesFormat(CLI::App* cmd, const std::string& value) {
  CLI::Option* own = cmd->get_option_no_throw("--format");
  if (own == nullptr) return false;
  try {
    std::string v = value;
    return (*own->get_validator())(v).empty();
  } catch (const CLI::OptionNotFound&) {  // no validator: any value
    return true;
  }
}

// Why `at` cannot print in `value`, and which commands can: "--format junit:
// npuperf list prints text or json; junit goes with compare, regressions".
std::string FormatPlace(CLI::App& app, const CLI::App* at, const std::string& value) {
  std::string where;
  for (CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) {
    if (!c->get_group().empty() && TakesFormat(c, value)) {
      where += (where.empty() ? "" : ", ") + c->get_name();
    }
  }
  std::string why = "--format " + value + ": npuperf " + at->get_name();
  why += at->get_option_no_throw("--format") != nullptr ? " was given its own --format too"
                                                        : " prints text or json";
  return why + (where.empty() ? "" : "; " + value + " goes with " + where);
}

// The one --format. Written before the command, or after one without a
// --format of its own, it is the global setting; when the chosen command has
// a --format of its own (compare, regressions, summarize) and it was not
// given, the value is that command's, checked against what it takes.
void RouteFormat(CLI::App& app, Settings& flags) {
  const auto given = flags.find("format");
  if (given == flags.end()) return;
  const std::string value = given->second;
  CLI::App* at = ChosenCommand(app);
  CLI::Option* own = at == &app ? nullptr : at->get_option_no_throw("--format");
  if (own == nullptr || own->count() > 0) {
    if (!IsSettingFormat(value)) throw CLI::ValidationError(FormatPlace(app, at, value));
    return;
  }
  own->add_result(value);
  own->run_callback();  // its check names the formats it takes
  if (!IsSettingFormat(value)) flags.erase("format");
}

}  // namespace

void AddWaitTimeout(CLI::App* cmd, std::chrono::seconds& timeout, const std::string& help) {
  cmd->add_option_function<std::string>(
      "--timeout",
      [&timeout](const std::string& d) {
        auto parsed = ParseDurationText(d);
        if (!parsed.ok()) throw CLI::ValidationError("--timeout", "want <n>s|m|h|d");
        timeout = std::chrono::duration_cast<std::chrono::seconds>(*parsed);
      },
      help);
}

void Choose(CLI::App* cmd, ServerCommand& chosen, ServerCommand run) {
  cmd->callback([&chosen, run = std::move(run)] { chosen = run; });
}

void AddSettingFlags(CLI::App& app, Settings& flags, std::string& config_file) {
  app.fallthrough();  // inherited by the commands added after this
  auto setting = [&](const char* flag, const char* key, const char* help) {
    app.add_option_function<std::string>(
        flag, [&flags, key](const std::string& v) { flags[key] = v; }, help);
  };
  setting("--server", "server", "server HOST:PORT (env NPUPERF_SERVER; default 127.0.0.1:50051)");
  setting("--token", "token", "bearer token (env NPUPERF_TOKEN)");
  setting("--tls-ca", "tls_ca", "CA certificate (PEM) of a TLS server (env NPUPERF_TLS_CA)");
  setting("--format", "format",
          "output format: text or json (env NPUPERF_FORMAT); before or after the command, also "
          "the command's own formats (compare --format junit)");
  setting("--timeout", "timeout",
          "deadline of each call, seconds (env NPUPERF_TIMEOUT; default 30)");
  app.add_option("--config", config_file,
                 "config file (env NPUPERF_CONFIG; default ~/.config/npuperf/config)");
  // After every option's callback, before the commands' callbacks.
  app.parse_complete_callback([&app, &flags] { RouteFormat(app, flags); });
}

void AddHelpCommand(CLI::App& app, std::ostream& out, std::ostream& err, int& exit_code) {
  auto topic = std::make_shared<std::vector<std::string>>();
  auto* help = app.add_subcommand("help", "the commands, or the flags of one: help [COMMAND...]");
  help->add_option("command", *topic, "a command, e.g. submit or baseline pin");
  help->callback([&app, topic, &out, &err, &exit_code] {
    const CLI::App* at = &app;
    for (const std::string& word : *topic) {
      const auto subs = at->get_subcommands(
          [&word](const CLI::App* c) { return c->get_name() == word && !c->get_group().empty(); });
      if (subs.empty()) {
        UnknownCommand(*at, word, err);
        exit_code = kExitUsage;
        return;
      }
      at = subs.front();
    }
    // Not at->help(): that shows the chosen command's help, here `help` itself.
    std::string usage = at->get_name();
    for (const CLI::App* p = at->get_parent(); p != nullptr; p = p->get_parent()) {
      usage = p->get_name() + " " + usage;
    }
    out << at->get_formatter()->make_help(at, usage, CLI::AppFormatMode::Normal);
    exit_code = kExitOk;
  });
}

int EditDistance(const std::string& a, const std::string& b) {
  // d[i][j]: distance of a[0, i) and b[0, j).
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

void UnknownCommand(const CLI::App& app, const std::string& word, std::ostream& err) {
  const auto visible =
      app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); });
  const std::string prefix = app.get_parent() == nullptr ? "npuperf" : "npuperf " + app.get_name();
  if (word.empty()) {
    err << prefix << ": a command is required\n";
  } else {
    err << prefix << ": unknown command '" << word << "'";
    const CLI::App* nearest = nullptr;
    int best = 3;  // suggest within distance 2 only
    for (const CLI::App* c : visible) {
      const int d = EditDistance(word, c->get_name());
      if (d < best && d < static_cast<int>(c->get_name().size())) {
        best = d;
        nearest = c;
      }
    }
    if (nearest != nullptr) err << " (did you mean '" << nearest->get_name() << "'?)";
    err << "\n";
  }
  err << "commands:\n";
  for (const CLI::App* c : visible) {
    const size_t n = c->get_name().size();
    err << "  " << c->get_name() << std::string(n < 14 ? 16 - n : 2, ' ') << c->get_description()
        << "\n";
  }
  err << "run '" << prefix << " --help' for the flags\n";
}

int ReportParseError(CLI::App& app, const CLI::ParseError& e, std::ostream& out,
                     std::ostream& err) {
  // The deepest command parsed: a missing command is its RequiredError.
  const CLI::App* at = &app;
  for (auto subs = app.get_subcommands(); !subs.empty(); subs = at->get_subcommands()) {
    at = subs.front();
  }
  const bool help = dynamic_cast<const CLI::CallForHelp*>(&e) != nullptr ||
                    dynamic_cast<const CLI::CallForAllHelp*>(&e) != nullptr;
  const bool expects_command =
      at->get_require_subcommand_min() > 0 && at->get_subcommands().empty();
  const bool missing = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && expects_command;
  // `npuperf bogus --help`: the word where a command belongs is not one.
  if (missing || (help && expects_command)) {
    const std::vector<std::string> rest = app.remaining(/*recurse=*/true);
    const auto word = std::find_if(rest.begin(), rest.end(),
                                   [](const std::string& r) { return r.rfind('-', 0) != 0; });
    if (missing || word != rest.end()) {
      UnknownCommand(*at, word == rest.end() ? "" : *word, err);
      return kExitUsage;
    }
  }
  return app.exit(e, out, err) == 0 ? kExitOk : kExitUsage;
}

}  // namespace npuperf::client
