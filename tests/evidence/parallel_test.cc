// evidence/parallel.h and its two users: the seven metric reads of a group and
// the copies of a round archive give the same result on any thread count.
#include "evidence/parallel.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "evidence/archive.h"
#include "evidence/evidence.h"
#include "evidence/evidence_json.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;

TEST(ForEachIndexTest, CallsEveryIndexExactlyOnceForAnyThreadCount) {
  for (int threads : {0, 1, 2, 3, 8}) {
    for (size_t n : {0u, 1u, 2u, 7u, 100u}) {
      std::vector<std::atomic<int>> calls(n);
      ForEachIndex(n, threads, [&](size_t i) { calls[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(calls[i].load(), 1) << "threads " << threads << " n " << n << " i " << i;
      }
    }
  }
}

TEST(ForEachIndexTest, OneThreadRunsInOrderOnTheCaller) {
  std::vector<size_t> order;
  std::thread::id caller = std::this_thread::get_id();
  bool elsewhere = false;
  ForEachIndex(5, 1, [&](size_t i) {
    order.push_back(i);
    elsewhere |= std::this_thread::get_id() != caller;
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(elsewhere);
}

// Two calls that each wait for the other can only both finish when they run
// at the same time: proof that two threads really work.
TEST(ForEachIndexTest, TwoThreadsRunTwoItemsAtOnce) {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  std::set<std::thread::id> ids;
  bool both = true;
  ForEachIndex(2, 2, [&](size_t) {
    std::unique_lock<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
    ++started;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return started == 2; })) both = false;
  });
  EXPECT_TRUE(both);
  EXPECT_EQ(ids.size(), 2u);
}

TEST(FileThreadsTest, APositiveRequestWinsElseTheDefaultWhichIsOneToFour) {
  EXPECT_EQ(FileThreads(3), 3);
  EXPECT_EQ(FileThreads(0), DefaultFileThreads());
  EXPECT_GE(DefaultFileThreads(), 1);
  EXPECT_LE(DefaultFileThreads(), 4);
}

BuildOptions Opts(int threads) {
  BuildOptions o;
  o.op_name = "sanitized_add_custom_vector";
  o.soc = "Ascend910B2";
  o.file_threads = threads;
  return o;
}

// group_aiv_partial lacks metric runs, so its evidence carries warnings and
// missing metrics whose order must not depend on which thread read first.
TEST(ParallelEvidenceTest, TheEvidenceIsTheSameOnOneAndOnSevenThreads) {
  auto one = BuildEvidence(testing::TestData("group_aiv_partial"), Opts(1));
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_FALSE(one->warnings.empty());
  ASSERT_FALSE(one->missing_metrics.empty());
  for (int i = 0; i < 20; ++i) {
    auto seven = BuildEvidence(testing::TestData("group_aiv_partial"), Opts(7));
    ASSERT_TRUE(seven.ok()) << seven.status();
    EXPECT_EQ(ToJson(*seven), ToJson(*one));
    EXPECT_EQ(seven->warnings, one->warnings);
  }
}

// Two metric runs that both lack the target: the error names the first in
// metric order (Memory before L2Cache), as a one-by-one read did.
TEST(ParallelEvidenceTest, TheFirstFailingMetricInMetricOrderNamesTheError) {
  testing::TempDir tmp;
  fs::copy(testing::TestData("group_aiv_partial"), tmp.path() / "g", fs::copy_options::recursive);
  int emptied = 0;
  for (const char* metric : {"PROF_Memory", "PROF_L2Cache"}) {
    fs::path dir = tmp.path() / "g" / metric;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.path().filename().string().rfind("op_summary_", 0) != 0) continue;
      std::string bytes = testing::ReadFile(e.path());
      testing::WriteFile(e.path(), bytes.substr(0, bytes.find('\n') + 1));  // header only
      ++emptied;
    }
  }
  ASSERT_GE(emptied, 1);
  auto one = BuildEvidence(tmp.path() / "g", Opts(1));
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("metric Memory"), std::string::npos) << one.status();
  for (int i = 0; i < 20; ++i) {
    auto seven = BuildEvidence(tmp.path() / "g", Opts(7));
    ASSERT_FALSE(seven.ok());
    EXPECT_EQ(seven.status(), one.status());
  }
}

TEST(ParallelArchiveTest, EveryCopyHasTheSourceBytesAndAFailedCopyNamesItsMetric) {
  auto ev = BuildEvidence(testing::TestData("group_a2_e2"), [] {
    BuildOptions o;
    o.op_name = "main_kernel";
    return o;
  }());
  ASSERT_TRUE(ev.ok()) << ev.status();
  testing::TempDir tmp;
  auto copied = ArchiveGroupCsvs(testing::TestData("group_a2_e2"), tmp.path());
  ASSERT_TRUE(copied.ok()) << copied.status();
  ASSERT_GE(*copied, 7);
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    ++files;
    EXPECT_GT(fs::file_size(e.path()), 0u) << e.path();
  }
  EXPECT_EQ(files, *copied);
  auto pipe = ev->metrics.front();
  EXPECT_EQ(testing::ReadFile(tmp.path() / "op_summary_PipeUtilization.csv"),
            testing::ReadFile(pipe.source));

  auto broken = ArchiveGroupCsvs(testing::TestData("group_a2_e2"), tmp.path() / "absent");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("archive PipeUtilization"), std::string::npos)
      << broken.status();
}

}  // namespace
}  // namespace npuperf::evidence
