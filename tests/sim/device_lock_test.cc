#include "sim/device_lock.h"

#include <fstream>

#include "gtest/gtest.h"

namespace npuperf::sim {
namespace {

TEST(DeviceLockTest, SecondHolderIsRefusedAndNamesTheFirst) {
  std::string dir = ::testing::TempDir() + "/lock_state";
  auto first = DeviceLock::Acquire(dir, 3, "pid=1 output=/a");
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = DeviceLock::Acquire(dir, 3, "pid=2 output=/b");
  ASSERT_TRUE(absl::IsResourceExhausted(second.status())) << second.status();
  EXPECT_NE(second.status().message().find("pid=1 output=/a"), std::string::npos);
  EXPECT_TRUE(DeviceLock::Acquire(dir, 4, "other device").ok());
  first->reset();
  EXPECT_TRUE(DeviceLock::Acquire(dir, 3, "pid=2 output=/b").ok());
}

TEST(DeviceLockTest, AppendLineAppends) {
  std::string log = ::testing::TempDir() + "/conflict.log";
  std::remove(log.c_str());
  AppendLine(log, "one");
  AppendLine(log, "two");
  AppendLine("", "ignored");
  std::ifstream in(log);
  std::string a, b;
  std::getline(in, a);
  std::getline(in, b);
  EXPECT_EQ(a, "one");
  EXPECT_EQ(b, "two");
}

}  // namespace
}  // namespace npuperf::sim
