// Completion scripts and man pages of the real binaries (issue 17): made
// from the same CLI11 definitions that parse their command lines. Bash
// completes every documented command, zsh and groff accept what they are
// given, and the man pages have every command. zsh and groff come from
// deploy/install-deps.sh: a missing one fails here, it is never skipped.
#include <fstream>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

// The commands of docs/api.md, and the daemons' (docs/operations.md).
const std::vector<std::string> kClientCommands = {
    "submit",    "get",           "watch",   "cancel",       "list",           "round",
    "rounds",    "report",        "compare", "regressions",  "baseline",       "agents",
    "summarize", "list-op-names", "help",    "history",      "artifacts",      "fetch",
    "triage",    "calibrate",     "noise",   "compare-impl", "release-report", "bisect",
    "bisection", "bisections",    "timeline"};

CommandResult RunTool(const std::vector<std::string>& argv, const std::filesystem::path& dir) {
  return RunCommand(argv, dir, {}, std::chrono::seconds(30));
}

std::string Bin(const std::string& program) { return (BuildDir() / "bin" / program).string(); }

// What bash completes after `line` (the words typed so far and the one
// being completed, last) with the script of `program`.
std::string BashCompletes(const std::filesystem::path& script, const std::string& program,
                          const std::string& line, const std::filesystem::path& dir) {
  const std::string shell = "source " + script.string() + "; COMP_WORDS=(" + program + " " + line +
                            "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _" +
                            (program == "npuperf" ? "npuperf" : "npuperf_server") +
                            "; printf '%s\\n' \"${COMPREPLY[@]}\"";
  auto r = RunTool({"/bin/bash", "-c", shell}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return "\n" + r.out;  // every word between newlines
}

TEST(CliDocsTest, BashCompletesEveryCommandAndTheFlagsAfterIt) {
  TempDir dir;
  auto gen = RunTool({Bin("npuperf"), "completion", "bash"}, dir.path());
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto script = dir.path() / "npuperf.bash";
  std::ofstream(script) << gen.out;
  const std::string top = BashCompletes(script, "npuperf", "''", dir.path());
  for (const std::string& command : kClientCommands) {
    EXPECT_NE(top.find("\n" + command + "\n"), std::string::npos) << command << " in:\n" << top;
  }
  EXPECT_EQ(top.find("completion"), std::string::npos) << "hidden commands stay hidden";
  EXPECT_EQ(BashCompletes(script, "npuperf", "baseline p", dir.path()), "\npin\n");
  EXPECT_EQ(BashCompletes(script, "npuperf", "submit --no-", dir.path()), "\n--no-wait\n");
  // The settings flags fall through: offered after a command too.
  EXPECT_EQ(BashCompletes(script, "npuperf", "list --for", dir.path()), "\n--format\n");
}

TEST(CliDocsTest, ZshAcceptsTheZshScripts) {
  TempDir dir;
  for (const std::vector<std::string>& gen :
       {std::vector<std::string>{Bin("npuperf"), "completion", "zsh"},
        {Bin("npuperf-server"), "--completion", "zsh"},
        {Bin("npuperf-agent"), "--completion", "zsh"}}) {
    auto r = RunTool(gen, dir.path());
    ASSERT_EQ(r.exit_code, 0) << gen[0] << ": " << r.err;
    const auto script = dir.path() / "_script";
    std::ofstream(script) << r.out;
    auto check = RunTool({"zsh", "-n", script.string()}, dir.path());
    EXPECT_EQ(check.exit_code, 0) << gen[0]
                                  << " (is zsh installed? deploy/install-deps.sh): " << check.err;
  }
}

TEST(CliDocsTest, ManPagesHaveEveryCommandAndGroffFindsNothingWrong) {
  TempDir dir;
  struct Page {
    std::vector<std::string> argv;
    std::vector<std::string> must_have;
  };
  std::vector<std::string> client = {".TH \"NPUPERF\" \"1\"", ".SH EXIT STATUS"};
  for (const std::string& command : kClientCommands) {
    // roff escapes a hyphen: list-op-names is "list\-op\-names" on the page.
    client.push_back(".SS \"npuperf " + absl::StrReplaceAll(command, {{"-", "\\-"}}) + "\"");
  }
  client.push_back(".SS \"npuperf baseline pin\"");
  const std::vector<Page> pages = {
      {{Bin("npuperf"), "man"}, client},
      {{Bin("npuperf-server"), "--man-page"},
       {".TH \"NPUPERF-SERVER\" \"8\"", ".SS \"npuperf\\-server migrate\"",
        ".SS \"npuperf\\-server token create\"", "(env NPUPERF_LISTEN)", "\\-\\-config"}},
      {{Bin("npuperf-agent"), "--man-page"},
       {".TH \"NPUPERF-AGENT\" \"8\"", "(env NPUPERF_DEVICES)", "(env NPUPERF_RUN_AS_POOL)"}}};
  for (const Page& p : pages) {
    auto r = RunTool(p.argv, dir.path());
    ASSERT_EQ(r.exit_code, 0) << p.argv[0] << ": " << r.err;
    for (const std::string& want : p.must_have) {
      EXPECT_NE(r.out.find(want), std::string::npos) << p.argv[0] << ": no " << want;
    }
    const auto page = dir.path() / "page.roff";
    std::ofstream(page) << r.out;
    auto groff = RunTool({"groff", "-man", "-Tutf8", "-ww", "-z", page.string()}, dir.path());
    EXPECT_EQ(groff.exit_code, 0) << p.argv[0] << ": " << groff.err;
    EXPECT_EQ(groff.err, "") << p.argv[0];
  }
}

TEST(CliDocsTest, DaemonBashScriptsCompleteTheirFlagsAndCommands) {
  TempDir dir;
  auto gen = RunTool({Bin("npuperf-server"), "--completion", "bash"}, dir.path());
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto script = dir.path() / "server.bash";
  std::ofstream(script) << gen.out;
  const std::string top = BashCompletes(script, "npuperf-server", "''", dir.path());
  for (const char* word : {"migrate", "token", "--listen", "--db", "--config"}) {
    EXPECT_NE(top.find(std::string("\n") + word + "\n"), std::string::npos) << word << top;
  }
  const std::string token = BashCompletes(script, "npuperf-server", "token ''", dir.path());
  EXPECT_NE(token.find("\nhash\n"), std::string::npos) << token;
  EXPECT_NE(token.find("\ncreate\n"), std::string::npos) << token;
  EXPECT_EQ(token.find("--listen"), std::string::npos) << "no fallthrough on the server";
}

}  // namespace
}  // namespace npuperf::testing
