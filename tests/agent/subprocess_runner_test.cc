#include "agent/subprocess_runner.h"

#include <signal.h>

#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/run_as.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProfilerSpec Shell(const testing::TempDir& dir, const std::string& script) {
  ProfilerSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"ONLY", "this"}};
  spec.cwd = dir.path().string();
  spec.stdout_path = (dir.path() / "out").string();
  spec.stderr_path = (dir.path() / "err").string();
  return spec;
}

// A zombie (killed, not yet reaped by init) counts as gone.
bool Alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SubprocessRunnerTest, ExitCodeOutputAndEnvironment) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  auto p = runner.Start(Shell(dir, "echo $ONLY; echo oops >&2; pwd; exit 3"));
  ASSERT_TRUE(p.ok()) << p.status();
  ExitStatus s = (*p)->Wait(clock.MonotonicNow() + seconds(10));
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Read(dir.path() / "out"), "this\n" + dir.path().string() + "\n");
  EXPECT_EQ(Read(dir.path() / "err"), "oops\n");
}

TEST(SubprocessRunnerTest, TerminateKillsTheWholeProcessGroup) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  // A child that ignores SIGTERM and leaves a grandchild behind.
  auto p = runner.Start(Shell(dir, "trap '' TERM; sleep 300 & echo $! > grandchild; wait"));
  ASSERT_TRUE(p.ok());
  ExitStatus s = (*p)->Wait(clock.MonotonicNow() + milliseconds(300));
  EXPECT_TRUE(s.timed_out);
  for (int i = 0; i < 100 && Read(dir.path() / "grandchild").empty(); ++i) {
    clock.SleepFor(milliseconds(10));
  }
  const pid_t grandchild = std::stoi(Read(dir.path() / "grandchild"));
  const auto start = clock.MonotonicNow();
  s = (*p)->Terminate(milliseconds(200));
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_LT(clock.MonotonicNow() - start, seconds(5));
  for (int i = 0; i < 100 && Alive(grandchild); ++i) clock.SleepFor(milliseconds(10));
  EXPECT_FALSE(Alive(grandchild)) << "grandchild survived";
}

TEST(SubprocessRunnerTest, MissingProgramIsAnError) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  ProfilerSpec spec = Shell(dir, "");
  spec.argv = {"/nonexistent/program"};
  auto p = runner.Start(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/nonexistent/program"), absl::string_view::npos);
}

// --run-as: the child switches to the account after fork and before exec
// (CI runs as root; elsewhere the agent cannot switch users at all).
TEST(SubprocessRunnerTest, RunAsStartsTheChildAsThatUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching users needs root";
  auto nobody = ResolveRunAs("nobody", ::geteuid());
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  ProfilerSpec spec = Shell(dir, "id -u; id -g; echo $HOME");
  spec.run_as = *nobody;
  ApplyRunAsEnv(*nobody, &spec.env);
  auto p = runner.Start(spec);
  ASSERT_TRUE(p.ok()) << p.status();
  ExitStatus s = (*p)->Wait(clock.MonotonicNow() + seconds(10));
  EXPECT_TRUE(s.ok()) << s.ToString() << Read(dir.path() / "err");
  EXPECT_EQ(Read(dir.path() / "out"),
            absl::StrCat(nobody->uid, "\n", nobody->gid, "\n", nobody->home, "\n"));
  EXPECT_NE(nobody->uid, 0u);
}

TEST(SubprocessRunnerTest, RunAsUnreachableDirectoryNamesTheStep) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching users needs root";
  auto nobody = ResolveRunAs("nobody", ::geteuid());
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / "private");
  std::filesystem::permissions(dir.path() / "private", std::filesystem::perms::owner_all);
  RealClock clock;
  SubprocessRunner runner(clock);
  ProfilerSpec spec = Shell(dir, "true");
  spec.cwd = (dir.path() / "private").string();
  spec.run_as = *nobody;
  auto p = runner.Start(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("chdir " + spec.cwd + ": Permission denied"),
            absl::string_view::npos)
      << p.status();
}

}  // namespace
}  // namespace npuperf::agent
