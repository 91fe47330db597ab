#include "agent/result_spool.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

v1::ReportResultRequest Result(int64_t job, const std::string& uuid) {
  v1::ReportResultRequest r;
  r.set_job_id(job);
  r.set_attempt(1);
  r.set_fencing_token(7);
  r.set_update_uuid(uuid);
  r.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
  r.mutable_evidence()->set_op_name("kernel");
  return r;
}

TEST(ResultSpoolTest, SurvivesARestartUntilRemoved) {
  testing::TempDir dir;
  {
    ResultSpool spool(dir.path() / "spool");
    ASSERT_TRUE(spool.Put(Result(9, "b")).ok());
    ASSERT_TRUE(spool.Put(Result(4, "a")).ok());
  }
  ResultSpool reopened(dir.path() / "spool");
  auto pending = reopened.Pending();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].job_id(), 4);
  EXPECT_EQ((*pending)[1].evidence().op_name(), "kernel");
  reopened.Remove((*pending)[0]);
  EXPECT_EQ(reopened.Depth(), 1u);
}

TEST(ResultSpoolTest, CorruptFilesAreSetAside) {
  testing::TempDir dir;
  ResultSpool spool(dir.path());
  std::ofstream(dir.path() / "1-1-x.result") << "\xff\xff\xff not a proto";
  auto pending = spool.Pending();
  ASSERT_TRUE(pending.ok());
  EXPECT_TRUE(pending->empty());
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "1-1-x.result.corrupt"));
}

}  // namespace
}  // namespace npuperf::agent
