#include "server/core/job_state.h"

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

TEST(JobStateTest, TerminalStatesNeverChange) {
  for (auto from : {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    EXPECT_TRUE(IsTerminal(from));
    for (int to = 0; to <= 6; ++to) EXPECT_FALSE(CanTransition(from, static_cast<v1::JobState>(to)));
  }
  EXPECT_TRUE(CanTransition(v1::JOB_STATE_QUEUED, v1::JOB_STATE_LEASED));
  EXPECT_FALSE(CanTransition(v1::JOB_STATE_QUEUED, v1::JOB_STATE_SUCCEEDED));
  EXPECT_TRUE(CanTransition(v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED));
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

}  // namespace
}  // namespace npuperf::server
