// The agent's device handling and reliability through the real binaries:
// external locks, a crashed agent, cancellation, spooled results.
#include <dirent.h>

#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/flock_device_lock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using std::chrono::seconds;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";
const std::vector<std::string> kFastServer = {"--lease-ttl-ms", "3000", "--reaper-ms", "200",
                                              "--heartbeat-ms", "300"};

std::string Operator() { return (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(); }

std::string SubmitNoWait(Cluster& c, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--format",  "json",  "submit",   Operator(),
                                   "--op-name", kKernel, "--no-wait"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = c.Cli(args);
  EXPECT_EQ(r.exit_code, 0) << "--no-wait: queued is success: " << r.err;
  v1::Collection col;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out << r.err;
  return col.id();
}

// Processes whose command line mentions path (the job's scratch directory).
std::vector<int> ProcessesMentioning(const std::string& path) {
  std::vector<int> out;
  DIR* proc = ::opendir("/proc");
  while (dirent* e = ::readdir(proc)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"), std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
    std::string st((std::istreambuf_iterator<char>(stat)), {});
    const auto close = st.rfind(')');
    const bool zombie = close != std::string::npos && close + 2 < st.size() && st[close + 2] == 'Z';
    if (!zombie && cmdline.find(path) != std::string::npos) out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

bool NoneWithin(const std::string& path, seconds timeout) {
  const auto deadline = WallClock().MonotonicNow() + timeout;
  while (WallClock().MonotonicNow() < deadline) {
    if (ProcessesMentioning(path).empty()) return true;
    WallClock().SleepFor(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(AgentProtocolTest, TwoAgentsSharingLocksNeverDoubleBookADevice) {
  Cluster c;
  c.Start("");
  // Same host, same lock dir; devices 2-3 are served by both. Identical
  // ranges would not prove both worked: an agent re-offers a device the
  // moment its job ends (#18), so whichever agent locks first can keep every
  // shared device busy, which is right but leaves nothing to compare.
  auto a1 = c.StartAgent("0-3", "a1");
  auto a2 = c.StartAgent("2-5", "a2");
  // 60 jobs on 6 devices: ten waves in which both agents contend for devices
  // 2-3. (It was 100: 158 s, a quarter of integration_test, on the serial
  // chain of real-binary tests that bounds CI's time; the chaos suites also
  // check that no device is ever double-booked.)
  constexpr int kCollections = 15;
  std::vector<std::string> ids;
  for (int i = 0; i < kCollections; ++i) {
    ids.push_back(SubmitNoWait(
        c, {"--quick", "--warm-up", "0", "--repeats", "1", "--case-arg=--case-id", "--case-id",
            "p0", "--case-id", "p1", "--case-id", "p2", "--case-id", "s1"}));
  }
  std::map<std::string, int> by_agent;
  int jobs = 0;
  for (const auto& id : ids) {
    auto col = c.WaitFor(id, Terminal, seconds(600));
    ASSERT_EQ(col.state(), v1::COLLECTION_STATE_SUCCEEDED) << col.DebugString();
    for (const auto& j : col.jobs()) {
      ++jobs;
      ++by_agent[j.placement().agent_id()];
    }
  }
  EXPECT_EQ(jobs, 4 * kCollections);
  EXPECT_EQ(by_agent.size(), 2u) << "both agents should have worked; a1:\n"
                                 << a1->Log() << "\na2:\n"
                                 << a2->Log();
  EXPECT_FALSE(std::filesystem::exists(c.dir.path() / "conflicts.log"))
      << "msprof-sim saw a double-booked device";
}

TEST(AgentProtocolTest, ExternallyLockedDeviceIsNeverLeased) {
  Cluster c;
  c.Start("");
  agent::FlockDeviceLocker other_tool((c.dir.path() / "locks").string());
  auto held = other_tool.TryLock(2);
  ASSERT_TRUE(held.ok()) << held.status();
  c.agent = c.StartAgent("2-3", "agent");
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(SubmitNoWait(c, {"--quick", "--warm-up", "0", "--repeats", "1"}));
  for (const auto& id : ids) {
    auto col = c.WaitFor(id, Terminal, seconds(120));
    ASSERT_EQ(col.state(), v1::COLLECTION_STATE_SUCCEEDED) << col.DebugString();
    EXPECT_EQ(col.jobs(0).placement().device_id(), 3) << "ran on the externally locked device";
  }
  // A job that may only use device 2 waits for the other tool to let go.
  const std::string pinned =
      SubmitNoWait(c, {"--quick", "--warm-up", "0", "--repeats", "1", "--devices", "2"});
  WallClock().SleepFor(seconds(2));
  EXPECT_EQ(c.Get(pinned).jobs(0).state(), v1::JOB_STATE_QUEUED);
  held->reset();
  auto col = c.WaitFor(pinned, Terminal, seconds(60));
  EXPECT_EQ(col.state(), v1::COLLECTION_STATE_SUCCEEDED);
  EXPECT_EQ(col.jobs(0).placement().device_id(), 2);
}

TEST(AgentProtocolTest, KilledAgentsJobIsRetriedElsewhereAndStoredOnce) {
  Cluster c;
  c.Start("", kFastServer);
  const std::map<std::string, std::string> slow = {{"MSPROF_SIM_FAULT", "hang:1"}};
  auto doomed = c.StartAgent("0", "doomed", slow);
  const std::string id = SubmitNoWait(c, {"--warm-up", "0", "--repeats", "1"});
  auto during = c.WaitFor(
      id,
      [](const v1::Collection& col) {
        return col.jobs_size() == 1 && col.jobs(0).progress().phase() == v1::JOB_PHASE_METRIC_RUN &&
               col.jobs(0).progress().step() >= 4;
      },
      seconds(120));
  ASSERT_GE(during.jobs(0).progress().step(), 4) << during.DebugString();
  doomed->Kill();
  const std::string scratch = (c.dir.path() / "doomed" / "jobs").string();
  EXPECT_TRUE(NoneWithin(scratch, seconds(10))) << "children of the killed agent survived";
  auto rescuer = c.StartAgent("1", "rescuer");
  auto done = c.WaitFor(id, Terminal, seconds(180));
  ASSERT_EQ(done.state(), v1::COLLECTION_STATE_SUCCEEDED) << done.DebugString();
  EXPECT_EQ(done.jobs(0).attempt(), 2);
  EXPECT_EQ(done.jobs(0).placement().device_id(), 1);
  auto rounds = c.Cli({"rounds", "--collection", id});
  EXPECT_EQ(rounds.exit_code, 0);
  EXPECT_EQ(std::count(rounds.out.begin(), rounds.out.end(), '\n'), 2) << rounds.out;  // header + 1
}

TEST(AgentProtocolTest, CancelDuringTheSampleRunFreesTheDevice) {
  Cluster c;
  c.Start("", kFastServer);
  c.agent = c.StartAgent("0", "agent", {{"MSPROF_SIM_FAULT", "hang:3"}});
  const std::string id = SubmitNoWait(c, {"--warm-up", "0", "--repeats", "1"});
  auto sampling = c.WaitFor(
      id,
      [](const v1::Collection& col) {
        return col.jobs_size() == 1 && col.jobs(0).progress().phase() == v1::JOB_PHASE_SAMPLE_RUN;
      },
      seconds(300));
  ASSERT_EQ(sampling.jobs(0).progress().phase(), v1::JOB_PHASE_SAMPLE_RUN)
      << sampling.DebugString();
  const auto cancelled_at = WallClock().MonotonicNow();
  EXPECT_EQ(c.Cli({"cancel", id, "--reason", "test"}).exit_code, 0);
  auto done = c.WaitFor(id, Terminal, seconds(30));
  EXPECT_EQ(done.state(), v1::COLLECTION_STATE_CANCELLED) << done.DebugString();
  EXPECT_LT(WallClock().MonotonicNow() - cancelled_at, seconds(10));
  EXPECT_TRUE(NoneWithin((c.dir.path() / "agent" / "jobs").string(), seconds(10)));
  // The device is leased again.
  const std::string next = SubmitNoWait(c, {"--quick", "--warm-up", "0", "--repeats", "1"});
  EXPECT_EQ(c.WaitFor(next, Terminal, seconds(60)).state(), v1::COLLECTION_STATE_SUCCEEDED);
}

TEST(AgentProtocolTest, CrashingRunnerIsRetriedThenFailsWithTheLogTail) {
  Cluster c;
  c.Start("");
  c.agent = c.StartAgent("0", "agent", {{"MSPROF_SIM_FAULT", "fail:Memory:3"}});
  const std::string id = SubmitNoWait(c, {"--warm-up", "0", "--repeats", "1", "--retry", "1"});
  auto done = c.WaitFor(id, Terminal, seconds(300));
  ASSERT_EQ(done.state(), v1::COLLECTION_STATE_FAILED) << done.DebugString();
  EXPECT_EQ(done.jobs(0).attempt(), 2);
  EXPECT_NE(done.jobs(0).reason().find("metric run Memory"), std::string::npos)
      << done.jobs(0).reason();
  EXPECT_NE(done.jobs(0).reason().find("exit code 3"), std::string::npos) << done.jobs(0).reason();
}

TEST(AgentProtocolTest, ServerRestartDuringABatchLosesNothing) {
  Cluster c;
  c.Start("");
  c.agent = c.StartAgent("0-3", "agent", {{"MSPROF_SIM_FAULT", "hang:1"}});
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(SubmitNoWait(
        c, {"--quick", "--warm-up", "0", "--repeats", "1", "--case-arg=--case-id", "--case-id",
            "p0", "--case-id", "p1", "--case-id", "p2", "--case-id", "s1"}));
  }
  // Restart while jobs run and others wait in the queue.
  c.WaitFor(
      ids[0], [](const v1::Collection& col) { return col.counts().succeeded() >= 1; },
      seconds(120));
  EXPECT_EQ(c.server->Stop(), 0);
  c.RestartServer();
  int rounds = 0;
  for (const auto& id : ids) {
    auto col = c.WaitFor(id, Terminal, seconds(300));
    ASSERT_EQ(col.state(), v1::COLLECTION_STATE_SUCCEEDED) << col.DebugString() << c.agent->Log();
    auto r = c.Cli({"rounds", "--collection", id});
    rounds += static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n')) - 1;  // minus header
  }
  EXPECT_EQ(rounds, 12) << "every job stored exactly one round";
}

TEST(AgentProtocolTest, ResultIsDeliveredOnceTheServerIsBack) {
  Cluster c;
  c.Start("");
  c.agent = c.StartAgent("0", "agent", {{"MSPROF_SIM_FAULT", "hang:2"}});
  const std::string id = SubmitNoWait(c, {"--quick", "--warm-up", "0", "--repeats", "2"});
  auto running = c.WaitFor(
      id,
      [](const v1::Collection& col) {
        return col.jobs_size() == 1 && col.jobs(0).state() == v1::JOB_STATE_RUNNING;
      },
      seconds(60));
  ASSERT_EQ(running.jobs(0).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(c.server->Stop(), 0);
  // The job finishes while the server is down: the result waits in the spool.
  ASSERT_TRUE(c.agent->WaitForLine("attempt 1 succeeded", seconds(60)).ok()) << c.agent->Log();
  c.RestartServer();
  auto done = c.WaitFor(id, Terminal, seconds(90));
  EXPECT_EQ(done.state(), v1::COLLECTION_STATE_SUCCEEDED) << done.DebugString() << c.agent->Log();
  ASSERT_EQ(done.jobs_size(), 1);  // none when the collection could not be read: no crash
  EXPECT_GT(done.jobs(0).kernel_time_us(), 0);
}

}  // namespace
}  // namespace npuperf::testing
