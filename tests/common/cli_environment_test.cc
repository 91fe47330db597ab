// common/cli_environment.h: the daemons' flags from NPUPERF_* variables and a
// TOML/INI --config file, with a flag beating the environment beating the
// file, and unknown keys or unreadable files refused by name.
#include "common/cli_environment.h"

#include <cstdlib>
#include <fstream>

#include "CLI/CLI.hpp"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf {
namespace {

// The variables these tests set, unset again when a test ends.
class CliEnvironmentTest : public ::testing::Test {
 protected:
  ~CliEnvironmentTest() override {
    for (const char* v : {"NPUPERF_LISTEN", "NPUPERF_MAX_UPLOADS", "NPUPERF_INSECURE_NO_AUTH",
                          "NPUPERF_TEST_CONFIG", "NPUPERF_OWN", "NPUPERF_TLS"}) {
      ::unsetenv(v);
    }
  }

  // An app with the flags of a small daemon; parses `line`.
  void Parse(const std::string& line) {
    app.add_option("--listen", listen);
    app.add_option("--max-uploads", max_uploads)->check(CLI::Range(1, 100));
    app.add_flag("--insecure-no-auth", insecure);
    app.add_option("--label", labels);
    app.add_option("--tls-ca", tls_ca)->envname("NPUPERF_OWN");
    auto* migrate = app.add_subcommand("migrate", "");
    migrate->add_option("--db", db);
    AddEnvironmentAndConfig(app, "test");
    app.parse(line, /*program_name_included=*/false);
  }

  std::string File(const std::string& text) {
    const auto path = dir.path() / "config.toml";
    std::ofstream(path) << text;
    return path.string();
  }

  testing::TempDir dir;
  CLI::App app{"test"};
  std::string listen = "default", db, tls_ca;
  int max_uploads = 4;
  bool insecure = false;
  std::vector<std::string> labels;
};

TEST(EnvironmentNameOfTest, UpperCaseWithUnderscores) {
  EXPECT_EQ(EnvironmentNameOf("--max-uploads"), "NPUPERF_MAX_UPLOADS");
  EXPECT_EQ(EnvironmentNameOf("--db"), "NPUPERF_DB");
  EXPECT_EQ(EnvironmentNameOf("server-config"), "NPUPERF_SERVER_CONFIG");
}

TEST_F(CliEnvironmentTest, EveryLongFlagReadsItsVariable) {
  ::setenv("NPUPERF_LISTEN", "0.0.0.0:1", 1);
  ::setenv("NPUPERF_INSECURE_NO_AUTH", "true", 1);
  ::setenv("NPUPERF_OWN", "ca.pem", 1);  // a flag naming its own variable keeps it
  ::setenv("NPUPERF_TLS_CA", "ignored.pem", 1);
  Parse("");
  ::unsetenv("NPUPERF_TLS_CA");
  EXPECT_EQ(listen, "0.0.0.0:1");
  EXPECT_TRUE(insecure);
  EXPECT_EQ(tls_ca, "ca.pem");
  EXPECT_EQ(max_uploads, 4);
}

TEST_F(CliEnvironmentTest, AFlagBeatsTheEnvironmentWhichBeatsTheFile) {
  ::setenv("NPUPERF_LISTEN", "env:1", 1);
  ::setenv("NPUPERF_MAX_UPLOADS", "9", 1);
  const std::string file = File(
      "listen = \"file:1\"\nmax-uploads = 7\nlabel = [\"a=b\", \"c=d\"]\n[migrate]\ndb = \"x\"\n");
  Parse("--config " + file + " --listen flag:1 migrate");
  EXPECT_EQ(listen, "flag:1");
  EXPECT_EQ(max_uploads, 9);
  EXPECT_EQ(labels, (std::vector<std::string>{"a=b", "c=d"}));
  EXPECT_EQ(db, "x");
}

TEST_F(CliEnvironmentTest, TheFileFillsWhatNothingElseSays) {
  const std::string file = File("# comment\nlisten = \"file:1\"\ninsecure-no-auth = true\n");
  ::setenv("NPUPERF_TEST_CONFIG", file.c_str(), 1);
  Parse("");
  EXPECT_EQ(listen, "file:1");
  EXPECT_TRUE(insecure);
}

TEST_F(CliEnvironmentTest, UnknownKeysBadValuesAndMissingFilesAreErrorsNamingThem) {
  const std::string unknown = File("lisen = \"x\"\n");
  try {
    Parse("--config " + unknown);
    ADD_FAILURE() << "an unknown key was accepted";
  } catch (const CLI::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("lisen"), std::string::npos) << e.what();
  }
}

TEST_F(CliEnvironmentTest, AValueTheFlagRefusesIsRefusedFromTheFileAndTheEnvironment) {
  ::setenv("NPUPERF_MAX_UPLOADS", "1000", 1);
  try {
    Parse("");
    ADD_FAILURE() << "1000 was accepted";
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("--max-uploads"), std::string::npos) << e.what();
  }
}

TEST_F(CliEnvironmentTest, ANamedFileThatCannotBeReadIsAnError) {
  ::setenv("NPUPERF_TEST_CONFIG", (dir.path() / "missing.toml").c_str(), 1);
  EXPECT_THROW(Parse(""), CLI::FileError);
}

TEST_F(CliEnvironmentTest, AnExplicitMissingFileIsAnError) {
  EXPECT_THROW(Parse("--config " + (dir.path() / "missing.toml").string()), CLI::FileError);
}

}  // namespace
}  // namespace npuperf
