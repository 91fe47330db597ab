#include "common/backoff.h"

#include "gtest/gtest.h"

namespace npuperf {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, GrowsWithinBoundsAndCaps) {
  Backoff b(milliseconds(100), milliseconds(1000), 7);
  int64_t previous_ceiling = 0;
  for (int i = 0; i < 10; ++i) {
    const int64_t ceiling = std::min<int64_t>(1000, 100LL << i);
    const auto d = b.Next().count();
    EXPECT_GE(d, ceiling / 2) << i;
    EXPECT_LE(d, ceiling) << i;
    EXPECT_GE(ceiling, previous_ceiling);
    previous_ceiling = ceiling;
  }
  b.Reset();
  EXPECT_LE(b.Next().count(), 100);
}

TEST(BackoffTest, DeterministicForASeed) {
  Backoff a(milliseconds(10), milliseconds(5000), 42), b(milliseconds(10), milliseconds(5000), 42);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a.Next(), b.Next());
}

}  // namespace
}  // namespace npuperf
