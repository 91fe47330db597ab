#include "agent/run_as.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "agent/job_runner.h"
#include "agent/subprocess_runner.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

constexpr char kUnknown[] = "npuperf-no-such-user";

TEST(RunAsTest, OnlyRootCanSwitchUsers) {
  auto r = ResolveRunAs("nobody", 1000);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status()));
  EXPECT_EQ(r.status().message(),
            "--run-as nobody: the agent runs as uid 1000, not root, so it cannot start runners as "
            "another user");
}

TEST(RunAsTest, UnknownUserIsNamed) {
  auto r = ResolveRunAs(kUnknown, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status()));
  EXPECT_EQ(r.status().message(), std::string("--run-as ") + kUnknown + ": unknown user");
}

TEST(RunAsTest, ResolvesAccountGroupsAndEnvironment) {
  auto r = ResolveRunAs("root", 0);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->uid, 0u);
  EXPECT_EQ(r->gid, 0u);
  EXPECT_FALSE(r->groups.empty());  // at least the primary group
  std::map<std::string, std::string> env = {
      {"HOME", "/agent"}, {"USER", "agent"}, {"PATH", "/bin"}};
  RunAsUser u{"alice", 1234, 1234, {}, "/home/alice"};
  ApplyRunAsEnv(u, &env);
  EXPECT_EQ(
      env,
      (std::map<std::string, std::string>{
          {"HOME", "/home/alice"}, {"LOGNAME", "alice"}, {"PATH", "/bin"}, {"USER", "alice"}}));
}

TEST(RunAsTest, ChownTreeGivesTheScratchDirectoryToTheUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  auto nobody = ResolveRunAs("nobody", 0);
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "op" / "sub");
  { std::ofstream(dir.path() / "op" / "sub" / "f.py") << "x"; }
  std::filesystem::create_symlink("/etc/passwd", dir.path() / "op" / "link");
  ASSERT_TRUE(ChownTree(dir.path() / "op", *nobody).ok());
  for (const char* p : {"op", "op/sub", "op/sub/f.py", "op/link"}) {
    struct stat st {};
    ASSERT_EQ(::lstat((dir.path() / p).c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_uid, nobody->uid) << p;
  }
  struct stat target {};
  ASSERT_EQ(::stat("/etc/passwd", &target), 0);
  EXPECT_EQ(target.st_uid, 0u) << "a link's target must never change owner";
}

// A job of an agent configured with an unknown --run-as user fails with that
// reason before any child starts.
TEST(RunAsTest, JobFailsWithTheReasonWhenTheUserCannotBeUsed) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  JobRunnerOptions options;
  options.run_as = kUnknown;
  JobRunner job_runner(runner, clock, options);
  std::filesystem::create_directories(dir.path() / "op");
  JobContext ctx;
  ctx.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx.job.mutable_params()->set_timeout_seconds(60);
  ctx.operator_dir = dir.path() / "op";
  ctx.session_dir = dir.path() / "session";
  auto e = job_runner.Run(ctx);
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(e.status())) << e.status();
  const std::string want = ::geteuid() == 0
                               ? std::string("--run-as ") + kUnknown + ": unknown user"
                               : "not root, so it cannot start runners as another user";
  EXPECT_NE(e.status().message().find(want), absl::string_view::npos) << e.status();
}

}  // namespace
}  // namespace npuperf::agent
