#include "server/core/bundle_upload.h"

#include "absl/strings/str_cat.h"
#include "common/bundle_tar.h"
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

// The chunks after the header, checked against its size and hash.
absl::StatusOr<std::string> ReadContent(const ReadUploadMessage& read,
                                        const v1::BundleHeader& header) {
  std::string content;
  Sha256 hash;
  v1::UploadBundleRequest msg;
  while (read(&msg)) {
    if (!msg.has_chunk()) return InvalidArgumentWithFields({{"chunk", "expected tar bytes"}});
    if (static_cast<int64_t>(content.size() + msg.chunk().size()) > header.size_bytes()) {
      return InvalidArgumentWithFields({{"header.size_bytes", "more bytes than announced"}});
    }
    hash.Update(msg.chunk());
    content += msg.chunk();
  }
  if (static_cast<int64_t>(content.size()) != header.size_bytes()) {
    return InvalidArgumentWithFields({{"header.size_bytes", "fewer bytes than announced"}});
  }
  if (hash.HexDigest() != header.sha256()) {
    return InvalidArgumentWithFields({{"header.sha256", "does not match the uploaded bytes"}});
  }
  return content;
}

}  // namespace

absl::StatusOr<ReceivedBundle> ReceiveBundle(const ReadUploadMessage& read, int64_t limit) {
  auto header = ReadHeader(read, limit);
  if (!header.ok()) return header.status();
  auto content = ReadContent(read, *header);
  if (!content.ok()) return content.status();
  if (auto s = VerifyBundle(*content, limit * kMaxUnpackedFactor); !s.ok()) return s;
  return ReceivedBundle{*std::move(header), *std::move(content)};
}

}  // namespace npuperf::server
