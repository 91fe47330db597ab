#include "common/cli_docs.h"

#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace npuperf {
namespace {

// A command of the tree: its path below the program ("" for the program,
// "/baseline/pin"), its own words (subcommands, then flags) and the app.
struct Node {
  std::string path;
  std::vector<std::string> words;
  const CLI::App* app;
};

bool Visible(const CLI::App* c) { return !c->get_group().empty(); }

std::vector<const CLI::App*> VisibleSubcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* c) { return Visible(c); });
}

// "--server", "-h": every name of the visible flags of app.
std::vector<std::string> FlagNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty() || opt->get_positional()) continue;
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

void Walk(const CLI::App& app, const std::string& path, std::vector<std::string> inherited,
          std::vector<Node>& out) {
  Node node{path, {}, &app};
  for (const CLI::App* sub : VisibleSubcommands(app)) node.words.push_back(sub->get_name());
  std::vector<std::string> flags = FlagNames(app);
  flags.insert(flags.end(), inherited.begin(), inherited.end());
  node.words.insert(node.words.end(), flags.begin(), flags.end());
  out.push_back(node);
  // What a command falls through to: the flags above it, less their --help
  // (each command has its own).
  std::erase_if(flags, [](const std::string& f) { return f == "--help" || f == "-h"; });
  for (const CLI::App* sub : VisibleSubcommands(app)) {
    Walk(*sub, path + "/" + sub->get_name(),
         sub->get_fallthrough() ? flags : std::vector<std::string>{}, out);
  }
}

std::vector<Node> Nodes(const CLI::App& app) {
  std::vector<Node> nodes;
  Walk(app, "", {}, nodes);
  return nodes;
}

std::string FunctionName(const std::string& program) {
  return "_" + absl::StrReplaceAll(program, {{"-", "_"}});
}

// The shell lines shared by bash and zsh: walk the words typed so far to
// the deepest command path (first word at index `first`, the one being
// completed at `current`).
std::string PathWalk(const std::vector<Node>& nodes, const std::string& words,
                     const std::string& first, const std::string& current,
                     const std::string& pattern_open) {
  std::vector<std::string> paths;
  for (const Node& n : nodes) {
    if (!n.path.empty()) paths.push_back(n.path);
  }
  if (paths.empty()) return "  local cmdpath=\"\"\n";  // no commands: flags only
  return absl::StrCat("  local cmdpath=\"\" w i\n  for ((i = ", first, "; i < ", current,
                      "; i++)); do\n    w=", words, "[i]}\n    case \"$cmdpath/$w\" in\n      ",
                      pattern_open, absl::StrJoin(paths, "|"),
                      ") cmdpath=\"$cmdpath/$w\" ;;\n    esac\n  done\n");
}

// roff: backslashes and dashes escaped, a leading '.' or '\'' made literal.
std::string Roff(const std::string& text) {
  std::string s = absl::StrReplaceAll(text, {{"\\", "\\e"}, {"-", "\\-"}});
  if (!s.empty() && (s[0] == '.' || s[0] == '\'')) s = "\\&" + s;
  return s;
}

void ManOptions(const CLI::App& app, std::string& out) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;
    std::vector<std::string> names;
    for (const auto& s : opt->get_snames()) names.push_back("\\fB\\-" + Roff(s) + "\\fR");
    for (const auto& l : opt->get_lnames()) names.push_back("\\fB\\-\\-" + Roff(l) + "\\fR");
    if (opt->get_positional()) names.push_back("\\fI" + Roff(opt->get_name()) + "\\fR");
    std::string line = absl::StrJoin(names, ", ");
    if (!opt->get_positional() && !opt->get_type_name().empty()) {
      absl::StrAppend(&line, " \\fI", Roff(opt->get_type_name()), "\\fR");
    }
    std::string help = opt->get_description();
    if (!opt->get_envname().empty()) absl::StrAppend(&help, " (env ", opt->get_envname(), ")");
    absl::StrAppend(&out, ".TP\n", line, "\n", Roff(help), "\n");
  }
}

void ManCommands(const CLI::App& app, const std::string& prefix, std::string& out) {
  for (const CLI::App* sub : VisibleSubcommands(app)) {
    const std::string name = prefix + " " + sub->get_name();
    absl::StrAppend(&out, ".SS \"", Roff(name), "\"\n", Roff(sub->get_description()), "\n");
    ManOptions(*sub, out);
    ManCommands(*sub, name, out);
  }
}

}  // namespace

std::string BashCompletion(const CLI::App& app, const std::string& program) {
  const std::vector<Node> nodes = Nodes(app);
  const std::string fn = FunctionName(program);
  std::string out = absl::StrCat("# bash completion for ", program, " (generated from its flags)\n",
                                 fn, "() {\n  local cur=${COMP_WORDS[COMP_CWORD]}\n",
                                 PathWalk(nodes, "${COMP_WORDS", "1", "COMP_CWORD", ""),
                                 "  local words=\"\"\n  case \"$cmdpath\" in\n");
  for (const Node& n : nodes) {
    absl::StrAppend(&out, "    \"", n.path, "\") words=\"", absl::StrJoin(n.words, " "), "\" ;;\n");
  }
  absl::StrAppend(&out,
                  "  esac\n  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
                  "  if [[ ${#COMPREPLY[@]} -eq 0 ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); "
                  "fi\n}\ncomplete -o filenames -F ",
                  fn, " ", program, "\n");
  return out;
}

std::string ZshCompletion(const CLI::App& app, const std::string& program) {
  const std::vector<Node> nodes = Nodes(app);
  const std::string fn = FunctionName(program);
  std::string out = absl::StrCat(
      "#compdef ", program, "\n# zsh completion for ", program, " (generated from its flags)\n", fn,
      "() {\n", PathWalk(nodes, "${words", "2", "CURRENT", "("), "  case \"$cmdpath\" in\n");
  for (const Node& n : nodes) {
    absl::StrAppend(&out, "    (\"", n.path, "\") compadd -- ", absl::StrJoin(n.words, " "),
                    " ;;\n");
  }
  absl::StrAppend(&out, "  esac\n  _files\n}\n", fn, " \"$@\"\n");
  return out;
}

std::string ManPage(const CLI::App& app, const std::string& program, int section,
                    const std::string& version_line, const std::string& footer) {
  std::string out = absl::StrCat(".TH \"", absl::AsciiStrToUpper(program), "\" \"", section,
                                 "\" \"\" \"", Roff(version_line), "\" \"npuperf\"\n.SH NAME\n",
                                 Roff(program), " \\- ", Roff(app.get_description()),
                                 "\n.SH SYNOPSIS\n.B ", Roff(program), "\n[\\fIOPTIONS\\fR]");
  if (!VisibleSubcommands(app).empty()) absl::StrAppend(&out, " \\fICOMMAND\\fR [\\fIARGS\\fR]");
  absl::StrAppend(&out, "\n.SH OPTIONS\n");
  ManOptions(app, out);
  if (!VisibleSubcommands(app).empty()) {
    absl::StrAppend(&out, ".SH COMMANDS\n");
    ManCommands(app, program, out);
  }
  absl::StrAppend(&out, footer);
  return out;
}

void AddGeneratedDocsFlags(CLI::App& app, const std::string& program, int section,
                           const std::string& version_line, const std::string& footer,
                           std::ostream& out) {
  app.add_option_function<std::string>(
         "--completion",
         [&app, program, &out](const std::string& shell) {
           out << (shell == "bash" ? BashCompletion(app, program) : ZshCompletion(app, program));
           throw CLI::Success();
         },
         "print the bash or zsh completion script")
      ->check(CLI::IsMember({"bash", "zsh"}))
      ->configurable(false)
      ->group("");
  app.add_flag_callback(
         "--man-page",
         [&app, program, section, version_line, footer, &out] {
           out << ManPage(app, program, section, version_line, footer);
           throw CLI::Success();
         },
         "print the man page (roff)")
      ->configurable(false)
      ->group("");
}

}  // namespace npuperf
