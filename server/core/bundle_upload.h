#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "npuperf/v1/collection_service.pb.h"

namespace npuperf::server {

// Reads the next message of an UploadBundle stream into *msg; false at the
// end of the stream.
using ReadUploadMessage = std::function<bool(v1::UploadBundleRequest* msg)>;

// A bundle's bytes on disk: an unlinked temporary file (O_TMPFILE, or
// mkstemp + unlink), mode 0600, gone when the object is destroyed. Uploads
// are written here as they arrive and read back from here, so no upload is
// held whole in memory. Movable; not thread-safe.
class BundleFile {
 public:
  // A new empty file in dir. UNAVAILABLE when none can be created (no such
  // directory, no file descriptors left).
  static absl::StatusOr<BundleFile> Create(const std::filesystem::path& dir);
  // A new named file at path (O_EXCL, mode 0600), for a caller that renames
  // it into place once complete (core/artifact_files.h); the name is the
  // caller's to remove. UNAVAILABLE when it cannot be created.
  static absl::StatusOr<BundleFile> CreateAt(const std::filesystem::path& path);
  // An existing file, read-only (size() is its size). NOT_FOUND when absent.
  static absl::StatusOr<BundleFile> OpenForRead(const std::filesystem::path& path);
  BundleFile(BundleFile&& other) noexcept;
  BundleFile& operator=(BundleFile&& other) noexcept;
  BundleFile(const BundleFile&) = delete;
  BundleFile& operator=(const BundleFile&) = delete;
  ~BundleFile();

  // Appends bytes (RESOURCE_EXHAUSTED when the disk is full).
  absl::Status Append(const std::string& bytes);
  // Up to max bytes from offset (fewer only at the end).
  absl::StatusOr<std::string> Read(int64_t offset, int64_t max) const;
  // fsync: the bytes are durable before the file is renamed into place.
  absl::Status Sync();
  int fd() const { return fd_; }
  int64_t size() const { return size_; }

 private:
  BundleFile(int fd, int64_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  int64_t size_ = 0;
};

// Checks what an upload header announces (bundles and artifacts alike):
// sha256 is 64 lowercase hex and size_bytes 1..limit; INVALID_ARGUMENT
// naming header.sha256 / header.size_bytes, RESOURCE_EXHAUSTED above the
// limit, naming `what` ("bundle", "artifact") and limit_name (its flag; empty:
// none).
absl::Status CheckUploadHeader(const std::string& sha256, int64_t size_bytes, int64_t limit,
                               const std::string& what, const std::string& limit_name);

// Reads the chunks of an upload after its header into file (next gives the
// next chunk; false at the end of the stream, or INVALID_ARGUMENT naming
// "chunk" when the message is not one) and checks them as they arrive: they
// add up to exactly size_bytes and hash to sha256 (INVALID_ARGUMENT naming
// header.size_bytes / header.sha256 otherwise). Never more than one chunk
// in memory.
using NextChunk = std::function<absl::StatusOr<bool>(std::string* chunk)>;
absl::Status ReceiveChunks(const NextChunk& next, const std::string& sha256, int64_t size_bytes,
                           BundleFile& file);

// A bundle received whole and checked.
struct ReceivedBundle {
  v1::BundleHeader header;
  BundleFile content;  // the tar
};

// Called with the header before any content is read; a non-OK status
// refuses the upload (quota, limits) as it stands.
using AdmitUpload = std::function<absl::Status(const v1::BundleHeader& header)>;

// Receives one UploadBundle stream, checking it as it arrives: the first
// message must be a BundleHeader whose sha256 is 64 lowercase hex
// (INVALID_ARGUMENT naming the field) announcing 1..limit bytes
// (RESOURCE_EXHAUSTED otherwise), which `admit` (when set) accepts; every
// further message is a chunk, written to a BundleFile in dir as it arrives,
// and the chunks add up to exactly size_bytes and hash to sha256
// (INVALID_ARGUMENT naming the header field otherwise). The tar must pass
// VerifyBundleFd with kMaxUnpackedFactor * limit. Pure apart from `read`,
// `admit` and the file.
absl::StatusOr<ReceivedBundle> ReceiveBundle(
    const ReadUploadMessage& read, int64_t limit,
    const std::filesystem::path& dir = std::filesystem::temp_directory_path(),
    const AdmitUpload& admit = nullptr);

}  // namespace npuperf::server
