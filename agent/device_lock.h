#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace npuperf::agent {

// A held device lock; releasing happens in the destructor.
class DeviceLease {
 public:
  virtual ~DeviceLease() = default;
  virtual int device_id() const = 0;
};

// Host-wide exclusive device locks (style.md §4, seam 3).
// Thread-safe.
class DeviceLocker {
 public:
  virtual ~DeviceLocker() = default;
  // RESOURCE_EXHAUSTED("device busy") when another holder has it (another
  // process, or this process already); other failures name the lock file.
  virtual absl::StatusOr<std::unique_ptr<DeviceLease>> TryLock(int device_id) = 0;
};

}  // namespace npuperf::agent
