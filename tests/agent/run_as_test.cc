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

// A job on a device that has no run user (an agent with a pool) fails with
// that reason before any child starts.
TEST(RunAsTest, JobOnADeviceWithoutARunUserFails) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  JobRunnerOptions options;
  options.run_users[0] = RunAsUser{"npuperf-run0", 4000, 4000, {4000}, "/"};
  JobRunner job_runner(runner, clock, options);
  std::filesystem::create_directories(dir.path() / "op");
  JobContext ctx;
  ctx.job.set_device_id(3);
  ctx.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx.job.mutable_params()->set_timeout_seconds(60);
  ctx.operator_dir = dir.path() / "op";
  ctx.session_dir = dir.path() / "session";
  auto e = job_runner.Run(ctx);
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(e.status())) << e.status();
  EXPECT_EQ(e.status().message(), "no run user for device 3 (--run-as-pool)");
}

TEST(RunAsPoolTest, RangesAndListsExpand) {
  auto names = ExpandUserPool("npuperf-run0..3, alice ,run10..11");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"npuperf-run0", "npuperf-run1", "npuperf-run2",
                                              "npuperf-run3", "alice", "run10", "run11"}));
  for (const char* bad : {"", "a,,b", "run3..1", "run..3", "0..3", "run1..x"}) {
    auto r = ExpandUserPool(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << bad << ": " << r.status();
  }
  auto twice = ExpandUserPool("run0..2,run1");
  EXPECT_EQ(twice.status().message(), "--run-as-pool names user run1 twice");
}

// A lookup that knows users u0..u9 as uid 5000+i, "rootish" as 0 and "twin"
// as u1's uid.
absl::StatusOr<RunAsUser> FakeLookup(const std::string& name) {
  if (name == "rootish") return RunAsUser{name, 0, 0, {0}, "/root"};
  if (name == "twin") return RunAsUser{name, 5001, 5001, {5001}, "/"};
  if (name.size() == 2 && name[0] == 'u') {
    const uid_t uid = 5000 + static_cast<uid_t>(name[1] - '0');
    return RunAsUser{name, uid, uid, {uid}, "/"};
  }
  return absl::FailedPreconditionError("--run-as " + name + ": unknown user");
}

RunAsFlags Flags(std::string user, std::string pool, bool self = false) {
  RunAsFlags f;
  f.user = std::move(user);
  f.pool = std::move(pool);
  f.self = self;
  return f;
}

TEST(RunAsPoolTest, EachDeviceGetsItsOwnUid) {
  const RunAsFlags flags = Flags("", "u0..9");
  auto users = ResolveRunUsers(flags, {4, 5, 7}, 0, FakeLookup);
  ASSERT_TRUE(users.ok()) << users.status();
  ASSERT_EQ(users->size(), 3u);
  EXPECT_EQ(users->at(4).name, "u0");
  EXPECT_EQ(users->at(5).uid, 5001u);
  EXPECT_EQ(users->at(7).name, "u2");
  // --run-as-self: no run users, and no root needed.
  auto self = ResolveRunUsers(Flags("", "", true), {0, 1}, 1000, FakeLookup);
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_TRUE(self->empty());
}

// Table: each configuration the agent must refuse to start with, and the
// start of its reason.
TEST(RunAsPoolTest, UnsafeConfigurationsAreRefused) {
  const struct {
    RunAsFlags flags;
    std::vector<int> devices;
    uid_t euid;
    std::string want;
  } cases[] = {
      {Flags("", ""), {0}, 0, "runners need an account of their own: give --run-as-pool"},
      {Flags("u0", "", true), {0}, 0, "--run-as, --run-as-pool and --run-as-self exclude"},
      {Flags("u0", ""), {0, 1}, 0, "--run-as u0: 2 devices would share one uid"},
      {Flags("", "u0..1"), {0, 1, 2}, 0, "--run-as-pool u0..1 has 2 users for 3 devices"},
      {Flags("", "u0..3"), {0, 1}, 1000, "--run-as-pool: the agent runs as uid 1000, not root"},
      {Flags("", "rootish,u1"), {0, 1}, 0, "--run-as-pool: user rootish is uid 0"},
      {Flags("", "u1,twin"), {0, 1}, 0, "--run-as-pool: users u1 and twin share uid 5001"},
      {Flags("", "u1,nobody-here"), {0, 1}, 0, "--run-as nobody-here: unknown user"},
  };
  for (const auto& c : cases) {
    auto r = ResolveRunUsers(c.flags, c.devices, c.euid, FakeLookup);
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().message().substr(0, c.want.size()), c.want) << r.status();
  }
}

}  // namespace
}  // namespace npuperf::agent
