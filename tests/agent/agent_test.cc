#include "agent/agent.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/constants.h"
#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "tests/agent/fake_agent_server.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_device_locker.h"
#include "tests/fakes/fake_profiler_runner.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using Fake = testing::FakeProfilerRunner;
using testing::kFakeAgentId;
using testing::kFakeHeartbeatMs;

const fs::path kTestData = NPUPERF_EVIDENCE_TESTDATA;

class AgentTest : public ::testing::Test {
 protected:
  AgentTest() : server_(clock_), fake_(clock_), metrics_(registry_) {}
  ~AgentTest() override {
    if (run_.joinable()) StopAgent();
  }

  // Packs an operator directory "op" with one runner; returns the tar.
  std::string PackOperator() {
    const fs::path src = dir_.path() / "src" / "op";
    fs::create_directories(src);
    std::ofstream(src / "test_op.py") << "# the operator's runner\n";
    auto tar = PackBundle(src, 1 << 20);
    EXPECT_TRUE(tar.ok()) << tar.status();
    sha256_ = Sha256Hex(*tar);
    return *tar;
  }
  // The bundle as an earlier job left it in the agent's cache.
  void CacheBundle() {
    const std::string tar = PackOperator();
    fs::create_directories(work() / "bundles");
    std::ofstream(work() / "bundles" / (sha256_ + ".tar"), std::ios::binary) << tar;
  }

  // A quick-mode job of the cached bundle (one task-time run, no warm-up);
  // quick_mix launches main_kernel three times, the job takes the last.
  v1::JobAssignment Job(int64_t id, int device) const {
    v1::JobAssignment a;
    a.set_job_id(id);
    a.set_attempt(1);
    a.set_fencing_token(40 + id);
    a.set_device_id(device);
    a.set_soc("Ascend910B2");
    a.set_operator_name("op");
    a.set_bundle_sha256(sha256_);
    a.set_op_name("main_kernel");
    a.set_launch("-1");
    a.mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
    a.mutable_params()->set_repeats(1);
    a.mutable_params()->set_timeout_seconds(3600);
    return a;
  }

  void StartAgent(const std::vector<int>& devices, bool serve_bundles = false) {
    channel_ = std::make_unique<ServerChannel>(server_.Stub(serve_bundles), "token", clock_);
    AgentOptions o;
    o.devices = devices;
    for (int d : devices) o.socs[d] = "Ascend910B2";
    o.work_dir = work();
    // Every report goes (the throttle is ProgressSenderTest's): the tests below count clock
    // waiters.
    o.progress_interval = std::chrono::milliseconds(0);
    o.host = "host-a";
    o.boot_id = "boot-1";
    o.instance_id = "instance-1";
    JobRunnerOptions j;
    j.msprof = "msprof";
    j.python = "python3";
    j.agent_env = {{"PATH", "/usr/bin:/bin"}};
    agent_ = std::make_unique<Agent>(*channel_, locker_, fake_, metrics_, clock_, o, j);
    run_ = std::thread([this] {
      agent_->Run(stop_);
      stopped_ = true;
    });
  }
  // What SIGTERM does in npuperf-agent. A hanging child sees the shutdown at
  // its next cancellation poll, so the clock moves on until Run returns.
  void StopAgent() {
    stop_ = true;
    agent_->Stop();
    server_.Close();
    while (!stopped_) {
      clock_.Advance(kCancelPoll);
      std::this_thread::yield();
    }
    run_.join();
  }

  // Job 7 (fencing token 47) parked in its timing run on device 0, the agent's session open.
  void StartParkedJob() {
    CacheBundle();
    fake_.On(Fake::HasArg("--task-time=on"), Fake::Hang());
    server_.Queue(Job(7, 0));
    StartAgent({0});
    ASSERT_TRUE(fake_.AwaitHangsParked(1));
    ASSERT_TRUE(server_.AwaitSessions(1));
  }
  // One heartbeat period on the clock, and the heartbeat it brings.
  void NextHeartbeat() {
    const size_t seen = server_.heartbeats().size();
    clock_.Advance(std::chrono::milliseconds(kFakeHeartbeatMs));
    ASSERT_TRUE(server_.AwaitHeartbeats(seen + 1));
  }

  fs::path work() const { return dir_.path() / "work"; }
  double JobsTotal(const std::string& outcome) {
    return metrics_.jobs.Add({{"outcome", outcome}}).Value();
  }
  static v1::ReportResultRequest Spooled(int64_t job) {
    v1::ReportResultRequest r;
    r.set_job_id(job);
    r.set_attempt(1);
    r.set_fencing_token(40 + job);
    r.set_update_uuid(absl::StrCat("uuid-", job));
    r.set_agent_id("agent-before-restart");
    r.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
    return r;
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  testing::FakeAgentServer server_;
  testing::FakeDeviceLocker locker_;
  Fake fake_;
  prometheus::Registry registry_;
  AgentMetrics metrics_;
  std::string sha256_;
  std::unique_ptr<ServerChannel> channel_;
  std::unique_ptr<Agent> agent_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stopped_{false};
  std::thread run_;
};

TEST_F(AgentTest, LeasedJobRunsOnItsDeviceUnderItsLockAndItsResultIsReported) {
  CacheBundle();
  locker_.SetBusy(0, true);  // another process holds device 0
  std::vector<std::set<int>> held_at_start;
  fake_.set_on_start([&](const ProfilerSpec&) { held_at_start.push_back(locker_.held()); });
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(0, kTestData / "quick_mix"));
  server_.Queue(Job(7, 1));
  const Clock::SystemTime started = clock_.SystemNow();

  StartAgent({0, 1});
  ASSERT_TRUE(server_.AwaitResults(1));
  StopAgent();

  const auto leases = server_.leases();
  ASSERT_FALSE(leases.empty());
  EXPECT_EQ(leases[0].agent_id(), kFakeAgentId);
  EXPECT_EQ(leases[0].wait_ms(), kLeaseWaitMs);
  ASSERT_EQ(leases[0].free_devices_size(), 1) << "device 0 is locked elsewhere: not offered";
  EXPECT_EQ(leases[0].free_devices(0).device_id(), 1);
  EXPECT_GE(metrics_.lock_contention.Value(), 1);
  const auto specs = fake_.started();
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].env.at("ASCEND_RT_VISIBLE_DEVICES"), "1");
  EXPECT_THAT(held_at_start, ElementsAre(std::set<int>{1})) << "runs under its device lock";
  const auto results = server_.results();
  ASSERT_EQ(results.size(), 1u);
  const v1::ReportResultRequest& r = results[0];
  EXPECT_EQ(r.job_id(), 7);
  EXPECT_EQ(r.attempt(), 1);
  EXPECT_EQ(r.fencing_token(), 47);
  EXPECT_EQ(r.agent_id(), kFakeAgentId);
  EXPECT_FALSE(r.update_uuid().empty());
  EXPECT_EQ(r.outcome(), v1::ATTEMPT_OUTCOME_SUCCEEDED);
  EXPECT_THAT(r.evidence().duration().samples_us(), ElementsAre(86849.340));  // quick_mix
  EXPECT_EQ(r.evidence().fingerprint().device_id(), 1);
  std::vector<v1::JobPhase> phases;
  for (const auto& p : server_.progress()) {
    EXPECT_EQ(p.fencing_token(), 47);
    phases.push_back(p.progress().phase());
  }
  // Off the job's thread (ProgressSender, interval 0 here): a report the sender's thread had not
  // taken yet gives way to a newer one, and the one just before the result always goes, last.
  const std::vector<v1::JobPhase> all = {v1::JOB_PHASE_PREPARING, v1::JOB_PHASE_TIMING_RUN,
                                         v1::JOB_PHASE_PARSING, v1::JOB_PHASE_UPLOADING};
  ASSERT_FALSE(phases.empty());
  EXPECT_EQ(phases.back(), v1::JOB_PHASE_UPLOADING);
  auto next = all.begin();
  for (v1::JobPhase p : phases) {
    next = std::find(next, all.end(), p);
    ASSERT_NE(next, all.end()) << "phase " << p << " out of order or unknown";
    ++next;
  }
  EXPECT_EQ(JobsTotal("succeeded"), 1);
  EXPECT_TRUE(locker_.held().empty());
  EXPECT_FALSE(fs::exists(work() / "jobs" / "7-1")) << "scratch removed";
  EXPECT_TRUE(ResultSpool(work() / "spool").Pending()->empty()) << "acknowledged, so unspooled";
  // Deadlines come from the injected clock: registration at its now + 15 s.
  ASSERT_FALSE(server_.register_deadlines().empty());
  EXPECT_EQ(server_.register_deadlines()[0], started + kRpcDeadline);
}

// One LeaseJob call asks for a job on every free device (issue 36), and the
// agent starts every assignment the answer carries, each on its own device.
TEST_F(AgentTest, OneLeaseCallStartsAJobOnEachFreeDevice) {
  CacheBundle();
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(0, kTestData / "quick_mix"));
  server_.Queue(Job(7, 0));
  server_.Queue(Job(8, 1));

  StartAgent({0, 1});
  ASSERT_TRUE(server_.AwaitResults(2));
  StopAgent();

  const auto leases = server_.leases();
  ASSERT_FALSE(leases.empty());
  EXPECT_EQ(leases[0].free_devices_size(), 2);
  EXPECT_EQ(leases[0].max_assignments(), 2);
  std::set<std::string> visible;
  for (const auto& spec : fake_.started()) visible.insert(spec.env.at("ASCEND_RT_VISIBLE_DEVICES"));
  EXPECT_EQ(visible, (std::set<std::string>{"0", "1"}));
  std::set<int64_t> reported;
  for (const auto& r : server_.results()) {
    EXPECT_EQ(r.outcome(), v1::ATTEMPT_OUTCOME_SUCCEEDED);
    reported.insert(r.job_id());
  }
  EXPECT_EQ(reported, (std::set<int64_t>{7, 8}));
  EXPECT_EQ(JobsTotal("succeeded"), 2);
  EXPECT_TRUE(locker_.held().empty());
}

TEST_F(AgentTest, BundleMissingFromTheCacheIsDownloadedVerifiedAndCached) {
  const std::string tar = PackOperator();
  server_.AddBundle(sha256_, tar);
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(0, kTestData / "quick_mix"));
  server_.Queue(Job(7, 0));
  server_.Queue(Job(8, 0));

  StartAgent({0}, /*serve_bundles=*/true);
  // While job 7 held the only device the lease loop paused; job 7's end ends
  // that pause, so device 0 is offered again with no time passing.
  ASSERT_TRUE(server_.AwaitResults(2));
  StopAgent();

  EXPECT_EQ(server_.downloads(), 1) << "the second job uses the cached copy";
  EXPECT_TRUE(fs::exists(work() / "bundles" / (sha256_ + ".tar")));
  for (const auto& r : server_.results()) EXPECT_EQ(r.outcome(), v1::ATTEMPT_OUTCOME_SUCCEEDED);
}

// CI: a server restarting while a job fetched its bundle failed the job for good (its one attempt
// spent). The server's going away says nothing of the job: the attempt is INTERRUPTED, which the
// server queues again without spending a retry.
TEST_F(AgentTest, ABundleDownloadCutByTheServerGoingAwayIsAnInterruptionNotAFailure) {
  server_.AddBundle(sha256_, PackOperator());
  server_.FailBundles(grpc::StatusCode::UNAVAILABLE);
  server_.Queue(Job(7, 0));

  StartAgent({0}, /*serve_bundles=*/true);
  ASSERT_TRUE(server_.AwaitResults(1));
  StopAgent();

  const v1::ReportResultRequest r = server_.results()[0];
  EXPECT_EQ(r.outcome(), v1::ATTEMPT_OUTCOME_INTERRUPTED);
  EXPECT_TRUE(r.retryable());
  EXPECT_NE(r.failure_reason().find("the server was unreachable for the bundle"), std::string::npos)
      << r.failure_reason();
  EXPECT_TRUE(fake_.started().empty()) << "the runner never ran";
  EXPECT_FALSE(fs::exists(work() / "bundles" / (sha256_ + ".tar"))) << "nothing cached";
  EXPECT_TRUE(locker_.held().empty());
}

TEST_F(AgentTest, CancelDirectiveStopsTheRunningJobAndItIsReportedCancelled) {
  ASSERT_NO_FATAL_FAILURE(StartParkedJob());

  v1::AgentSessionResponse cancel;
  auto* c = cancel.add_cancels();
  c->set_job_id(7);
  c->set_fencing_token(47);
  c->set_reason("user asked");
  server_.Push(cancel);
  ASSERT_TRUE(server_.AwaitDelivered());
  clock_.Advance(kCancelPoll);  // the job's next look at its cancel flag
  ASSERT_TRUE(server_.AwaitResults(1));
  StopAgent();

  const auto results = server_.results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].job_id(), 7);
  EXPECT_EQ(results[0].outcome(), v1::ATTEMPT_OUTCOME_CANCELLED);
  EXPECT_EQ(results[0].failure_reason(), "cancelled: user asked");
  EXPECT_FALSE(results[0].retryable());
  EXPECT_EQ(fake_.terminated(), 1);
  EXPECT_EQ(JobsTotal("cancelled"), 1);
  EXPECT_TRUE(locker_.held().empty());
}

// A server that reads progress from heartbeats (issue 36) gets no ReportProgress call: the next
// heartbeat carries the job's newest report, the one after it nothing new, and the result still
// goes on its own.
TEST_F(AgentTest, ProgressRidesOnTheHeartbeatsWhenTheServerReadsItThere) {
  server_.SetProgressInHeartbeats(true);
  ASSERT_NO_FATAL_FAILURE(StartParkedJob());
  auto carried = [this](size_t from) {
    std::vector<std::string> out;
    const auto beats = server_.heartbeats();
    for (size_t i = from; i < beats.size(); ++i) {
      for (const auto& j : beats[i].running_jobs()) {
        out.push_back(absl::StrCat(j.job_id(), ":", j.has_progress() ? j.progress().phase() : -1));
      }
    }
    return out;
  };
  // The job is running (its runner parked): its report waits for the next heartbeat.
  ASSERT_NO_FATAL_FAILURE(NextHeartbeat());
  EXPECT_THAT(carried(0),
              ::testing::Contains(absl::StrCat("7:", static_cast<int>(v1::JOB_PHASE_TIMING_RUN))));
  const size_t seen = server_.heartbeats().size();
  ASSERT_NO_FATAL_FAILURE(NextHeartbeat());
  EXPECT_THAT(carried(seen), ElementsAre("7:-1")) << "no news: no progress";

  v1::AgentSessionResponse cancel;
  auto* c = cancel.add_cancels();
  c->set_job_id(7);
  c->set_fencing_token(47);
  server_.Push(cancel);
  ASSERT_TRUE(server_.AwaitDelivered());
  clock_.Advance(kCancelPoll);
  ASSERT_TRUE(server_.AwaitResults(1));
  StopAgent();
  EXPECT_TRUE(server_.progress().empty()) << "no ReportProgress call";
  EXPECT_EQ(server_.results()[0].outcome(), v1::ATTEMPT_OUTCOME_CANCELLED);
}

// A session whose server reads no progress from heartbeats (an older replica behind the same
// address, in a rolling upgrade) says so in its answers: the agent goes back to ReportProgress and
// sends the report the heartbeat had carried, which that server ignored.
TEST_F(AgentTest, AServerThatIgnoresHeartbeatProgressGetsItByReportProgressAgain) {
  server_.SetProgressInHeartbeats(true);
  ASSERT_NO_FATAL_FAILURE(StartParkedJob());
  ASSERT_NO_FATAL_FAILURE(NextHeartbeat());
  EXPECT_TRUE(server_.progress().empty());
  server_.SetProgressInHeartbeats(false);  // the next answer comes from an older replica
  ASSERT_NO_FATAL_FAILURE(NextHeartbeat());
  ASSERT_TRUE(server_.AwaitDelivered());
  ASSERT_TRUE(server_.AwaitProgress(1));
  const auto sent = server_.progress();
  EXPECT_EQ(sent[0].job_id(), 7);
  EXPECT_EQ(sent[0].progress().phase(), v1::JOB_PHASE_TIMING_RUN);
  StopAgent();
}

// Results spooled before a restart are resent, in job order, with their own
// update uuid. An unreachable server (UNAVAILABLE) holds the queue until the
// backoff; a permanent refusal drops that result and the queue goes on
// (Agent::ReportOne).
TEST_F(AgentTest, SpoolIsReplayedAfterARestartUntilAckedAndRefusalsAreDropped) {
  {
    ResultSpool before_restart(work() / "spool");
    for (int64_t job : {1, 2, 3}) ASSERT_TRUE(before_restart.Put(Spooled(job)).ok());
  }
  server_.ScriptResults(1, {grpc::Status(grpc::StatusCode::UNAVAILABLE, "server restarting")});
  server_.ScriptResults(2, {grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "stale token")});

  StartAgent({0});
  ASSERT_TRUE(server_.AwaitResults(1));
  // Only the session thread and the reporter wait on the clock now; the
  // reporter does so in its backoff, having sent nothing more.
  clock_.AwaitWaiters(2);
  EXPECT_EQ(server_.results().size(), 1u);
  clock_.Advance(kRetryMin);  // the longest first backoff
  ASSERT_TRUE(server_.AwaitResults(4));
  StopAgent();

  std::vector<std::string> sent;
  for (const auto& r : server_.results()) {
    sent.push_back(absl::StrCat(r.job_id(), "/", r.update_uuid(), "/", r.agent_id()));
  }
  EXPECT_THAT(sent, ElementsAre("1/uuid-1/agent-before-restart", "1/uuid-1/agent-before-restart",
                                "2/uuid-2/agent-before-restart", "3/uuid-3/agent-before-restart"));
  EXPECT_EQ(ResultSpool(work() / "spool").Depth(), 0u) << "acked and refused results leave";
}

// One result the server cannot take now (RESOURCE_EXHAUSTED here) waits
// for a backoff of its own, and results refused for good (PERMISSION_DENIED:
// not this agent's lease; INVALID_ARGUMENT) are dropped: neither holds back
// the others, and a new job's result is reported at once, the clock never
// moving. Every report and progress carries the lease secret.
TEST_F(AgentTest, ARefusedOrFailingResultNeverHoldsUpTheQueue) {
  {
    ResultSpool before_restart(work() / "spool");
    for (int64_t job : {1, 2, 3}) ASSERT_TRUE(before_restart.Put(Spooled(job)).ok());
  }
  const grpc::Status busy(grpc::StatusCode::RESOURCE_EXHAUSTED, "try later");
  server_.ScriptResults(1, {busy, busy});
  server_.ScriptResults(2, {grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "foreign lease")});
  server_.ScriptResults(3, {grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad evidence")});
  CacheBundle();
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(0, kTestData / "quick_mix"));
  v1::JobAssignment job = Job(7, 0);
  job.set_lease_secret("secret-of-job-7");
  server_.Queue(job);

  StartAgent({0});
  ASSERT_TRUE(server_.AwaitResults(4));  // 1 (not now), 2 and 3 (refused), 7: clock unmoved
  std::multiset<int64_t> sent;
  for (const auto& r : server_.results()) sent.insert(r.job_id());
  EXPECT_EQ(sent, (std::multiset<int64_t>{1, 2, 3, 7}));
  for (const auto& r : server_.results()) {
    if (r.job_id() == 7) {
      EXPECT_EQ(r.lease_secret(), "secret-of-job-7");
    }
  }
  for (const auto& p : server_.progress()) EXPECT_EQ(p.lease_secret(), "secret-of-job-7");
  EXPECT_EQ(metrics_.results_refused.Value(), 2);
  // Job 1 again after its own backoff (at most kRetryMin, then 2 * kRetryMin).
  clock_.Advance(kRetryMin);
  ASSERT_TRUE(server_.AwaitResults(5));
  clock_.Advance(2 * kRetryMin);
  ASSERT_TRUE(server_.AwaitResults(6));
  StopAgent();
  EXPECT_EQ(server_.results().back().job_id(), 1);
  EXPECT_EQ(ResultSpool(work() / "spool").Depth(), 0u);
}

TEST_F(AgentTest, LostSessionReRegistersWithTheRunningJob) {
  CacheBundle();
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Hang());
  server_.Queue(Job(7, 0));
  StartAgent({0});
  ASSERT_TRUE(fake_.AwaitHangsParked(1));
  ASSERT_TRUE(server_.AwaitHeartbeats(1));

  server_.BreakSession();
  clock_.Advance(std::chrono::milliseconds(kFakeHeartbeatMs));  // the next heartbeat fails
  ASSERT_TRUE(server_.AwaitRegistrations(2));
  const auto registrations = server_.registrations();
  EXPECT_EQ(registrations[0].running_jobs_size(), 0);
  ASSERT_EQ(registrations[1].running_jobs_size(), 1);
  const v1::RunningJob& running = registrations[1].running_jobs(0);
  EXPECT_EQ(running.job_id(), 7);
  EXPECT_EQ(running.attempt(), 1);
  EXPECT_EQ(running.fencing_token(), 47);
  EXPECT_EQ(running.device_id(), 0);
  EXPECT_FALSE(running.result_pending());
  EXPECT_EQ(metrics_.reconnects.Value(), 1);

  // The server adopted the job; after the reconnect backoff a new session
  // carries it in its heartbeats while it keeps running.
  clock_.Advance(kRetryMax);
  ASSERT_TRUE(server_.AwaitSessions(2));
  ASSERT_TRUE(server_.AwaitHeartbeats(2));
  const auto heartbeats = server_.session_heartbeats(1);
  ASSERT_FALSE(heartbeats.empty());
  ASSERT_EQ(heartbeats[0].running_jobs_size(), 1);
  EXPECT_EQ(heartbeats[0].running_jobs(0).job_id(), 7);
  EXPECT_EQ(fake_.terminated(), 0);
  StopAgent();
}

// The server expires a lease whose heartbeats stop for longer than its TTL;
// the agent then stops the job, drops its result (nothing is reported) and
// frees the device, as Agent::ApplyDirectives and Attempt::Keep do today.
TEST_F(AgentTest, ExpiredLeaseStopsTheJobAndDropsItsResult) {
  CacheBundle();
  server_.set_lease_ttl(std::chrono::seconds(10));
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Hang());
  server_.Queue(Job(7, 0));
  StartAgent({0});
  ASSERT_TRUE(fake_.AwaitHangsParked(1));
  ASSERT_TRUE(server_.AwaitHeartbeats(1));

  clock_.Advance(std::chrono::seconds(11));  // past the TTL before the next heartbeat
  ASSERT_TRUE(server_.AwaitKills(1));
  ASSERT_TRUE(server_.AwaitDelivered());
  ASSERT_TRUE(fake_.AwaitHangsParked(0));
  clock_.Advance(kCancelPoll);
  ASSERT_TRUE(locker_.AwaitReleases(1));
  StopAgent();

  EXPECT_TRUE(server_.results().empty());
  EXPECT_EQ(fake_.terminated(), 1);
  EXPECT_EQ(JobsTotal("lease_lost"), 1);
  EXPECT_EQ(ResultSpool(work() / "spool").Depth(), 0u);
  EXPECT_TRUE(locker_.held().empty());
}

}  // namespace
}  // namespace npuperf::agent
