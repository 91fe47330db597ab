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
#include "server/core/constants.h"

namespace npuperf::server {
namespace {

absl::StatusOr<v1::BundleHeader> ReadHeader(const ReadUploadMessage& read, int64_t limit) {
  v1::UploadBundleRequest msg;
  if (!read(&msg) || !msg.has_header()) {
    return InvalidArgumentWithFields({{"header", "the first message must be a BundleHeader"}});
  }
  const v1::BundleHeader& header = msg.header();
  if (!IsSha256Hex(header.sha256())) {
    return InvalidArgumentWithFields({{"header.sha256", "must be 64 lowercase hex digits"}});
  }
  if (header.size_bytes() <= 0) {
    return InvalidArgumentWithFields({{"header.size_bytes", "must be at least 1"}});
  }
  if (header.size_bytes() > limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat("bundle of ", header.size_bytes(), " bytes; the limit is ", limit));
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
  Sha256 hash;
  v1::UploadBundleRequest msg;
  while (read(&msg)) {
    if (!msg.has_chunk()) return InvalidArgumentWithFields({{"chunk", "expected tar bytes"}});
    if (file->size() + static_cast<int64_t>(msg.chunk().size()) > header.size_bytes()) {
      return InvalidArgumentWithFields({{"header.size_bytes", "more bytes than announced"}});
    }
    hash.Update(msg.chunk());
    if (auto s = file->Append(msg.chunk()); !s.ok()) return s;
  }
  if (file->size() != header.size_bytes()) {
    return InvalidArgumentWithFields({{"header.size_bytes", "fewer bytes than announced"}});
  }
  if (hash.HexDigest() != header.sha256()) {
    return InvalidArgumentWithFields({{"header.sha256", "does not match the uploaded bytes"}});
  }
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

absl::StatusOr<BundleFile> BundleFile::Create(const std::filesystem::path& dir) {
  const int fd = OpenUnlinked(dir);
  if (fd < 0) {
    // The path is the server's business: logged, never sent to the client.
    LogError("server", absl::StrCat("cannot create an upload file in ", dir.string(), ": ",
                                    std::strerror(errno)));
    return absl::UnavailableError("the server cannot spool uploads right now; try again later");
  }
  return BundleFile(fd);
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
