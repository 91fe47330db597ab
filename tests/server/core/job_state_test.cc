#include "server/core/job_state.h"

#include "gtest/gtest.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::server {
namespace {

// The transitions themselves are the Store backends' (their WHERE clauses,
// specified by store_conformance_test); what every caller asks of a state
// is whether it can still change.
TEST(JobStateTest, OnlySucceededFailedAndCancelledAreTerminal) {
  for (auto s : {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    EXPECT_TRUE(IsTerminal(s)) << JobStateName(s);
  }
  for (auto s : {v1::JOB_STATE_UNSPECIFIED, v1::JOB_STATE_QUEUED, v1::JOB_STATE_LEASED,
                 v1::JOB_STATE_RUNNING}) {
    EXPECT_FALSE(IsTerminal(s)) << JobStateName(s);
  }
  for (auto s : {v1::COLLECTION_STATE_SUCCEEDED, v1::COLLECTION_STATE_FAILED,
                 v1::COLLECTION_STATE_CANCELLED}) {
    EXPECT_TRUE(IsTerminal(s)) << s;
  }
  for (auto s : {v1::COLLECTION_STATE_UNSPECIFIED, v1::COLLECTION_STATE_QUEUED,
                 v1::COLLECTION_STATE_RUNNING}) {
    EXPECT_FALSE(IsTerminal(s)) << s;
  }
}

// The names are /metrics labels and event details: renaming one breaks
// dashboards.
TEST(JobStateTest, StateNamesAreStableLabels) {
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_QUEUED), "queued");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_LEASED), "leased");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_RUNNING), "running");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_SUCCEEDED), "succeeded");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_FAILED), "failed");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_CANCELLED), "cancelled");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_UNSPECIFIED), "unspecified");
}

TEST(JobStateTest, DeviceStatusNames) {
  EXPECT_STREQ(DeviceStatusName(false, v1::DEVICE_STATE_IDLE, true), "offline");
  EXPECT_STREQ(DeviceStatusName(true, v1::DEVICE_STATE_IDLE, true), "busy");
  EXPECT_STREQ(DeviceStatusName(true, v1::DEVICE_STATE_IDLE, false), "idle");
  EXPECT_STREQ(DeviceStatusName(true, v1::DEVICE_STATE_EXTERNALLY_LOCKED, false),
               "externally_locked");
  EXPECT_STREQ(DeviceStatusName(true, v1::DEVICE_STATE_UNHEALTHY, false), "unhealthy");
  EXPECT_STREQ(DeviceStatusName(true, v1::DEVICE_STATE_UNSPECIFIED, false), "unknown");
}

struct DeriveCase {
  std::vector<v1::JobState> jobs;
  bool cancel;
  v1::CollectionState want;
};

TEST(JobStateTest, DerivesCollectionState) {
  const std::vector<DeriveCase> cases = {
      {{v1::JOB_STATE_QUEUED, v1::JOB_STATE_QUEUED}, false, v1::COLLECTION_STATE_QUEUED},
      {{v1::JOB_STATE_LEASED, v1::JOB_STATE_QUEUED}, false, v1::COLLECTION_STATE_RUNNING},
      {{v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_QUEUED}, false, v1::COLLECTION_STATE_RUNNING},
      {{v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_SUCCEEDED}, false, v1::COLLECTION_STATE_SUCCEEDED},
      {{v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED}, false, v1::COLLECTION_STATE_FAILED},
      {{v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_CANCELLED}, true, v1::COLLECTION_STATE_CANCELLED},
      {{v1::JOB_STATE_RUNNING, v1::JOB_STATE_CANCELLED}, true, v1::COLLECTION_STATE_RUNNING},
  };
  for (const auto& c : cases) {
    v1::JobCounts counts;
    for (auto s : c.jobs) CountJob(s, &counts);
    EXPECT_EQ(DeriveCollectionState(counts, c.cancel), c.want);
  }
}

// The reason ProgressNeedsCollectionRefresh may skip the count: with any
// live job, whatever the other jobs and a cancel request, the collection is
// RUNNING (every mix of up to three other jobs, checked exhaustively).
TEST(JobStateTest, ACollectionWithALiveJobIsRunningSoProgressSkipsTheRecount) {
  const v1::JobState all[] = {v1::JOB_STATE_QUEUED,  v1::JOB_STATE_LEASED,
                              v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED,
                              v1::JOB_STATE_FAILED,  v1::JOB_STATE_CANCELLED};
  for (auto live : {v1::JOB_STATE_LEASED, v1::JOB_STATE_RUNNING}) {
    for (int mix = 0; mix < 6 * 6 * 6; ++mix) {
      for (int others = 0; others <= 3; ++others) {
        v1::JobCounts counts;
        CountJob(live, &counts);
        for (int k = 0, m = mix; k < others; ++k, m /= 6) CountJob(all[m % 6], &counts);
        for (bool cancel : {false, true}) {
          EXPECT_EQ(DeriveCollectionState(counts, cancel), v1::COLLECTION_STATE_RUNNING);
        }
      }
    }
  }
  EXPECT_FALSE(ProgressNeedsCollectionRefresh(v1::COLLECTION_STATE_RUNNING));
  EXPECT_TRUE(ProgressNeedsCollectionRefresh(std::nullopt));
  EXPECT_TRUE(ProgressNeedsCollectionRefresh(v1::COLLECTION_STATE_QUEUED));
  EXPECT_TRUE(ProgressNeedsCollectionRefresh(v1::COLLECTION_STATE_SUCCEEDED));
}

// The reason ResultKeepsCollectionRunning may skip the count: a job that just
// ended beside any unfinished job (queued or live) leaves the collection
// RUNNING, whatever the other jobs and a cancel request (every mix of up to
// three more jobs, checked exhaustively); anything else is recounted.
TEST(JobStateTest, AJobEndingBesideAnUnfinishedOneLeavesTheCollectionRunning) {
  const v1::JobState all[] = {v1::JOB_STATE_QUEUED,  v1::JOB_STATE_LEASED,
                              v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED,
                              v1::JOB_STATE_FAILED,  v1::JOB_STATE_CANCELLED};
  for (auto ended : {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    for (auto unfinished : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_LEASED, v1::JOB_STATE_RUNNING}) {
      for (int mix = 0; mix < 6 * 6 * 6; ++mix) {
        for (int others = 0; others <= 3; ++others) {
          v1::JobCounts counts;
          CountJob(ended, &counts);
          CountJob(unfinished, &counts);
          for (int k = 0, m = mix; k < others; ++k, m /= 6) CountJob(all[m % 6], &counts);
          for (bool cancel : {false, true}) {
            EXPECT_EQ(DeriveCollectionState(counts, cancel), v1::COLLECTION_STATE_RUNNING);
          }
        }
      }
      EXPECT_TRUE(ResultKeepsCollectionRunning(v1::COLLECTION_STATE_RUNNING, ended, true));
      EXPECT_TRUE(ResultMayKeepCollectionRunning(v1::COLLECTION_STATE_RUNNING, ended));
    }
  }
  // The last unfinished job ended: the collection may now be terminal.
  EXPECT_FALSE(
      ResultKeepsCollectionRunning(v1::COLLECTION_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED, false));
  // Requeued (a retry): every job may be queued again, so QUEUED is possible.
  EXPECT_FALSE(
      ResultKeepsCollectionRunning(v1::COLLECTION_STATE_RUNNING, v1::JOB_STATE_QUEUED, true));
  // Not stored as RUNNING (unknown, or left otherwise by an older server).
  EXPECT_FALSE(ResultKeepsCollectionRunning(std::nullopt, v1::JOB_STATE_SUCCEEDED, true));
  EXPECT_FALSE(
      ResultKeepsCollectionRunning(v1::COLLECTION_STATE_QUEUED, v1::JOB_STATE_FAILED, true));
  // The part without the read says no to the same cases it can see alone.
  EXPECT_FALSE(ResultMayKeepCollectionRunning(v1::COLLECTION_STATE_RUNNING, v1::JOB_STATE_QUEUED));
  EXPECT_FALSE(ResultMayKeepCollectionRunning(std::nullopt, v1::JOB_STATE_SUCCEEDED));
  EXPECT_FALSE(ResultMayKeepCollectionRunning(v1::COLLECTION_STATE_QUEUED, v1::JOB_STATE_FAILED));
}

}  // namespace
}  // namespace npuperf::server
