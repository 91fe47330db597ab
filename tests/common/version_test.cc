#include "common/version.h"

#include <regex>
#include <string>

#include "gtest/gtest.h"

namespace npuperf {
namespace {

TEST(VersionTest, VersionIsTheProjectsDottedRelease) {
  EXPECT_TRUE(std::regex_match(std::string(Version()), std::regex(R"(\d+\.\d+\.\d+)")))
      << Version();
}

TEST(VersionTest, CommitIsAGitDescriptionOrUnknown) {
  std::string commit(Commit());
  EXPECT_TRUE(commit == "unknown" ||
              std::regex_match(commit, std::regex(R"([0-9a-zA-Z._-]*[0-9a-f]{7,40}(-dirty)?)")))
      << commit;
}

TEST(VersionTest, VersionLineNamesProgramVersionAndCommit) {
  EXPECT_EQ(VersionLine("npuperf-agent"),
            "npuperf-agent " + std::string(Version()) + " (commit " + std::string(Commit()) + ")");
}

}  // namespace
}  // namespace npuperf
