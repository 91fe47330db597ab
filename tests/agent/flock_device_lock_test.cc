#include "agent/flock_device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

TEST(FlockDeviceLockTest, OneHolderPerDeviceAcrossLockers) {
  testing::TempDir dir;
  FlockDeviceLocker a(dir.path().string()), b(dir.path().string());
  auto held = a.TryLock(2);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(absl::IsResourceExhausted(a.TryLock(2).status()));  // same agent
  EXPECT_TRUE(absl::IsResourceExhausted(b.TryLock(2).status()));  // another agent on the host
  EXPECT_TRUE(b.TryLock(3).ok());
  held->reset();
  EXPECT_TRUE(b.TryLock(2).ok());
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "device_2.lock"));  // never deleted
}

TEST(FlockDeviceLockTest, ForeignFlockKeepsTheDeviceBusy) {
  testing::TempDir dir;
  FlockDeviceLocker locker(dir.path().string());
  const int fd = ::open((dir.path() / "device_5.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  auto busy = locker.TryLock(5);
  EXPECT_TRUE(absl::IsResourceExhausted(busy.status()));
  EXPECT_NE(busy.status().message().find("another process"), absl::string_view::npos);
  ::close(fd);
  EXPECT_TRUE(locker.TryLock(5).ok());
}

TEST(FlockDeviceLockTest, PathTemplates) {
  FlockDeviceLocker dir("/run/npuperf/locks");
  EXPECT_EQ(dir.PathFor(3), "/run/npuperf/locks/device_3.lock");
  FlockDeviceLocker templ("/tmp/ascend_locks/device_{id}.lock");
  EXPECT_EQ(templ.PathFor(7), "/tmp/ascend_locks/device_7.lock");
}

}  // namespace
}  // namespace npuperf::agent
