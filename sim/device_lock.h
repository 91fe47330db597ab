#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace npuperf::sim {

// "One profiling task per device", the way the real driver refuses a second
// profiling session: an exclusive flock on <state_dir>/device_<id>.lock held
// for the whole msprof-sim run, independent of any npuperf lock. The file
// records the holder (pid, output) so the loser can name it. Owned by the
// simulator; released (and the fd closed) on destruction. Not thread-safe.
class DeviceLock {
 public:
  // Takes the lock without waiting. ResourceExhausted (message names the
  // holder) when another process profiles the device.
  static absl::StatusOr<std::unique_ptr<DeviceLock>> Acquire(const std::filesystem::path& state_dir,
                                                             int device, const std::string& holder);
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  explicit DeviceLock(int fd) : fd_(fd) {}
  int fd_;
};

// Appends one line to `log_path` (no-op when empty), with O_APPEND so
// concurrent writers do not interleave within a line.
void AppendLine(const std::string& log_path, const std::string& line);

}  // namespace npuperf::sim
