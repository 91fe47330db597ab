#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "npuperf/v1/agent_service_mock.grpc.pb.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::testing {

// What the fake answers RegisterAgent with.
inline constexpr char kFakeAgentId[] = "agent-1";
inline constexpr int kFakeHeartbeatMs = 1000;
// Real-time bound of every Await below; only a failing test reaches it.
inline constexpr absl::Duration kFakeServerGuard = absl::Seconds(60);

// The server side of one test: a scripted AgentService behind the generated
// MockAgentServiceStub (StrictMock: an RPC the agent should not make fails the
// test). LeaseJob long-polls until a queued assignment fits an offered device
// (or the server closes); every heartbeat is answered, with a KILL directive
// for a lease not renewed within the lease TTL (when one is set); registration
// adopts the running jobs whose lease is still valid; results are
// acknowledged unless scripted otherwise; bundles are streamed in chunks.
// Thread-safe.
class FakeAgentServer {
 public:
  explicit FakeAgentServer(FakeClock& clock) : clock_(clock) {}

  // serve_bundles: DownloadBundle is expected too (otherwise it fails the test).
  std::unique_ptr<v1::AgentService::StubInterface> Stub(bool serve_bundles) {
    auto stub = std::make_unique<::testing::StrictMock<v1::MockAgentServiceStub>>();
    EXPECT_CALL(*stub, RegisterAgent(::testing::_, ::testing::_, ::testing::_))
        .WillRepeatedly(
            [this](grpc::ClientContext* ctx, const v1::RegisterAgentRequest& req,
                   v1::RegisterAgentResponse* resp) { return Register(*ctx, req, resp); });
    EXPECT_CALL(*stub, AgentSessionRaw(::testing::_)).WillRepeatedly([this](grpc::ClientContext*) {
      return OpenSession();
    });
    EXPECT_CALL(*stub, LeaseJob(::testing::_, ::testing::_, ::testing::_))
        .WillRepeatedly([this](grpc::ClientContext*, const v1::LeaseJobRequest& req,
                               v1::LeaseJobResponse* resp) { return Lease(req, resp); });
    EXPECT_CALL(*stub, ReportProgress(::testing::_, ::testing::_, ::testing::_))
        .WillRepeatedly([this](grpc::ClientContext*, const v1::ReportProgressRequest& req,
                               v1::ReportProgressResponse*) { return Progress(req); });
    EXPECT_CALL(*stub, ReportResult(::testing::_, ::testing::_, ::testing::_))
        .WillRepeatedly([this](grpc::ClientContext*, const v1::ReportResultRequest& req,
                               v1::ReportResultResponse* resp) { return Result(req, resp); });
    if (serve_bundles) {
      EXPECT_CALL(*stub, DownloadBundleRaw(::testing::_, ::testing::_))
          .WillRepeatedly([this](grpc::ClientContext*, const v1::DownloadBundleRequest& req) {
            // The server streams bundles only to the lease holder of the job.
            EXPECT_FALSE(req.agent_id().empty());
            EXPECT_GT(req.job_id(), 0);
            return OpenBundle(req.sha256());
          });
    }
    return stub;
  }

  void Queue(v1::JobAssignment a) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(a));
  }
  void AddBundle(const std::string& sha256, std::string tar) {
    absl::MutexLock lock(&mu_);
    bundles_[sha256] = std::move(tar);
  }
  // The next DownloadBundle streams end with `code` instead (a server going away).
  void FailBundles(grpc::StatusCode code) {
    absl::MutexLock lock(&mu_);
    bundle_failure_ = code;
  }
  void set_lease_ttl(std::chrono::milliseconds ttl) {
    absl::MutexLock lock(&mu_);
    lease_ttl_ = ttl;
  }
  // The next ReportResults of job_id answer these statuses in turn, then OK.
  void ScriptResults(int64_t job_id, std::vector<grpc::Status> statuses) {
    absl::MutexLock lock(&mu_);
    for (auto& s : statuses) result_script_[job_id].push_back(std::move(s));
  }
  // Sends r on the current session stream.
  void Push(v1::AgentSessionResponse r) {
    absl::MutexLock lock(&mu_);
    r.set_progress_in_heartbeats(progress_in_heartbeats_);
    sessions_.back().inbox.push_back(std::move(r));
  }
  // The current session stream fails: reads end, writes fail, UNAVAILABLE.
  void BreakSession() {
    absl::MutexLock lock(&mu_);
    sessions_.back().broken = true;
  }
  // Shutdown: pending long-polls answer CANCELLED and streams end.
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

  bool AwaitRegistrations(size_t n) { return AwaitCount(&registrations_, n); }
  bool AwaitResults(size_t n) { return AwaitCount(&results_, n); }
  bool AwaitHeartbeats(size_t n) { return AwaitCount(&heartbeats_, n); }
  bool AwaitProgress(size_t n) { return AwaitCount(&progress_, n); }
  bool AwaitSessions(size_t n) { return AwaitCount(&sessions_, n); }
  bool AwaitKills(int n) {
    absl::MutexLock lock(&mu_);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return kills_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&done), kFakeServerGuard);
  }
  // Until the agent has handled everything pushed on the current session (its
  // reader is back in Read with nothing left).
  bool AwaitDelivered() {
    absl::MutexLock lock(&mu_);
    auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !sessions_.empty() && sessions_.back().inbox.empty() && sessions_.back().reading;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&done), kFakeServerGuard);
  }

  std::vector<v1::RegisterAgentRequest> registrations() {
    return Copy(&FakeAgentServer::registrations_);
  }
  std::vector<v1::LeaseJobRequest> leases() { return Copy(&FakeAgentServer::leases_); }
  std::vector<v1::ReportProgressRequest> progress() { return Copy(&FakeAgentServer::progress_); }
  std::vector<v1::Heartbeat> heartbeats() { return Copy(&FakeAgentServer::heartbeats_); }
  // Registrations and heartbeats are answered with progress_in_heartbeats =
  // on (default off: a server that predates it).
  void SetProgressInHeartbeats(bool on) {
    absl::MutexLock lock(&mu_);
    progress_in_heartbeats_ = on;
  }
  std::vector<v1::ReportResultRequest> results() { return Copy(&FakeAgentServer::results_); }
  std::vector<Clock::SystemTime> register_deadlines() {
    return Copy(&FakeAgentServer::register_deadlines_);
  }
  // Heartbeats of session i (0: the first stream).
  std::vector<v1::Heartbeat> session_heartbeats(size_t i) {
    absl::MutexLock lock(&mu_);
    return sessions_.at(i).heartbeats;
  }
  int downloads() {
    absl::MutexLock lock(&mu_);
    return downloads_;
  }

 private:
  struct Session {
    std::deque<v1::AgentSessionResponse> inbox;
    std::vector<v1::Heartbeat> heartbeats;
    bool broken = false;
    bool writes_done = false;
    bool reading = false;
  };

  // The agent's end of session i.
  class SessionStream final : public grpc::ClientReaderWriterInterface<v1::AgentSessionRequest,
                                                                       v1::AgentSessionResponse> {
   public:
    SessionStream(FakeAgentServer& server, size_t index) : server_(server), index_(index) {}
    bool NextMessageSize(uint32_t* size) override {
      *size = 1 << 20;
      return true;
    }
    bool Read(v1::AgentSessionResponse* r) override { return server_.SessionRead(index_, r); }
    bool Write(const v1::AgentSessionRequest& m, grpc::WriteOptions) override {
      return server_.SessionWrite(index_, m);
    }
    bool WritesDone() override { return server_.SessionWritesDone(index_); }
    grpc::Status Finish() override { return server_.SessionFinish(index_); }
    void WaitForInitialMetadata() override {}

   private:
    FakeAgentServer& server_;
    const size_t index_;
  };

  // One bundle's DownloadBundle stream, in two chunks.
  class BundleStream final : public grpc::ClientReaderInterface<v1::DownloadBundleResponse> {
   public:
    explicit BundleStream(std::optional<std::string> tar,
                          grpc::StatusCode failure = grpc::StatusCode::OK)
        : tar_(std::move(tar)), failure_(failure) {}
    bool NextMessageSize(uint32_t* size) override {
      *size = 1 << 20;
      return true;
    }
    bool Read(v1::DownloadBundleResponse* r) override {
      if (failure_ != grpc::StatusCode::OK || !tar_ || sent_ >= tar_->size()) return false;
      const size_t n = std::max<size_t>(1, tar_->size() / 2);
      r->set_chunk(tar_->substr(sent_, n));
      sent_ += n;
      return true;
    }
    grpc::Status Finish() override {
      if (failure_ != grpc::StatusCode::OK) return grpc::Status(failure_, "server going away");
      return tar_ ? grpc::Status::OK : grpc::Status(grpc::StatusCode::NOT_FOUND, "no such bundle");
    }
    void WaitForInitialMetadata() override {}

   private:
    const std::optional<std::string> tar_;
    const grpc::StatusCode failure_;
    size_t sent_ = 0;
  };

  template <typename T>
  std::vector<T> Copy(std::vector<T> FakeAgentServer::*records) {
    absl::MutexLock lock(&mu_);
    return this->*records;
  }
  template <typename T>
  bool AwaitCount(const T* v, size_t n) {
    absl::MutexLock lock(&mu_);
    auto done = [v, n] { return v->size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&done), kFakeServerGuard);
  }

  // Whether job's lease has gone unrenewed for longer than the TTL.
  bool Expired(int64_t job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = renewed_.find(job);
    return lease_ttl_ && it != renewed_.end() && clock_.MonotonicNow() - it->second > *lease_ttl_;
  }

  grpc::Status Register(const grpc::ClientContext& ctx, const v1::RegisterAgentRequest& req,
                        v1::RegisterAgentResponse* resp) {
    absl::MutexLock lock(&mu_);
    registrations_.push_back(req);
    register_deadlines_.push_back(ctx.deadline());
    resp->set_agent_id(kFakeAgentId);
    resp->set_heartbeat_interval_ms(kFakeHeartbeatMs);
    resp->set_progress_in_heartbeats(progress_in_heartbeats_);
    for (const auto& j : req.running_jobs()) {
      auto* d = resp->add_directives();
      d->set_job_id(j.job_id());
      d->set_action(Expired(j.job_id()) ? v1::JobDirective::ACTION_KILL
                                        : v1::JobDirective::ACTION_ADOPT);
      if (!Expired(j.job_id())) renewed_[j.job_id()] = clock_.MonotonicNow();
    }
    return grpc::Status::OK;
  }

  SessionStream* OpenSession() {
    absl::MutexLock lock(&mu_);
    sessions_.emplace_back();
    return new SessionStream(*this, sessions_.size() - 1);
  }

  bool SessionRead(size_t i, v1::AgentSessionResponse* r) {
    absl::MutexLock lock(&mu_);
    Session& s = sessions_[i];
    auto ready = [this, &s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !s.inbox.empty() || s.broken || s.writes_done || closed_;
    };
    s.reading = true;
    mu_.Await(absl::Condition(&ready));
    s.reading = false;
    if (s.inbox.empty() || s.broken) return false;
    *r = std::move(s.inbox.front());
    s.inbox.pop_front();
    return true;
  }

  bool SessionWrite(size_t i, const v1::AgentSessionRequest& m) {
    absl::MutexLock lock(&mu_);
    Session& s = sessions_[i];
    if (s.broken || closed_) return false;
    s.heartbeats.push_back(m.heartbeat());
    heartbeats_.push_back(m.heartbeat());
    v1::AgentSessionResponse answer;
    answer.set_progress_in_heartbeats(progress_in_heartbeats_);
    for (const auto& j : m.heartbeat().running_jobs()) {
      if (j.result_pending()) continue;
      if (!Expired(j.job_id())) {
        renewed_[j.job_id()] = clock_.MonotonicNow();
        continue;
      }
      auto* d = answer.add_directives();
      d->set_job_id(j.job_id());
      d->set_action(v1::JobDirective::ACTION_KILL);
      d->set_reason("lease no longer held by this agent");
      renewed_.erase(j.job_id());
      ++kills_;
    }
    s.inbox.push_back(std::move(answer));
    return true;
  }

  bool SessionWritesDone(size_t i) {
    absl::MutexLock lock(&mu_);
    sessions_[i].writes_done = true;
    return true;
  }

  grpc::Status SessionFinish(size_t i) {
    absl::MutexLock lock(&mu_);
    if (sessions_[i].broken) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "session broken");
    return grpc::Status::OK;
  }

  grpc::Status Lease(const v1::LeaseJobRequest& req, v1::LeaseJobResponse* resp) {
    absl::MutexLock lock(&mu_);
    leases_.push_back(req);
    auto fits = [&req](const v1::JobAssignment& a) {
      return std::any_of(req.free_devices().begin(), req.free_devices().end(),
                         [&a](const v1::DeviceInfo& d) { return d.device_id() == a.device_id(); });
    };
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return closed_ || std::any_of(queue_.begin(), queue_.end(), fits);
    };
    mu_.Await(absl::Condition(&ready));
    if (closed_) return grpc::Status(grpc::StatusCode::CANCELLED, "server closing");
    // As the server: up to max_assignments (0 and 1: one), one per device.
    std::set<int32_t> taken;
    for (auto it = queue_.begin(); it != queue_.end();) {
      const bool room = static_cast<int>(taken.size()) < std::max(1, req.max_assignments());
      if (!room) break;
      if (!fits(*it) || taken.contains(it->device_id())) {
        ++it;
        continue;
      }
      taken.insert(it->device_id());
      *(resp->has_assignment() ? resp->add_more_assignments() : resp->mutable_assignment()) = *it;
      renewed_[it->job_id()] = clock_.MonotonicNow();
      it = queue_.erase(it);
    }
    return grpc::Status::OK;
  }

  grpc::Status Progress(const v1::ReportProgressRequest& req) {
    absl::MutexLock lock(&mu_);
    progress_.push_back(req);
    if (Expired(req.job_id()))
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "lease expired");
    return grpc::Status::OK;
  }

  grpc::Status Result(const v1::ReportResultRequest& req, v1::ReportResultResponse* resp) {
    absl::MutexLock lock(&mu_);
    results_.push_back(req);
    auto& script = result_script_[req.job_id()];
    grpc::Status s = grpc::Status::OK;
    if (!script.empty()) {
      s = script.front();
      script.pop_front();
    }
    if (s.ok()) resp->set_round_id(100 + req.job_id());
    return s;
  }

  BundleStream* OpenBundle(const std::string& sha256) {
    absl::MutexLock lock(&mu_);
    ++downloads_;
    auto it = bundles_.find(sha256);
    return new BundleStream(it == bundles_.end() ? std::nullopt : std::optional(it->second),
                            bundle_failure_);
  }

  FakeClock& clock_;
  absl::Mutex mu_;
  std::deque<v1::JobAssignment> queue_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> bundles_ ABSL_GUARDED_BY(mu_);
  grpc::StatusCode bundle_failure_ ABSL_GUARDED_BY(mu_) = grpc::StatusCode::OK;
  std::optional<std::chrono::milliseconds> lease_ttl_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Clock::MonotonicTime> renewed_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::deque<grpc::Status>> result_script_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::RegisterAgentRequest> registrations_ ABSL_GUARDED_BY(mu_);
  std::vector<Clock::SystemTime> register_deadlines_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::LeaseJobRequest> leases_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ReportProgressRequest> progress_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ReportResultRequest> results_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::Heartbeat> heartbeats_ ABSL_GUARDED_BY(mu_);
  bool progress_in_heartbeats_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Session> sessions_ ABSL_GUARDED_BY(mu_);
  int kills_ ABSL_GUARDED_BY(mu_) = 0;
  int downloads_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace npuperf::testing
