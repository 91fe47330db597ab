#include "common/secure_random.h"

#include <set>

#include "gtest/gtest.h"

namespace npuperf {
namespace {

TEST(SecureRandomTest, HexOfTheAskedLengthAndNeverTheSame) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto s = SecureRandomHex(32);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_EQ(s->size(), 64u);
    ASSERT_EQ(s->find_first_not_of("0123456789abcdef"), std::string::npos) << *s;
    seen.insert(*s);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(SecureRandomTest, ZeroBytesIsInvalid) {
  EXPECT_TRUE(absl::IsInvalidArgument(SecureRandomHex(0).status()));
}

}  // namespace
}  // namespace npuperf
