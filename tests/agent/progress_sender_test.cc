// ProgressSender (agent/progress_sender.h) over a FakeClock: an attempt's first report goes at
// once, later ones wait out the interval and only the newest is sent, a waiting report is sent
// even if nothing follows it, SendNow goes before the result and Forget drops what waits.
#include "agent/progress_sender.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::agent {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kInterval = milliseconds(1000);

class ProgressSenderTest : public ::testing::Test {
 protected:
  ProgressSenderTest()
      : sender_(
            clock_, [this](const v1::ReportProgressRequest& r) { return Record(r); }, kInterval) {}

  absl::StatusOr<v1::ReportProgressResponse> Record(const v1::ReportProgressRequest& r) {
    absl::MutexLock lock(&mu_);
    sent_.push_back(absl::StrCat(r.job_id(), ":", r.progress().detail()));
    v1::ReportProgressResponse resp;
    resp.set_cancel_requested(r.progress().detail() == "cancel me");
    if (r.progress().detail() == "stale") return absl::FailedPreconditionError("lease expired");
    return resp;
  }

  static v1::ReportProgressRequest Report(int64_t job, const std::string& detail) {
    v1::ReportProgressRequest r;
    r.set_job_id(job);
    r.set_attempt(1);
    r.mutable_progress()->set_detail(detail);
    return r;
  }

  void Post(int64_t job, const std::string& detail) {
    sender_.Post(Report(job, detail), [this](const absl::StatusOr<v1::ReportProgressResponse>& r) {
      absl::MutexLock lock(&mu_);
      answers_.push_back(r.ok() ? (r->cancel_requested() ? "cancel" : "ok")
                                : std::string(absl::StatusCodeToString(r.status().code())));
    });
  }

  // Waits (real time, bounded) until n reports were sent; the sent list.
  std::vector<std::string> AwaitSent(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sent_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return sent_;
  }

  std::vector<std::string> Answers() {
    absl::MutexLock lock(&mu_);
    return answers_;
  }

  // Gives the sender's thread real time to look (it sends nothing more unless the fake clock
  // moves): what it must not send would be sent by then.
  static void Settle() { RealClock().SleepFor(milliseconds(100)); }

  testing::FakeClock clock_;
  absl::Mutex mu_;
  std::vector<std::string> sent_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> answers_ ABSL_GUARDED_BY(mu_);
  ProgressSender sender_;
};

TEST_F(ProgressSenderTest, TheFirstReportGoesAtOnceAndLaterOnesWaitOutTheIntervalNewestOnly) {
  Post(7, "preparing");
  EXPECT_EQ(AwaitSent(1), std::vector<std::string>{"7:preparing"});
  Post(7, "warm-up");
  Post(7, "run 1");
  Post(7, "parse 1");
  Settle();
  EXPECT_EQ(AwaitSent(1).size(), 1u) << "within the interval nothing more goes";
  clock_.Advance(kInterval);
  EXPECT_EQ(AwaitSent(2), (std::vector<std::string>{"7:preparing", "7:parse 1"}))
      << "the newest, once, even with nothing posted after it";
  Settle();
  EXPECT_EQ(AwaitSent(2).size(), 2u);
  EXPECT_EQ(Answers(), (std::vector<std::string>{"ok", "ok"}));
}

TEST_F(ProgressSenderTest, EachAttemptHasItsOwnInterval) {
  Post(7, "a");
  AwaitSent(1);
  Post(8, "b");  // another job's first report is not held back by job 7's
  EXPECT_EQ(AwaitSent(2), (std::vector<std::string>{"7:a", "8:b"}));
}

TEST_F(ProgressSenderTest, SendNowDropsTheWaitingReportAndSendsOnTheCallersThread) {
  Post(7, "preparing");
  AwaitSent(1);
  Post(7, "run 1");
  std::string answer;
  sender_.SendNow(Report(7, "uploading"),
                  [&answer](const absl::StatusOr<v1::ReportProgressResponse>& r) {
                    answer = r.ok() ? "ok" : "error";
                  });
  EXPECT_EQ(answer, "ok") << "answered before SendNow returned";
  clock_.Advance(kInterval);
  Settle();
  EXPECT_EQ(AwaitSent(2), (std::vector<std::string>{"7:preparing", "7:uploading"}));
}

TEST_F(ProgressSenderTest, ForgetDropsTheWaitingReportAndItsAnswer) {
  Post(7, "preparing");
  AwaitSent(1);
  Post(7, "run 1");
  sender_.Forget(7, 1);
  clock_.Advance(kInterval);
  Settle();
  EXPECT_EQ(AwaitSent(1).size(), 1u);
  EXPECT_EQ(Answers().size(), 1u);
}

TEST_F(ProgressSenderTest, TheServersAnswerReachesTheAttempt) {
  Post(7, "stale");
  Post(8, "cancel me");
  AwaitSent(2);
  sender_.Forget(7, 1);  // waits for a send in flight: both answers are in
  sender_.Forget(8, 1);
  std::vector<std::string> answers = Answers();
  std::sort(answers.begin(), answers.end());
  EXPECT_EQ(answers, (std::vector<std::string>{"FAILED_PRECONDITION", "cancel"}));
}

// With a server that reads progress from heartbeats nothing is sent: each heartbeat takes the
// newest report of an attempt once, SendNow's included; a new session takes the last ones again;
// Forget drops what waits; switching back sends what waits through the thread.
TEST_F(ProgressSenderTest, ViaHeartbeatsNothingIsSentAndEachHeartbeatTakesTheNewestOnce) {
  sender_.SetViaHeartbeats(true);
  auto detail = [](const std::optional<v1::JobProgress>& p) {
    return p ? p->detail() : std::string("none");
  };
  Post(7, "preparing");
  Post(7, "run 1");
  Post(8, "warm-up");
  Settle();
  EXPECT_EQ(detail(sender_.Take(7, 1)), "run 1");
  EXPECT_EQ(detail(sender_.Take(7, 1)), "none") << "taken once";
  EXPECT_EQ(detail(sender_.Take(9, 1)), "none") << "unknown attempt";
  sender_.RetakeAll();  // a new session: the last ones are due again
  EXPECT_EQ(detail(sender_.Take(7, 1)), "run 1");
  sender_.SendNow(Report(7, "uploading"), [](const absl::StatusOr<v1::ReportProgressResponse>&) {
    ADD_FAILURE() << "no answer comes in heartbeat mode";
  });
  EXPECT_EQ(detail(sender_.Take(7, 1)), "uploading");
  Post(7, "late");
  sender_.Forget(7, 1);
  EXPECT_EQ(detail(sender_.Take(7, 1)), "none") << "forgotten with its attempt";
  clock_.Advance(kInterval);
  Settle();
  EXPECT_TRUE(AwaitSent(0).empty());
  EXPECT_TRUE(Answers().empty());
  sender_.SetViaHeartbeats(false);  // job 8's report still waits: it goes now
  EXPECT_EQ(AwaitSent(1), std::vector<std::string>{"8:warm-up"});
  EXPECT_EQ(detail(sender_.Take(8, 1)), "none") << "only heartbeats of that mode take";
}

// Back from heartbeat mode (a session answered by a server that ignores heartbeat progress),
// the last report a heartbeat took is sent again, unless a newer one waits.
TEST_F(ProgressSenderTest, LeavingHeartbeatModeSendsWhatTheHeartbeatsTook) {
  sender_.SetViaHeartbeats(true);
  Post(7, "run 1");
  Post(8, "run 1");
  ASSERT_TRUE(sender_.Take(7, 1));
  ASSERT_TRUE(sender_.Take(8, 1));
  Post(8, "run 2");
  sender_.SetViaHeartbeats(false);
  std::vector<std::string> sent = AwaitSent(2);
  std::sort(sent.begin(), sent.end());
  EXPECT_EQ(sent, (std::vector<std::string>{"7:run 1", "8:run 2"}));
}

}  // namespace
}  // namespace npuperf::agent
