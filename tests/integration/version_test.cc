// `--version` on the three binaries: exit 0, one line naming the program, the
// release and the commit (what a bug report and a fleet inventory need).
#include "common/version.h"

#include "gtest/gtest.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

TEST(VersionFlagTest, EveryBinaryPrintsItsNameReleaseAndCommit) {
  TempDir dir;
  for (const std::string program : {"npuperf", "npuperf-server", "npuperf-agent"}) {
    auto r = RunCommand({(BuildDir() / "bin" / program).string(), "--version"}, dir.path(), {},
                        std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 0) << program << ": " << r.err;
    EXPECT_EQ(r.out, VersionLine(program) + "\n") << program;
  }
}

}  // namespace
}  // namespace npuperf::testing
