// Watch streams for the client tests: collection events, a mock stream that
// yields them, and the two-job collection several tests follow.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "grpcpp/test/mock_stream.h"
#include "tests/client/mock_session.h"

namespace npuperf::testing {

using WatchReader =
    ::testing::StrictMock<grpc::testing::MockClientReader<v1::WatchCollectionResponse>>;

inline constexpr std::chrono::hours kWatchTimeout(24 * 7);  // a week of watching

inline v1::WatchCollectionResponse Event(v1::CollectionState state, int succeeded,
                                         const char* job = "") {
  v1::WatchCollectionResponse e;
  *e.mutable_collection() = OneJobCollection(state);
  e.mutable_collection()->mutable_counts()->set_total(2);
  e.mutable_collection()->mutable_counts()->set_succeeded(succeeded);
  if (*job != '\0') *e.mutable_changed_job() = Proto<v1::Job>(job);
  return e;
}

// A stream that yields events, then ends with status.
inline WatchReader* Stream(const std::vector<v1::WatchCollectionResponse>& events,
                           grpc::Status status = grpc::Status::OK) {
  auto* reader = new WatchReader();
  ::testing::InSequence in_order;
  for (const auto& e : events) {
    EXPECT_CALL(*reader, Read(::testing::_))
        .WillOnce(::testing::DoAll(::testing::SetArgPointee<0>(e), ::testing::Return(true)));
  }
  EXPECT_CALL(*reader, Read(::testing::_)).WillOnce(::testing::Return(false));
  EXPECT_CALL(*reader, Finish()).WillOnce(::testing::Return(status));
  return reader;
}

inline std::vector<v1::WatchCollectionResponse> TwoJobsSucceed() {
  return {
      Event(v1::COLLECTION_STATE_QUEUED, 0),
      Event(
          v1::COLLECTION_STATE_RUNNING, 0,
          R"pb(id: 7
               operator_name: "add"
               state: JOB_STATE_RUNNING
               progress { phase: JOB_PHASE_METRIC_RUN step: 3 step_count: 7 detail: "Memory" })pb"),
      // The same line again (a heartbeat-only change): printed once.
      Event(
          v1::COLLECTION_STATE_RUNNING, 0,
          R"pb(id: 7
               operator_name: "add"
               state: JOB_STATE_RUNNING
               progress { phase: JOB_PHASE_METRIC_RUN step: 3 step_count: 7 detail: "Memory" })pb"),
      Event(v1::COLLECTION_STATE_SUCCEEDED, 2,
            R"pb(id: 8 operator_name: "add" case_id: "p2" state: JOB_STATE_SUCCEEDED)pb")};
}

inline constexpr char kTwoJobsLines[] =
    "queued 0/2 done (succeeded 0, failed 0, running 0)\n"
    "running 0/2 done (succeeded 0, failed 0, running 0)  job 7 add running metric_run 3/7 Memory\n"
    "succeeded 2/2 done (succeeded 2, failed 0, running 0)  job 8 add/p2 succeeded\n";

inline v1::WatchCollectionRequest WatchRequest(const std::string& id) {
  v1::WatchCollectionRequest r;
  r.set_collection_id(id);
  return r;
}

}  // namespace npuperf::testing
