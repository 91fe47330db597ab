// client/watch_command.cc against StrictMock stubs: progress lines (plain,
// or one redrawn line cut to the terminal), the final collection, the exit
// code of its state, and reconnecting when the server goes away.
#include <atomic>
#include <sstream>
#include <thread>

#include "absl/strings/str_split.h"
#include "client/commands.h"
#include "client/terminal_text.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"
#include "tests/client/watch_events.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::Event;
using ::npuperf::testing::HasDeadline;
using ::npuperf::testing::JsonConfig;
using ::npuperf::testing::kTwoJobsLines;
using ::npuperf::testing::kWatchTimeout;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Stream;
using ::npuperf::testing::TwoJobsSucceed;
using ::npuperf::testing::WatchRequest;
using ::testing::_;
using ::testing::Return;

// The server sends a full snapshot, then deltas (the changed jobs only):
// the final collection printed has every job in its last state.
TEST(WatchTest, FoldsDeltasIntoTheSnapshot) {
  v1::WatchCollectionResponse first = Event(v1::COLLECTION_STATE_QUEUED, 0);
  first.set_full_snapshot(true);
  *first.mutable_collection()->add_jobs() = Proto<v1::Job>(R"pb(id: 7 state: JOB_STATE_QUEUED)pb");
  *first.mutable_collection()->add_jobs() = Proto<v1::Job>(R"pb(id: 8 state: JOB_STATE_QUEUED)pb");
  v1::WatchCollectionResponse one = Event(v1::COLLECTION_STATE_RUNNING, 1);
  *one.add_changed_jobs() = Proto<v1::Job>(R"pb(id: 8 state: JOB_STATE_SUCCEEDED)pb");
  v1::WatchCollectionResponse two = Event(v1::COLLECTION_STATE_SUCCEEDED, 2);
  *two.add_changed_jobs() = Proto<v1::Job>(R"pb(id: 7 state: JOB_STATE_SUCCEEDED)pb");
  MockSession m(JsonConfig());
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _))
      .WillOnce(Return(Stream({first, one, two})));
  std::ostringstream out, err;
  EXPECT_EQ(RunWatch(m.session(), "c-1", out, err), kExitOk);
  v1::Collection got;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out.str(), &got).ok()) << out.str();
  EXPECT_EQ(got.state(), v1::COLLECTION_STATE_SUCCEEDED);
  ASSERT_EQ(got.jobs_size(), 2);
  EXPECT_EQ(got.jobs(0).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(got.jobs(1).state(), v1::JOB_STATE_SUCCEEDED);
}

TEST(WatchTest, PrintsEachNewProgressLineThenTheFinalCollection) {
  MockSession m;
  EXPECT_CALL(m.collections(), WatchCollectionRaw(HasDeadline(m.DeadlineIn(kWatchTimeout)),
                                                  EqualsProto(WatchRequest("c-1"))))
      .WillOnce(Return(Stream(TwoJobsSucceed())));
  std::ostringstream out, err;
  EXPECT_EQ(RunWatch(m.session(), "c-1", out, err), kExitOk);
  EXPECT_EQ(err.str(), kTwoJobsLines);
  EXPECT_EQ(out.str(),
            "collection c-1  succeeded  2/2 succeeded, 0 failed, 0 cancelled  (created -)\n");
}

TEST(WatchTest, OnATerminalRedrawsOneLineWithAProgressBar) {
  ClientConfig config;
  config.progress = ProgressStyle::kTerminal;
  config.terminal_columns = 120;  // the 81-column line fits
  MockSession m(config);
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _))
      .WillOnce(Return(Stream(
          {Event(v1::COLLECTION_STATE_RUNNING, 1), Event(v1::COLLECTION_STATE_SUCCEEDED, 2)})));
  std::ostringstream out, err;
  EXPECT_EQ(RunWatch(m.session(), "c-1", out, err), kExitOk);
  EXPECT_EQ(
      err.str(),
      "\r\033[K[############------------] running 1/2 done (succeeded 1, failed 0, running 0)"
      "\r\033[K[########################] succeeded 2/2 done (succeeded 2, failed 0, running 0)"
      "\n");
}

// In 80 columns a long line wrapped and "\r\033[K" cleared only its last row:
// every redraw is cut to the width less one, whole UTF-8 characters only.
TEST(WatchTest, OnATerminalTheLineIsCutToTheWidth) {
  const std::string head =
      "[############------------] running 1/2 done (succeeded 1, failed 0, running 0)  job 7 ";
  ClientConfig config;
  config.progress = ProgressStyle::kTerminal;
  // 88 columns for the line: 86 fit, the wide U+7B97 would end at 88, and
  // one column is kept for the ellipsis.
  config.terminal_columns = 89;
  MockSession m(config);
  const char* job =
      R"pb(id: 7 operator_name: "\347\256\227\345\255\220_add" state: JOB_STATE_RUNNING)pb";
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _))
      .WillOnce(Return(Stream({Event(v1::COLLECTION_STATE_RUNNING, 1, job),
                               Event(v1::COLLECTION_STATE_SUCCEEDED, 2)})));
  std::ostringstream out, err;
  EXPECT_EQ(RunWatch(m.session(), "c-1", out, err), kExitOk);
  const std::vector<std::string> redraws = absl::StrSplit(err.str(), "\r\033[K");
  ASSERT_EQ(redraws.size(), 3u) << err.str();
  EXPECT_EQ(redraws[1], head + "\u2026");
  EXPECT_EQ(redraws[2],
            "[########################] succeeded 2/2 done (succeeded 2, failed 0, running 0)\n");
  ClientConfig wide = config;
  wide.terminal_columns = 200;
  MockSession w(wide);
  EXPECT_CALL(w.collections(), WatchCollectionRaw(_, _))
      .WillOnce(Return(Stream({Event(v1::COLLECTION_STATE_RUNNING, 1, job)})));
  std::ostringstream wide_err;
  RunWatch(w.session(), "c-1", out, wide_err);
  EXPECT_EQ(wide_err.str(), "\r\033[K" + head + "\u7b97\u5b50_add running\n");
}

TEST(WatchTest, ACollectionThatDidNotSucceedExitsOne) {
  for (auto state : {v1::COLLECTION_STATE_FAILED, v1::COLLECTION_STATE_CANCELLED}) {
    MockSession m(JsonConfig());
    EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _))
        .WillOnce(Return(Stream({Event(state, 1)})));
    std::ostringstream out, err;
    EXPECT_EQ(RunWatch(m.session(), "c-1", out, err), kExitError)
        << v1::CollectionState_Name(state);
    EXPECT_EQ(nlohmann::json::parse(out.str())["state"], v1::CollectionState_Name(state));
  }
}

TEST(WatchTest, AStreamThatEndsWithAnErrorReportsIt) {
  MockSession m;
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _))
      .WillOnce(Return(Stream({Event(v1::COLLECTION_STATE_RUNNING, 0)},
                              grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection reset"))));
  std::ostringstream out, err;
  EXPECT_EQ(RunWatch(m.session(), "c-1", out, err, /*reconnect_for=*/std::chrono::seconds(0)),
            kExitUnavailable);
  EXPECT_EQ(err.str(),
            "running 0/2 done (succeeded 0, failed 0, running 0)\n"
            "npuperf: UNAVAILABLE: connection reset\n");
  EXPECT_EQ(out.str(), "");
}

// Runs RunWatch on a thread; after each call to WatchCollection (counted in
// `calls` by the mock) that the watch follows with a sleep, moves m's clock
// by 10 s, more than any retry delay, so each step ends exactly one sleep.
// Its exit code, and how far the clock moved.
struct Watched {
  int exit_code = -1;
  std::chrono::nanoseconds slept{0};
};
Watched WatchWithClock(MockSession& m, std::chrono::seconds reconnect_for,
                       const std::atomic<int>& calls, std::ostream& out, std::ostream& err) {
  Watched w;
  std::atomic<bool> done{false};
  std::thread watch([&] {
    w.exit_code = RunWatch(m.session(), "c-1", out, err, reconnect_for);
    done = true;
  });
  const auto start = m.clock().MonotonicNow();
  int stepped_after = 0;  // the call whose sleep the last step ended
  while (!done) {
    if (calls > stepped_after && m.clock().waiters() > 0) {
      stepped_after = calls;
      m.clock().Advance(std::chrono::seconds(10));
    } else {
      std::this_thread::yield();
    }
  }
  watch.join();
  w.slept = m.clock().MonotonicNow() - start;
  return w;
}

const grpc::Status kShuttingDown(grpc::StatusCode::UNAVAILABLE, "server is shutting down");

// A server restart ends the stream with UNAVAILABLE: the watch waits, opens
// a new stream and goes on from its snapshot (the same line is not shown
// twice) instead of exiting 5.
TEST(WatchReconnectTest, ReopensTheStreamAndResumesFromTheNewSnapshot) {
  MockSession m;
  std::atomic<int> calls{0};
  auto count = ::testing::InvokeWithoutArgs([&calls] { ++calls; });
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, EqualsProto(WatchRequest("c-1"))))
      .WillOnce(::testing::DoAll(
          count, Return(Stream({Event(v1::COLLECTION_STATE_RUNNING, 1)}, kShuttingDown))));
  v1::WatchCollectionResponse snapshot = Event(v1::COLLECTION_STATE_RUNNING, 1);
  snapshot.set_full_snapshot(true);
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, EqualsProto(WatchRequest("c-1"))))
      .WillOnce(::testing::DoAll(
          count, Return(Stream({snapshot, Event(v1::COLLECTION_STATE_SUCCEEDED, 2)}))));
  std::ostringstream out, err;
  const Watched w = WatchWithClock(m, std::chrono::seconds(60), calls, out, err);
  EXPECT_EQ(w.exit_code, kExitOk) << err.str();
  const std::vector<std::string> lines = absl::StrSplit(err.str(), '\n');
  ASSERT_EQ(lines.size(), 4u) << err.str();
  EXPECT_EQ(lines[0], "running 1/2 done (succeeded 1, failed 0, running 0)");
  // The first retry waits 0.25..0.5 s (full jitter on 0.5 s).
  EXPECT_THAT(lines[1], ::testing::MatchesRegex("npuperf: watch c-1: UNAVAILABLE: server is "
                                                "shutting down; reconnecting in 0\\.[2-5] s"));
  EXPECT_EQ(lines[2], "succeeded 2/2 done (succeeded 2, failed 0, running 0)");
  EXPECT_EQ(w.slept, std::chrono::seconds(10));  // one sleep
  EXPECT_EQ(out.str(),
            "collection c-1  succeeded  2/2 succeeded, 0 failed, 0 cancelled  (created -)\n");
}

// A server that shuts down cancels the calls still open, including a watch
// that reconnected while it drained: CANCELLED is retried like UNAVAILABLE
// (this process never cancels a watch itself).
TEST(WatchReconnectTest, AStreamTheServerCancelledIsReopenedToo) {
  MockSession m;
  std::atomic<int> calls{0};
  auto count = ::testing::InvokeWithoutArgs([&calls] { ++calls; });
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, EqualsProto(WatchRequest("c-1"))))
      .WillOnce(::testing::DoAll(
          count, Return(Stream({Event(v1::COLLECTION_STATE_RUNNING, 1)},
                               grpc::Status(grpc::StatusCode::CANCELLED, "CANCELLED")))));
  v1::WatchCollectionResponse snapshot = Event(v1::COLLECTION_STATE_SUCCEEDED, 2);
  snapshot.set_full_snapshot(true);
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, EqualsProto(WatchRequest("c-1"))))
      .WillOnce(::testing::DoAll(count, Return(Stream({snapshot}))));
  std::ostringstream out, err;
  const Watched w = WatchWithClock(m, std::chrono::seconds(60), calls, out, err);
  EXPECT_EQ(w.exit_code, kExitOk) << err.str();
  EXPECT_THAT(err.str(), ::testing::HasSubstr("npuperf: watch c-1: CANCELLED: CANCELLED; "
                                              "reconnecting in 0."));
}

// A server that stays away: retries back off, and the watch gives up with 5
// once the next try would start after --reconnect-for.
TEST(WatchReconnectTest, GivesUpWithFiveAfterReconnectFor) {
  MockSession m;
  std::atomic<int> calls{0};
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _)).WillRepeatedly([&calls](auto, auto) {
    ++calls;
    return Stream({}, grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused"));
  });
  std::ostringstream out, err;
  const Watched w = WatchWithClock(m, std::chrono::seconds(20), calls, out, err);
  EXPECT_EQ(w.exit_code, kExitUnavailable);
  // The first failure, at t0, gives up at t0 + 20 s; each sleep here moves
  // the clock 10 s: tries at t0, t0 + 10 s and t0 + 20 s, and the next would
  // start past the limit (any delay is more than 0).
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(w.slept, std::chrono::seconds(20));
  EXPECT_THAT(err.str(), ::testing::EndsWith("npuperf: UNAVAILABLE: connection refused\n"));
  EXPECT_EQ(out.str(), "");
}

// Only UNAVAILABLE and the server's CANCELLED are worth a retry: NOT_FOUND (or a refused token)
// exits at once with its own code.
TEST(WatchReconnectTest, OtherErrorsAreNotRetried) {
  MockSession m;
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _))
      .WillOnce(Return(Stream({}, grpc::Status(grpc::StatusCode::NOT_FOUND, "no c-1"))));
  std::ostringstream out, err;
  EXPECT_EQ(RunWatch(m.session(), "c-1", out, err), kExitNotFound);
  EXPECT_EQ(err.str(), "npuperf: NOT_FOUND: no c-1\n");
}

}  // namespace
}  // namespace npuperf::client
