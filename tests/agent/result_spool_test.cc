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

// Issue #18 (chaos soak, full-disk fault): a Put that fails to write left its
// .tmp behind for good. The .tmp is made a link to /dev/full, so the write
// fails with ENOSPC as on a full work directory.
TEST(ResultSpoolTest, AFailedWriteLeavesNothingInTheSpool) {
  testing::TempDir dir;
  ResultSpool spool(dir.path());
  std::filesystem::create_symlink("/dev/full", dir.path() / "5-1-u.result.tmp");
  absl::Status s = spool.Put(Result(5, "u"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("No space left"), std::string::npos) << s;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  EXPECT_EQ(spool.Depth(), 0u);
}

// A .tmp that a crash (kill -9 between write and rename) left is never a
// result: the next scan drops it.
TEST(ResultSpoolTest, LeftoverTempFilesAreDropped) {
  testing::TempDir dir;
  ResultSpool spool(dir.path());
  ASSERT_TRUE(spool.Put(Result(3, "c")).ok());
  std::ofstream(dir.path() / "8-1-half.result.tmp") << "partial";
  auto pending = spool.Pending();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].job_id(), 3);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "8-1-half.result.tmp"));
}

}  // namespace
}  // namespace npuperf::agent
