// Issue 14: a hostile runner, submitted like any operator, against the real
// agent (root, --run-as-pool with users the test creates) and server. Every
// attempt to see or touch what is not its own fails, nothing it starts
// outlives its job, and the device's next job runs normally.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";
constexpr const char* kUsers[] = {"npuperf-t14run0", "npuperf-t14run1"};

// Tries everything the issue's probe did; every outcome goes to report.json
// in the drop box (the one directory the test leaves writable to it).
constexpr char kEvilRunner[] = R"PY(import json, os, signal, subprocess, sys
R = {}
def probe(name, fn):
    try:
        fn()
        R[name] = "ok"
    except OSError as e:
        R[name] = "denied: " + (e.strerror or str(e))
probe("read_token", lambda: open("@TOKEN@").read())
probe("list_spool", lambda: os.listdir("@WORK@/spool"))
probe("list_bundles", lambda: os.listdir("@WORK@/bundles"))
probe("list_jobs", lambda: os.listdir("@WORK@/jobs"))
try:
    R["jobs_seen"] = sorted(os.listdir("@WORK@/jobs"))
except OSError:
    R["jobs_seen"] = []
probe("read_other_job", lambda: open("@OTHER@/secret").read())
probe("write_work_dir", lambda: open("@WORK@/evil", "w").write("x"))
probe("write_etc", lambda: open("/etc/npuperf-evil", "w").write("x"))
probe("agent_environ", lambda: open("/proc/@AGENT@/environ").read())
probe("other_device_node", lambda: open("@NODES@/davinci1", "r+").close())
probe("own_device_node", lambda: open("@NODES@/davinci0", "r+").close())
probe("host_tmp", lambda: open("/tmp/npuperf-evil-probe", "w").write("x"))
R["uid"] = os.getuid()
R["utf8_name"] = os.path.exists("说明.md")
daemon = subprocess.Popen(["setsid", "sleep", "240"])
open("@DROP@/daemon", "w").write(str(daemon.pid))
child = os.fork()
if child == 0:
    if os.fork() == 0:
        open("@DROP@/orphan", "w").write(str(os.getpid()))
        signal.pause()
    os._exit(0)
os.waitpid(child, 0)
forks = 0
try:
    while forks < 5000:
        if os.fork() == 0:
            signal.pause()
            os._exit(0)
        forks += 1
except OSError as e:
    R["fork_bomb"] = "stopped: " + e.strerror
R["forks"] = forks
json.dump(R, open("@DROP@/report.json", "w"))
)PY";

bool Alive(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string st((std::istreambuf_iterator<char>(in)), {});
  const auto close = st.rfind(')');
  return close != std::string::npos && close + 2 < st.size() && st[close + 2] != 'Z';
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

class EvilRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root: the agent switches runners to per-device users the test creates";
    }
    for (const char* user : kUsers) {
      if (::getpwnam(user) != nullptr) continue;
      const std::string cmd =
          absl::StrCat("useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin ",
                       user, " 2>&1");
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      created_.push_back(user);
    }
  }
  void TearDown() override {
    for (const auto& user : created_) (void)!std::system(("userdel " + user).c_str());
  }
  std::vector<std::string> created_;
};

std::string Submit(Cluster& c, const std::string& dir, const std::string& op_name) {
  auto r = c.Cli({"--format", "json", "submit", dir, "--op-name", op_name, "--quick", "--warm-up",
                  "0", "--repeats", "1", "--no-wait"});
  v1::Collection col;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out << r.err;
  return col.id();
}

// The paths of the evil runner's world under the cluster's directory.
struct World {
  explicit World(const Cluster& c)
      : drop(c.dir.path() / "drop"),
        token(c.dir.path() / "agent.token"),
        work(c.dir.path() / "agent"),
        nodes(c.dir.path() / "nodes"),
        state(c.dir.path() / "sim-state"),
        conflicts(c.dir.path() / "conflicts.log"),
        other(work / "jobs" / "999-1") {}
  fs::path drop, token, work, nodes, state, conflicts, other;
};

// A one-device agent (root, run-as pool; sandboxed or not) with the
// simulator's shared files open to the run users, a 0600 token, two device
// nodes and a drop box for the runner's report.
void StartAgent(Cluster& c, const World& w, bool sandbox) {
  for (const fs::path& d : {w.drop, w.state, w.nodes}) {
    fs::create_directories(d);
    fs::permissions(d, fs::perms(01777));
  }
  for (const fs::path& f : {w.conflicts, w.nodes / "davinci0", w.nodes / "davinci1"}) {
    std::ofstream(f).close();
    fs::permissions(f, fs::perms(0666));
  }
  fs::remove("/tmp/npuperf-evil-probe");
  std::ofstream(w.token) << "agent-secret-token\n";
  fs::permissions(w.token, fs::perms(0600));
  c.agent_flags = {"--run-as-pool", kUsers[0],       "--job-pids-max", "64",
                   "--token-file",  w.token.string()};
  if (sandbox) {
    c.agent_flags.insert(c.agent_flags.end(),
                         {"--sandbox", "bwrap", "--device-node-dir", w.nodes.string(),
                          "--sandbox-writable", w.drop.string(), "--sandbox-writable",
                          w.state.string(), "--sandbox-writable", w.conflicts.string()});
  }
  c.Start("");
  c.agent = c.StartAgent("0", "agent", {{"MSPROF_SIM_DEVICE_NODES", w.nodes.string()}});
}

// Another team's running job: its directory belongs to another run uid.
void MakeOtherTeamsJob(const World& w) {
  fs::create_directories(w.other);
  std::ofstream(w.other / "secret") << "other team's data\n";
  const uid_t other_uid = ::getpwnam(kUsers[1])->pw_uid;
  EXPECT_EQ(::chown(w.other.c_str(), other_uid, 0), 0);
  EXPECT_EQ(::chown((w.other / "secret").c_str(), other_uid, 0), 0);
  fs::permissions(w.other, fs::perms(0700));
  fs::permissions(w.other / "secret", fs::perms(0600));
}

// Runs the evil job and returns its report (checked for what holds in both modes).
// In the sandbox the cluster's directory (under the host's /tmp) is not there
// at all: the private /tmp holds only the paths bwrap binds, so the runner may
// list the job directory's parent and write beside it there, never on the host.
nlohmann::json RunEvil(Cluster& c, const World& w, bool sandbox) {
  const fs::path evil = c.dir.path() / "evil_op";
  fs::create_directories(evil);
  std::ofstream(evil / "test_evil.py")
      << absl::StrReplaceAll(kEvilRunner, {{"@TOKEN@", w.token.string()},
                                           {"@WORK@", w.work.string()},
                                           {"@OTHER@", w.other.string()},
                                           {"@DROP@", w.drop.string()},
                                           {"@NODES@", w.nodes.string()},
                                           {"@AGENT@", std::to_string(c.agent->pid())}});
  std::ofstream(evil / "说明.md") << "# 说明\n";
  auto col = c.WaitFor(Submit(c, evil.string(), kKernel), Terminal, seconds(300));
  EXPECT_TRUE(Terminal(col)) << col.DebugString();
  auto report = nlohmann::json::parse(ReadFile(w.drop / "report.json"), nullptr, false);
  EXPECT_TRUE(report.is_object()) << "no report from the runner; job: " << col.DebugString();
  if (!report.is_object()) return report;
  std::vector<std::string> denied = {"read_token",     "list_spool", "list_bundles",
                                     "read_other_job", "write_etc",  "agent_environ"};
  if (!sandbox) denied.insert(denied.end(), {"list_jobs", "write_work_dir"});
  for (const std::string& probe : denied) {
    EXPECT_EQ(report.value(probe, "").rfind("denied", 0), 0u)
        << probe << ": " << report.value(probe, "") << "\nreport: " << report.dump();
  }
  EXPECT_FALSE(fs::exists(w.work / "evil")) << "the runner wrote the agent's work directory";
  for (const auto& seen : report.value("jobs_seen", nlohmann::json::array())) {
    EXPECT_NE(seen.get<std::string>(), w.other.filename().string())
        << "the runner saw another job: " << report.dump();
  }
  EXPECT_EQ(report.value("own_device_node", ""), "ok");
  EXPECT_EQ(report.value("uid", 0), static_cast<int>(::getpwnam(kUsers[0])->pw_uid));
  EXPECT_TRUE(report.value("utf8_name", false)) << "说明.md did not reach the runner";
  EXPECT_LT(report.value("forks", 9999), 64) << "the fork bomb was not bounded";
  return report;
}

// The device's next job: it must run, and only after every process of the
// evil one is verified gone. Returns the agent's log.
std::string RunNormal(Cluster& c, const World& w, bool sandbox) {
  auto col =
      c.WaitFor(Submit(c, (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(), kKernel),
                Terminal, seconds(300));
  EXPECT_EQ(col.state(), v1::COLLECTION_STATE_SUCCEEDED) << col.DebugString();
  // Inside the sandbox's pid namespace the pids the runner saw are not the host's.
  for (const char* name : {"daemon", "orphan"}) {
    const std::string pid = ReadFile(w.drop / name);
    EXPECT_FALSE(pid.empty()) << name;
    if (!pid.empty() && !sandbox) {
      EXPECT_FALSE(Alive(std::stoi(pid))) << name << " " << pid << " outlived its job";
    }
  }
  const std::string log = ReadFile(c.dir.path() / "agent.log");
  const auto reclaimed = log.find("device 0: no process of the last job is left");
  EXPECT_NE(reclaimed, std::string::npos) << log;
  const auto first = log.find(") on device 0");
  const auto second = log.find(") on device 0", first + 1);
  EXPECT_NE(second, std::string::npos) << log;
  EXPECT_LT(reclaimed, second) << "the device was leased again before the job was reclaimed";
  EXPECT_EQ(log.find("agent-secret-token"), std::string::npos);
  EXPECT_FALSE(fs::exists("/etc/npuperf-evil"));
  return log;
}

TEST_F(EvilRunnerTest, RunnerSeesAndOutlivesNothingAndTheNextJobRuns) {
  Cluster c;
  const World w(c);
  StartAgent(c, w, false);
  ASSERT_NE(c.agent, nullptr);
  MakeOtherTeamsJob(w);
  RunEvil(c, w, false);
  RunNormal(c, w, false);
  fs::remove("/tmp/npuperf-evil-probe");  // without the sandbox the host's /tmp is shared
}

// --sandbox bwrap on top: the other device's node is not there, and the
// host's /tmp is not the runner's.
TEST_F(EvilRunnerTest, SandboxHidesOtherDevicesAndTheHostTmp) {
  if (std::system("bwrap --ro-bind / / true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "bwrap cannot run here (apt-get install bubblewrap)";
  }
  Cluster c;
  const World w(c);
  StartAgent(c, w, true);
  ASSERT_NE(c.agent, nullptr);
  MakeOtherTeamsJob(w);
  const nlohmann::json report = RunEvil(c, w, true);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report.value("other_device_node", "").rfind("denied", 0), 0u)
      << report.value("other_device_node", "");
  EXPECT_EQ(report.value("host_tmp", ""), "ok") << "the private /tmp is writable";
  EXPECT_FALSE(fs::exists("/tmp/npuperf-evil-probe")) << "the runner wrote the host's /tmp";
  EXPECT_NE(RunNormal(c, w, true).find("jobs run in a sandbox"), std::string::npos);
}

}  // namespace
}  // namespace npuperf::testing
