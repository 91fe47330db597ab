// RunParallel: every index exactly once, whatever the thread count, and
// only after every call has returned.
#include "client/parallel.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace npuperf::client {
namespace {

TEST(RunParallelTest, CallsEveryIndexOnceOnAtMostTheThreadsAsked) {
  for (size_t n : {0, 1, 2, 7, 100}) {
    for (size_t threads : {0, 1, 2, 4, 200}) {
      std::vector<std::atomic<int>> calls(n);
      absl::Mutex mu;
      std::set<std::thread::id> seen;
      RunParallel(n, threads, [&](size_t i) {
        ++calls[i];
        absl::MutexLock lock(&mu);
        seen.insert(std::this_thread::get_id());
      });
      for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(calls[i].load(), 1) << n << " " << threads << " " << i;
      EXPECT_LE(seen.size(), std::max<size_t>(1, threads)) << n << " " << threads;
      if (n > 0 && threads <= 1) {
        EXPECT_EQ(*seen.begin(), std::this_thread::get_id()) << "one thread: the caller's";
      }
    }
  }
}

// Two calls that each wait for the other finish only when they run at once.
TEST(RunParallelTest, TwoThreadsRunTwoCallsAtOnce) {
  absl::Mutex mu;
  int started = 0;
  RunParallel(2, 2, [&](size_t) {
    absl::MutexLock lock(&mu);
    ++started;
    mu.Await(absl::Condition(
        +[](int* s) { return *s == 2; }, &started));
  });
  EXPECT_EQ(started, 2);
}

}  // namespace
}  // namespace npuperf::client
