#include "agent/containment.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "agent/host_setup.h"
#include "agent/sandbox.h"
#include "agent/subprocess_runner.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// Alive and not a zombie.
bool Alive(pid_t pid) {
  const std::string stat = Read("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

ProfilerSpec Contained(const testing::TempDir& dir, const std::string& script) {
  ProfilerSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.cwd = dir.path().string();
  spec.stdout_path = (dir.path() / "out").string();
  spec.stderr_path = (dir.path() / "err").string();
  spec.contain = true;
  return spec;
}

// The probe: a setsid daemon and a double-forked child outlived their
// job with PPID 1. Under the keeper the job ends only when both are gone, and
// the keeper reports the program's own exit code.
TEST(KeeperTest, NoDescendantOutlivesTheJob) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  auto p = runner.Start(Contained(
      dir,
      "setsid sleep 240 & echo $! > daemon; (sleep 240 & echo $! > orphan); sleep 0.2; exit 3"));
  ASSERT_TRUE(p.ok()) << p.status();
  const ExitStatus s = (*p)->Wait(clock.MonotonicNow() + seconds(20));
  ASSERT_FALSE(s.timed_out);
  EXPECT_EQ(s.exit_code, 3);
  for (const char* name : {"daemon", "orphan"}) {
    const std::string pid = Read(dir.path() / name);
    ASSERT_FALSE(pid.empty()) << name;
    EXPECT_FALSE(Alive(std::stoi(pid))) << name << " " << pid << " outlived its job";
  }
}

TEST(KeeperTest, TerminateReachesDescendantsThatLeftTheGroup) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  auto p = runner.Start(Contained(
      dir, "trap '' TERM; setsid sh -c 'trap \"\" TERM; sleep 240' & echo $! > daemon; wait"));
  ASSERT_TRUE(p.ok()) << p.status();
  for (int i = 0; i < 200 && Read(dir.path() / "daemon").empty(); ++i) {
    (*p)->Wait(clock.MonotonicNow() + milliseconds(10));
  }
  const pid_t daemon = std::stoi(Read(dir.path() / "daemon"));
  const ExitStatus s = (*p)->Terminate(milliseconds(200));
  EXPECT_FALSE(s.timed_out);
  EXPECT_EQ(s.signal, SIGKILL) << s.ToString();
  EXPECT_FALSE(Alive(daemon)) << "the setsid daemon survived Terminate";
}

// Nothing of the agent's reaches the program: a descriptor opened without
// O_CLOEXEC is closed before exec.
TEST(KeeperTest, NoDescriptorIsInherited) {
  testing::TempDir dir;
  RealClock clock;
  SubprocessRunner runner(clock);
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 0);
  ASSERT_EQ(::dup2(leaked, 57), 57);
  for (bool contain : {false, true}) {
    ProfilerSpec spec = Contained(dir,
                                  "for fd in 3 57; do [ -e /proc/self/fd/$fd ] && echo $fd; "
                                  "done; echo end");
    spec.contain = contain;
    auto p = runner.Start(spec);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE((*p)->Wait(clock.MonotonicNow() + seconds(10)).ok());
  }
  ::close(57);
  ::close(leaked);
  EXPECT_EQ(Read(dir.path() / "out"), "end\nend\n");
}

class CgroupTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write(root() / "cgroup.controllers", "cpu io memory pids\n");
    Write(root() / "cgroup.subtree_control", "");
  }
  fs::path root() const { return dir_.path(); }
  testing::TempDir dir_;
};

// Open: the agent moves itself out of the delegated root (no internal
// processes) and hands the memory and pids controllers down.
TEST_F(CgroupTreeTest, OpenMovesTheAgentAsideAndEnablesControllers) {
  auto tree = CgroupTree::Open(root().string());
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(Read(root() / "supervisor" / "cgroup.procs"), std::to_string(::getpid()) + "\n");
  EXPECT_EQ(Read(root() / "cgroup.subtree_control"), "+memory +pids");
  EXPECT_TRUE((*tree)->memory());
  EXPECT_TRUE((*tree)->pids());
}

TEST_F(CgroupTreeTest, JobGetsItsLimitsAndIsKilledAsAWhole) {
  auto tree = CgroupTree::Open(root().string());
  ASSERT_TRUE(tree.ok()) << tree.status();
  const fs::path job_dir = root() / "job-7-1";
  fs::create_directories(job_dir);
  Write(job_dir / "cgroup.procs", "");
  auto job = (*tree)->Create("job-7-1", JobLimits{512, 1 << 30});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ((*job)->dir, job_dir.string());
  EXPECT_GE((*job)->procs_fd, 0);
  EXPECT_EQ(Read(job_dir / "pids.max"), "512\n");
  EXPECT_EQ(Read(job_dir / "memory.max"), "1073741824\n");
  EXPECT_EQ(Read(job_dir / "memory.swap.max"), "0\n");
  Write(job_dir / "cgroup.events", "populated 1\nfrozen 0\n");
  EXPECT_FALSE(CgroupTree::Empty(**job));
  CgroupTree::Kill(**job);
  EXPECT_EQ(Read(job_dir / "cgroup.kill"), "1\n");
  Write(job_dir / "cgroup.events", "populated 0\nfrozen 0\n");
  EXPECT_TRUE(CgroupTree::Empty(**job));
}

// Where a controller is not offered no limit file is written (the kernel has
// none to write) and no "+controller" is asked for.
TEST_F(CgroupTreeTest, ControllersNotOfferedAreLeftAlone) {
  Write(root() / "cgroup.controllers", "cpu io\n");
  auto tree = CgroupTree::Open(root().string());
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(Read(root() / "cgroup.subtree_control"), "");
  EXPECT_FALSE((*tree)->pids());
  fs::create_directories(root() / "job-1-1");
  Write(root() / "job-1-1" / "cgroup.procs", "");
  auto job = (*tree)->Create("job-1-1", JobLimits{512, 1 << 30});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_FALSE(fs::exists(root() / "job-1-1" / "pids.max"));
  EXPECT_FALSE(fs::exists(root() / "job-1-1" / "memory.max"));
}

TEST_F(CgroupTreeTest, UnwritableRootNamesTheFile) {
  auto tree = CgroupTree::Open((root() / "missing").string());
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("missing/supervisor"), absl::string_view::npos)
      << tree.status();
}

// Reclaim of a job whose cgroup is already empty kills it, verifies, and
// returns without waiting on the clock.
TEST_F(CgroupTreeTest, ReclaimKillsAndVerifiesTheCgroup) {
  auto tree = CgroupTree::Open(root().string());
  ASSERT_TRUE(tree.ok()) << tree.status();
  testing::FakeClock clock;
  Containment containment(*std::move(tree), {}, JobLimits{64, 0}, clock);
  ASSERT_TRUE(containment.has_cgroups());
  fs::create_directories(root() / "job-2-1");
  Write(root() / "job-2-1" / "cgroup.procs", "");
  Write(root() / "job-2-1" / "cgroup.events", "populated 0\n");
  auto job = containment.Enter("job-2-1");
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_NE(*job, nullptr);
  EXPECT_EQ(Read(root() / "job-2-1" / "pids.max"), "64\n");
  const auto before = clock.MonotonicNow();
  containment.Reclaim(2, *std::move(job));
  EXPECT_EQ(Read(root() / "job-2-1" / "cgroup.kill"), "1\n");
  EXPECT_EQ(clock.MonotonicNow(), before);
}

TEST(ContainmentTest, WithoutCgroupsOrUsersThereIsNothingToReclaim) {
  testing::FakeClock clock;
  Containment containment(nullptr, {}, JobLimits{}, clock);
  auto job = containment.Enter("job-1-1");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(*job, nullptr);
  EXPECT_EQ(containment.user(0), nullptr);
  containment.Reclaim(0, nullptr);
}

TEST(HostSetupTest, WorkDirKeepsRunnersOut) {
  testing::TempDir dir;
  const fs::path work = dir.path() / "work";
  fs::create_directories(work / "spool");
  fs::permissions(work / "spool", fs::perms(0777));
  ASSERT_TRUE(PrepareWorkDir(work, ::geteuid()).ok());
  const std::pair<const char*, mode_t> want[] = {
      {"", 0711}, {"jobs", 0711}, {"bundles", 0700}, {"spool", 0700}};
  for (const auto& [name, mode] : want) {
    struct stat st {};
    ASSERT_EQ(::stat((work / name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 07777, mode) << "'" << name << "'";
  }
  auto foreign = PrepareWorkDir(work, ::geteuid() + 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(foreign));
  EXPECT_NE(foreign.message().find("belongs to uid"), absl::string_view::npos) << foreign;
}

TEST(HostSetupTest, TokenFileMustBeTheAgentsAlone) {
  testing::TempDir dir;
  const fs::path token = dir.path() / "agent.token";
  Write(token, "secret\n");
  fs::permissions(token, fs::perms(0644));
  auto open = CheckTokenFile(token.string(), ::geteuid());
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.message().find("mode 0644"), absl::string_view::npos) << open;
  fs::permissions(token, fs::perms(0600));
  EXPECT_TRUE(CheckTokenFile(token.string(), ::geteuid()).ok());
  EXPECT_FALSE(CheckTokenFile(token.string(), ::geteuid() + 1).ok());
  EXPECT_FALSE(CheckTokenFile((dir.path() / "none").string(), ::geteuid()).ok());
}

// Under FsIdentity a root agent opens files with the job user's rights only:
// a link planted in the job directory cannot reach an agent file.
TEST(HostSetupTest, FsIdentityChecksFileAccessAsTheJobUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing the filesystem uid needs root";
  testing::TempDir dir;
  const fs::path secret = dir.path() / "secret";
  Write(secret, "token\n");
  fs::permissions(secret, fs::perms(0600));
  fs::create_symlink(secret, dir.path() / "planted");
  {
    FsIdentity as_nobody(65534, 65534);
    EXPECT_LT(::open((dir.path() / "planted").c_str(), O_RDONLY | O_CLOEXEC), 0);
    EXPECT_EQ(errno, EACCES);
  }
  const int fd = ::open((dir.path() / "planted").c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << "the agent's own access did not come back";
  if (fd >= 0) ::close(fd);
}

TEST(SandboxTest, ArgvBindsOnlyTheLeasedDevicesNodes) {
  SandboxOptions options;
  options.device_node_dir = "/nodes";
  options.writable = {"/state"};
  const auto argv = SandboxArgv(options, 3, "/w/jobs/7-1", "/w/jobs/7-1/op", {"msprof", "app"});
  const std::vector<std::string> want = {"bwrap",
                                         "--die-with-parent",
                                         "--new-session",
                                         "--unshare-pid",
                                         "--unshare-ipc",
                                         "--ro-bind",
                                         "/",
                                         "/",
                                         "--proc",
                                         "/proc",
                                         "--dev",
                                         "/dev",
                                         "--tmpfs",
                                         "/tmp",
                                         "--tmpfs",
                                         "/nodes",
                                         "--dev-bind-try",
                                         "/nodes/davinci3",
                                         "/nodes/davinci3",
                                         "--dev-bind-try",
                                         "/nodes/davinci_manager",
                                         "/nodes/davinci_manager",
                                         "--dev-bind-try",
                                         "/nodes/devmm_svm",
                                         "/nodes/devmm_svm",
                                         "--dev-bind-try",
                                         "/nodes/hisi_hdc",
                                         "/nodes/hisi_hdc",
                                         "--bind",
                                         "/state",
                                         "/state",
                                         "--bind",
                                         "/w/jobs/7-1",
                                         "/w/jobs/7-1",
                                         "--chdir",
                                         "/w/jobs/7-1/op",
                                         "--",
                                         "msprof",
                                         "app"};
  EXPECT_EQ(argv, want);
}

// The real bwrap: the job sees its own device's node and not the other's, can
// write its directory and its private /tmp, and nothing else.
TEST(SandboxTest, JobReachesOnlyItsDeviceAndItsDirectory) {
  if (std::system("bwrap --ro-bind / / true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "bwrap cannot run here (apt-get install bubblewrap; user namespaces)";
  }
  testing::TempDir dir;
  const fs::path nodes = dir.path() / "nodes", job = dir.path() / "jobs" / "1-1";
  fs::create_directories(nodes);
  fs::create_directories(job);
  for (const char* n : {"davinci0", "davinci1", "davinci_manager"}) Write(nodes / n, "");
  // Under the private /tmp the runner may create its own "outside"; the host's stays as it is.
  Write(dir.path() / "outside", "host file\n");
  SandboxOptions options;
  options.device_node_dir = nodes.string();
  RealClock clock;
  SubprocessRunner runner(clock);
  ProfilerSpec spec =
      Contained(dir,
                "for f in davinci0 davinci1 davinci_manager; do [ -e $NODES/$f ] && echo $f; done; "
                "echo x > $JOB/mine && echo wrote-job; echo x > $OUTSIDE 2>/dev/null; "
                "echo x > /etc/npuperf-sandbox-probe 2>/dev/null && echo wrote-etc; "
                "echo x > /tmp/t && echo wrote-tmp; echo end");
  spec.env["NODES"] = nodes.string();
  spec.env["JOB"] = job.string();
  spec.env["OUTSIDE"] = (dir.path() / "outside").string();
  spec.cwd = job.string();
  spec.stdout_path = (dir.path() / "out").string();
  spec.argv = SandboxArgv(options, 0, job, spec.cwd, spec.argv);
  auto p = runner.Start(spec);
  ASSERT_TRUE(p.ok()) << p.status();
  const ExitStatus s = (*p)->Wait(clock.MonotonicNow() + seconds(20));
  EXPECT_TRUE(s.ok()) << s.ToString() << " " << Read(dir.path() / "err");
  EXPECT_EQ(Read(dir.path() / "out"), "davinci0\ndavinci_manager\nwrote-job\nwrote-tmp\nend\n")
      << Read(dir.path() / "err");
  EXPECT_EQ(Read(dir.path() / "outside"), "host file\n");
  EXPECT_FALSE(fs::exists("/etc/npuperf-sandbox-probe"));
}

}  // namespace
}  // namespace npuperf::agent
