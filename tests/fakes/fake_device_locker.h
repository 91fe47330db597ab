#pragma once

#include <memory>
#include <set>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/device_lock.h"

namespace npuperf::testing {

// A DeviceLocker with scripted answers (agent/device_lock.h; style.md §4, seam
// 3). A device is free unless the test marks it busy ("another process" holds
// it); a device this locker has leased answers RESOURCE_EXHAUSTED "device busy"
// until its lease is destroyed, as the contract says. Records the devices held
// now and how many leases were released. Leases must not outlive the locker.
// Thread-safe.
class FakeDeviceLocker final : public agent::DeviceLocker {
 public:
  // While busy, TryLock(device) answers RESOURCE_EXHAUSTED (locked elsewhere).
  void SetBusy(int device, bool busy) {
    absl::MutexLock lock(&mu_);
    if (busy) {
      busy_.insert(device);
    } else {
      busy_.erase(device);
    }
  }

  absl::StatusOr<std::unique_ptr<agent::DeviceLease>> TryLock(int device_id) override {
    absl::MutexLock lock(&mu_);
    if (busy_.contains(device_id)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("device ", device_id, " busy (locked by another process)"));
    }
    if (!held_.insert(device_id).second) {
      return absl::ResourceExhaustedError(
          absl::StrCat("device ", device_id, " busy (held by this agent)"));
    }
    return std::unique_ptr<agent::DeviceLease>(new Lease(*this, device_id));
  }

  // Devices leased and not yet released.
  std::set<int> held() {
    absl::MutexLock lock(&mu_);
    return held_;
  }
  // Blocks until n leases have been released in all; false if that takes a
  // minute of real time (a failing test ends instead of hanging).
  bool AwaitReleases(int n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return releases_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(60));
  }

 private:
  class Lease final : public agent::DeviceLease {
   public:
    Lease(FakeDeviceLocker& owner, int device_id) : owner_(owner), device_id_(device_id) {}
    ~Lease() override { owner_.Release(device_id_); }
    int device_id() const override { return device_id_; }

   private:
    FakeDeviceLocker& owner_;
    const int device_id_;
  };

  void Release(int device_id) {
    absl::MutexLock lock(&mu_);
    held_.erase(device_id);
    ++releases_;
  }

  absl::Mutex mu_;
  std::set<int> busy_ ABSL_GUARDED_BY(mu_);
  std::set<int> held_ ABSL_GUARDED_BY(mu_);
  int releases_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace npuperf::testing
