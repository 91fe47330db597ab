#include "server/core/bundle_upload.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/bundle_tar.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

absl::StatusOr<v1::BundleHeader> ReadHeader(const ReadUploadMessage& read, int64_t limit) {
  v1::UploadBundleRequest msg;
  if (!read(&msg) || !msg.has_header()) {
    return InvalidArgumentWithFields({{"header", "the first message must be a BundleHeader"}});
  }
  const v1::BundleHeader& header = msg.header();
  if (auto s = CheckUploadHeader(header.sha256(), header.size_bytes(), limit, "bundle", "");
      !s.ok()) {
    return s;
  }
  return header;
}

// The chunks after the header, written to a file in dir and checked
// against the header's size and hash.
absl::StatusOr<BundleFile> ReadContent(const ReadUploadMessage& read,
                                       const v1::BundleHeader& header,
                                       const std::filesystem::path& dir) {
  auto file = BundleFile::Create(dir);
  if (!file.ok()) return file.status();
  v1::UploadBundleRequest msg;
  auto next = [&](std::string* chunk) -> absl::StatusOr<bool> {
    if (!read(&msg)) return false;
    if (!msg.has_chunk()) return InvalidArgumentWithFields({{"chunk", "expected tar bytes"}});
    *chunk = std::move(*msg.mutable_chunk());
    return true;
  };
  if (auto s = ReceiveChunks(next, header.sha256(), header.size_bytes(), *file); !s.ok()) return s;
  return file;
}

// An unlinked file in dir: O_TMPFILE where the file system has it, else a
// named temporary removed at once.
int OpenUnlinked(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  std::string path = (dir / "npuperf-upload-XXXXXX").string();
  fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(path.c_str());
  return fd;
}

}  // namespace

absl::Status CheckUploadHeader(const std::string& sha256, int64_t size_bytes, int64_t limit,
                               const std::string& what, const std::string& limit_name) {
  if (!IsSha256Hex(sha256)) {
    return InvalidArgumentWithFields({{"header.sha256", "must be 64 lowercase hex digits"}});
  }
  if (size_bytes <= 0) {
    return InvalidArgumentWithFields({{"header.size_bytes", "must be at least 1"}});
  }
  if (size_bytes > limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, " of ", size_bytes, " bytes; the limit is ", limit, " bytes",
                     limit_name.empty() ? "" : absl::StrCat(" (", limit_name, ")")));
  }
  return absl::OkStatus();
}

absl::Status ReceiveChunks(const NextChunk& next, const std::string& sha256, int64_t size_bytes,
                           BundleFile& file) {
  Sha256 hash;
  std::string chunk;
  for (;;) {
    absl::StatusOr<bool> more = next(&chunk);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (file.size() + static_cast<int64_t>(chunk.size()) > size_bytes) {
      return InvalidArgumentWithFields({{"header.size_bytes", "more bytes than announced"}});
    }
    hash.Update(chunk);
    if (auto s = file.Append(chunk); !s.ok()) return s;
  }
  if (file.size() != size_bytes) {
    return InvalidArgumentWithFields({{"header.size_bytes", "fewer bytes than announced"}});
  }
  if (hash.HexDigest() != sha256) {
    return InvalidArgumentWithFields({{"header.sha256", "does not match the uploaded bytes"}});
  }
  return absl::OkStatus();
}

absl::StatusOr<BundleFile> BundleFile::Create(const std::filesystem::path& dir) {
  const int fd = OpenUnlinked(dir);
  if (fd < 0) {
    // The path is the server's business: logged, never sent to the client.
    LogError("server", absl::StrCat("cannot create an upload file in ", dir.string(), ": ",
                                    std::strerror(errno)));
    return absl::UnavailableError("the server cannot spool uploads right now; try again later");
  }
  return BundleFile(fd, 0);
}

absl::StatusOr<BundleFile> BundleFile::CreateAt(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    LogError("server", absl::StrCat("cannot create ", path.string(), ": ", std::strerror(errno)));
    return absl::UnavailableError("the server cannot store files right now; try again later");
  }
  return BundleFile(fd, 0);
}

absl::StatusOr<BundleFile> BundleFile::OpenForRead(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError("the stored file is gone");
    LogError("server", absl::StrCat("cannot open ", path.string(), ": ", std::strerror(errno)));
    return absl::UnavailableError("the server cannot read the stored file right now");
  }
  const off_t size = ::lseek(fd, 0, SEEK_END);
  return BundleFile(fd, size < 0 ? 0 : static_cast<int64_t>(size));
}

absl::Status BundleFile::Sync() {
  if (::fsync(fd_) != 0) {
    return absl::InternalError(absl::StrCat("fsync: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

BundleFile::BundleFile(BundleFile&& other) noexcept : fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
}

BundleFile& BundleFile::operator=(BundleFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    other.fd_ = -1;
  }
  return *this;
}

BundleFile::~BundleFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status BundleFile::Append(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, size_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      if (err == ENOSPC || err == EDQUOT) {
        return absl::ResourceExhaustedError("no disk space left for the upload");
      }
      return absl::InternalError(absl::StrCat("write upload file: ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
    size_ += n;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> BundleFile::Read(int64_t offset, int64_t max) const {
  std::string out(static_cast<size_t>(std::max<int64_t>(0, std::min(max, size_ - offset))), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd_, out.data() + done, out.size() - done, offset + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(absl::StrCat("read upload file: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return out;
}

absl::StatusOr<ReceivedBundle> ReceiveBundle(const ReadUploadMessage& read, int64_t limit,
                                             const std::filesystem::path& dir,
                                             const AdmitUpload& admit) {
  auto header = ReadHeader(read, limit);
  if (!header.ok()) return header.status();
  if (admit) {
    if (auto s = admit(*header); !s.ok()) return s;
  }
  auto content = ReadContent(read, *header, dir);
  if (!content.ok()) return content.status();
  if (auto s = VerifyBundleFd(content->fd(), limit * kMaxUnpackedFactor); !s.ok()) return s;
  return ReceivedBundle{*std::move(header), *std::move(content)};
}

}  // namespace npuperf::server
