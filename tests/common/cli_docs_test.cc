// common/cli_docs.h: completion scripts and man pages walk the CLI11 tree, so
// every visible command and flag is in them and hidden ones are not.
#include "common/cli_docs.h"

#include <sstream>

#include "CLI/CLI.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuperf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Tool {
  Tool() {
    app.fallthrough();
    app.add_option("--server", server, "server HOST:PORT")->envname("TOOL_SERVER");
    auto* submit = app.add_subcommand("submit", "queue it");
    submit->add_option("dirs", dirs, "operator directories");
    submit->add_flag("--wait,!--no-wait", wait, "wait");
    auto* baseline = app.add_subcommand("baseline", "baselines");
    baseline->add_subcommand("pin", "pin one")->add_option("--label", label, "key=value");
    app.add_subcommand("plumbing", "hidden")->group("");
    app.add_option("--secret", label, "hidden flag")->group("");
  }
  CLI::App app{"a tool - with dashes"};
  std::string server, label;
  std::vector<std::string> dirs;
  bool wait = true;
};

TEST(BashCompletionTest, OffersEachCommandsWordsWithTheFlagsItFallsThroughTo) {
  Tool t;
  const std::string bash = BashCompletion(t.app, "my-tool");
  EXPECT_THAT(bash, HasSubstr("    \"\") words=\"submit baseline --help -h --server\" ;;\n"));
  EXPECT_THAT(bash,
              HasSubstr("    \"/submit\") words=\"--help -h --wait --no-wait --server\" ;;\n"));
  EXPECT_THAT(bash, HasSubstr("    \"/baseline/pin\") words=\"--help -h --label --server\" ;;\n"));
  EXPECT_THAT(bash, HasSubstr("/submit|/baseline|/baseline/pin) cmdpath="));
  EXPECT_THAT(bash, HasSubstr("complete -o filenames -F _my_tool my-tool\n"));
  EXPECT_THAT(bash, Not(HasSubstr("plumbing")));
  EXPECT_THAT(bash, Not(HasSubstr("--secret")));
}

TEST(ZshCompletionTest, IsACompdefFunctionWithTheSameWords) {
  Tool t;
  const std::string zsh = ZshCompletion(t.app, "my-tool");
  EXPECT_THAT(zsh, ::testing::StartsWith("#compdef my-tool\n"));
  EXPECT_THAT(zsh, HasSubstr("(\"/baseline\") compadd -- pin --help"));
  EXPECT_THAT(zsh, HasSubstr("for ((i = 2; i < CURRENT; i++))"));
  EXPECT_THAT(zsh, Not(HasSubstr("plumbing")));
}

TEST(ManPageTest, HasEveryVisibleCommandAndFlagEscapedForRoff) {
  Tool t;
  const std::string man = ManPage(t.app, "my-tool", 1, "my-tool 1.0 (abc)", ".SH FOOTER\n");
  EXPECT_THAT(man, ::testing::StartsWith(".TH \"MY-TOOL\" \"1\" \"\" \"my\\-tool 1.0 (abc)\""));
  EXPECT_THAT(man, HasSubstr(".SH NAME\nmy\\-tool \\- a tool \\- with dashes\n"));
  EXPECT_THAT(man,
              HasSubstr("\\fB\\-\\-server\\fR \\fITEXT\\fR\nserver HOST:PORT (env TOOL_SERVER)\n"));
  EXPECT_THAT(man, HasSubstr(".SS \"my\\-tool submit\"\nqueue it\n"));
  EXPECT_THAT(man, HasSubstr("\\fIdirs\\fR"));
  EXPECT_THAT(man, HasSubstr(".SS \"my\\-tool baseline pin\"\n"));
  EXPECT_THAT(man, HasSubstr("\\fB\\-\\-no\\-wait\\fR\nwait\n"));
  EXPECT_THAT(man, ::testing::EndsWith(".SH FOOTER\n"));
  EXPECT_THAT(man, Not(HasSubstr("plumbing")));
  EXPECT_THAT(man, Not(HasSubstr("secret")));
}

TEST(GeneratedDocsFlagsTest, PrintAndSucceedBeforeRequiredFlagsAreChecked) {
  for (const std::string line : {"--man-page", "--completion bash", "--completion zsh"}) {
    CLI::App app{"daemon"};
    std::string needed;
    app.add_option("--needed", needed, "required")->required();
    std::ostringstream out;
    AddGeneratedDocsFlags(app, "daemon", 8, "daemon 1.0", "", out);
    EXPECT_THROW(app.parse(line, false), CLI::Success) << line;
    EXPECT_THAT(out.str(), HasSubstr("needed")) << line;
  }
  CLI::App app{"daemon"};
  std::ostringstream out;
  AddGeneratedDocsFlags(app, "daemon", 8, "daemon 1.0", "", out);
  EXPECT_THROW(app.parse("--completion fish", false), CLI::ValidationError);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace npuperf
