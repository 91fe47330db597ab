#pragma once

#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "agent/device_lock.h"

namespace npuperf::agent {

// flock(2) on one lock file per device: open(O_CREAT|O_RDWR|O_CLOEXEC),
// flock(LOCK_EX|LOCK_NB). The kernel releases the lock when the holder dies;
// files are never deleted (deleting a locked file would let a second holder
// lock a new inode). O_CLOEXEC keeps runners from inheriting the lock: after
// an agent crash the device is free again and the lease fencing on the
// server stops a stale result (style.md §6, conscious choice).
// An in-process set of held devices gives clear local errors, since flock
// on a second open file description of the same file would block too but
// says nothing about who holds it. Thread-safe.
class FlockDeviceLocker final : public DeviceLocker {
 public:
  // path_template: a directory ("DIR" -> DIR/device_<id>.lock) or a path
  // containing "{id}" (e.g. /tmp/ascend_locks/device_{id}.lock).
  explicit FlockDeviceLocker(std::string path_template);

  absl::StatusOr<std::unique_ptr<DeviceLease>> TryLock(int device_id) override;
  std::string PathFor(int device_id) const;

 private:
  friend class FlockLease;
  void Release(int device_id);

  const std::string template_;
  absl::Mutex mu_;
  std::set<int> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::agent
