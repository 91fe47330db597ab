// client/cli.h: what a failed parse prints and exits with. A missing or
// mistyped command lists the commands and suggests the nearest (exit 2),
// `npuperf help [COMMAND]` prints the help (exit 0), any other error is
// CLI11's message naming the flag (exit 2).
#include <sstream>

#include "CLI/CLI.hpp"
#include "client/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuperf::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The app of main.cc without the offline and plumbing commands.
struct App {
  App() {
    app.require_subcommand(1);
    AddSettingFlags(app, flags, config_file);
    AddCollectionCommands(app, chosen);
    AddRoundCommands(app, chosen);
    AddCompareCommands(app, chosen);
    AddHelpCommand(app, out, err, exit_code);
  }

  // main.cc's parse: the exit code of a failed parse, or exit_code.
  int Parse(const std::string& line) {
    try {
      app.parse(line, /*program_name_included=*/false);
    } catch (const CLI::ParseError& e) {
      return ReportParseError(app, e, out, err);
    }
    return exit_code;
  }

  CLI::App app{"npuperf"};
  Settings flags;
  std::string config_file;
  ServerCommand chosen;
  int exit_code = kExitOk;
  std::ostringstream out, err;
};

TEST(EditDistanceTest, CountsEditsAndAdjacentSwaps) {
  EXPECT_EQ(EditDistance("submit", "submit"), 0);
  EXPECT_EQ(EditDistance("sumbit", "submit"), 1);  // a swap
  EXPECT_EQ(EditDistance("lst", "list"), 1);
  EXPECT_EQ(EditDistance("", "get"), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
}

TEST(UnknownCommandTest, SuggestsTheNearestAndListsTheCommands) {
  App a;
  EXPECT_EQ(a.Parse("sumbit dir"), kExitUsage);
  EXPECT_THAT(a.err.str(),
              HasSubstr("npuperf: unknown command 'sumbit' (did you mean 'submit'?)\n"));
  for (const char* command : {"submit", "get", "watch", "cancel", "list", "round", "rounds",
                              "agents", "compare", "regressions", "baseline", "report", "help"}) {
    EXPECT_THAT(a.err.str(), HasSubstr(std::string("\n  ") + command + " ")) << command;
  }
  EXPECT_FALSE(a.chosen);
}

TEST(UnknownCommandTest, NothingNearIsNotGuessed) {
  App a;
  EXPECT_EQ(a.Parse("--format json xyzzy"), kExitUsage);
  EXPECT_THAT(a.err.str(), HasSubstr("npuperf: unknown command 'xyzzy'\n"));
  EXPECT_THAT(a.err.str(), Not(HasSubstr("did you mean")));
}

TEST(UnknownCommandTest, NoCommandAtAllSaysOneIsRequired) {
  App a;
  EXPECT_EQ(a.Parse("--server h:1"), kExitUsage);
  EXPECT_THAT(a.err.str(), HasSubstr("npuperf: a command is required\ncommands:\n"));
}

TEST(UnknownCommandTest, ANestedCommandSuggestsItsOwn) {
  App a;
  EXPECT_EQ(a.Parse("baseline pni branch=main 42"), kExitUsage);
  EXPECT_THAT(a.err.str(),
              HasSubstr("npuperf baseline: unknown command 'pni' (did you mean 'pin'?)\n"));
  EXPECT_THAT(a.err.str(), HasSubstr("\n  pin "));
}

// Issue 30: --help after a word that is no command does not print the main
// help and exit 0; it is the unknown command, with the suggestion (exit 2).
TEST(UnknownCommandTest, HelpAfterAnUnknownCommandIsStillAnError) {
  App bogus;
  EXPECT_EQ(bogus.Parse("bogus --help"), kExitUsage);
  EXPECT_THAT(bogus.err.str(), HasSubstr("npuperf: unknown command 'bogus'\n"));
  EXPECT_EQ(bogus.out.str(), "");
  App typo;
  EXPECT_EQ(typo.Parse("--server h:1 sumbit --help dir"), kExitUsage);
  EXPECT_THAT(typo.err.str(),
              HasSubstr("npuperf: unknown command 'sumbit' (did you mean 'submit'?)\n"));
  App nested;
  EXPECT_EQ(nested.Parse("baseline pni --help"), kExitUsage);
  EXPECT_THAT(nested.err.str(),
              HasSubstr("npuperf baseline: unknown command 'pni' (did you mean 'pin'?)\n"));
  // The help of the app, and of a command, still exit 0: the app's lists the
  // settings (--server), a command's its own usage.
  for (const char* line : {"--help", "submit --help", "baseline --help", "baseline pin --help"}) {
    App help;
    EXPECT_EQ(help.Parse(line), kExitOk) << line << ": " << help.err.str();
    EXPECT_THAT(help.out.str(), HasSubstr(std::string(line) == "--help" ? "--server" : "Usage: "))
        << line;
    EXPECT_EQ(help.err.str(), "") << line;
  }
}

// Issue 30: a --format value the chosen command cannot print is a usage
// error that says which commands take it, wherever it was written.
TEST(FormatTest, AFormatTheCommandCannotPrintSaysWhereItGoes) {
  for (const char* line : {"--format junit list", "list --format junit"}) {
    App a;
    EXPECT_EQ(a.Parse(line), kExitUsage) << line;
    EXPECT_THAT(a.err.str(), HasSubstr("--format junit: npuperf list prints text or json; junit "
                                       "goes with compare, regressions"))
        << line;
    EXPECT_FALSE(a.chosen) << line;
  }
  App twice;
  EXPECT_EQ(twice.Parse("--format markdown compare 41 42 --format json"), kExitUsage);
  EXPECT_THAT(twice.err.str(), HasSubstr("--format markdown: npuperf compare was given its own "
                                         "--format too"));
  App unknown;
  EXPECT_EQ(unknown.Parse("--format yaml compare 41 42"), kExitUsage);
  EXPECT_THAT(unknown.err.str(), HasSubstr("--format"));
  EXPECT_THAT(unknown.err.str(), HasSubstr("yaml"));
}

TEST(HelpCommandTest, PrintsTheHelpOfTheAppOrOfACommand) {
  App all;
  EXPECT_EQ(all.Parse("help"), kExitOk);
  EXPECT_THAT(all.out.str(), HasSubstr("submit"));
  EXPECT_THAT(all.out.str(), HasSubstr("--server"));
  App pin;
  EXPECT_EQ(pin.Parse("help baseline pin"), kExitOk);
  EXPECT_THAT(pin.out.str(), HasSubstr("pin a round or collection as the baseline of a label"));
  App bad;
  EXPECT_EQ(bad.Parse("help sumbit"), kExitUsage);
  EXPECT_THAT(bad.err.str(), HasSubstr("unknown command 'sumbit' (did you mean 'submit'?)"));
  EXPECT_EQ(bad.out.str(), "");
}

TEST(ReportParseErrorTest, HelpAndVersionExitZeroOtherErrorsTwoNamingTheFlag) {
  App help;
  EXPECT_EQ(help.Parse("list --help"), kExitOk);
  EXPECT_THAT(help.out.str(), HasSubstr("--page-token"));
  App bogus;
  EXPECT_EQ(bogus.Parse("list --bogus"), kExitUsage);
  EXPECT_THAT(bogus.err.str(), HasSubstr("--bogus"));
  App missing;
  EXPECT_EQ(missing.Parse("list --format"), kExitUsage);
  EXPECT_THAT(missing.err.str(), HasSubstr("--format"));
  App two;
  EXPECT_EQ(two.Parse("get c-1 list"), kExitUsage);
  EXPECT_THAT(two.err.str(), HasSubstr("list"));
}

}  // namespace
}  // namespace npuperf::client
