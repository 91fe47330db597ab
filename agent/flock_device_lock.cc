#include "agent/flock_device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace npuperf::agent {

class FlockLease final : public DeviceLease {
 public:
  FlockLease(FlockDeviceLocker& owner, int device_id, int fd)
      : owner_(owner), device_id_(device_id), fd_(fd) {}
  ~FlockLease() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    owner_.Release(device_id_);
  }
  int device_id() const override { return device_id_; }

 private:
  FlockDeviceLocker& owner_;
  const int device_id_;
  const int fd_;
};

FlockDeviceLocker::FlockDeviceLocker(std::string path_template)
    : template_(std::move(path_template)) {}

std::string FlockDeviceLocker::PathFor(int device_id) const {
  if (template_.find("{id}") != std::string::npos) {
    return absl::StrReplaceAll(template_, {{"{id}", std::to_string(device_id)}});
  }
  return absl::StrCat(template_, "/device_", device_id, ".lock");
}

absl::StatusOr<std::unique_ptr<DeviceLease>> FlockDeviceLocker::TryLock(int device_id) {
  {
    absl::MutexLock lock(&mu_);
    if (!held_.insert(device_id).second) {
      return absl::ResourceExhaustedError(
          absl::StrCat("device ", device_id, " busy (held by this agent)"));
    }
  }
  const std::string path = PathFor(device_id);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    const int err = errno;
    Release(device_id);
    return absl::UnavailableError(absl::StrCat("open lock file ", path, ": ", std::strerror(err)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    Release(device_id);
    if (err == EWOULDBLOCK) {
      return absl::ResourceExhaustedError(
          absl::StrCat("device ", device_id, " busy (", path, " locked by another process)"));
    }
    return absl::UnavailableError(absl::StrCat("flock ", path, ": ", std::strerror(err)));
  }
  return std::unique_ptr<DeviceLease>(new FlockLease(*this, device_id, fd));
}

void FlockDeviceLocker::Release(int device_id) {
  absl::MutexLock lock(&mu_);
  held_.erase(device_id);
}

}  // namespace npuperf::agent
