#include "sim/device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace npuperf::sim {

absl::StatusOr<std::unique_ptr<DeviceLock>> DeviceLock::Acquire(
    const std::filesystem::path& state_dir, int device, const std::string& holder) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  std::string path = (state_dir / absl::StrCat("device_", device, ".lock")).string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[512] = {0};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    std::string who =
        n > 0 ? std::string(absl::StripAsciiWhitespace(std::string(buf, n))) : "unknown";
    if (err != EWOULDBLOCK)
      return absl::InternalError(absl::StrCat("flock ", path, ": ", std::strerror(err)));
    return absl::ResourceExhaustedError(
        absl::StrCat("device ", device, " is already being profiled (", who, ")"));
  }
  std::string text = holder + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    // The lock itself holds; only the holder note is missing.
  }
  return std::unique_ptr<DeviceLock>(new DeviceLock(fd));
}

DeviceLock::~DeviceLock() {
  if (ftruncate(fd_, 0) != 0) {
    // Best effort: a stale note is harmless once the lock is gone.
  }
  ::close(fd_);
}

void AppendLine(const std::string& log_path, const std::string& line) {
  if (log_path.empty()) return;
  int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return;
  std::string text = line + "\n";
  if (::write(fd, text.data(), text.size()) < 0) {
    // Nothing else to do: the run already fails loudly on stderr.
  }
  ::close(fd);
}

}  // namespace npuperf::sim
