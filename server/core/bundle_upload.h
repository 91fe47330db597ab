#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "npuperf/v1/collection_service.pb.h"

namespace npuperf::server {

// Reads the next message of an UploadBundle stream into *msg; false at the
// end of the stream.
using ReadUploadMessage = std::function<bool(v1::UploadBundleRequest* msg)>;

// A bundle received whole and checked.
struct ReceivedBundle {
  v1::BundleHeader header;
  std::string content;  // the tar
};

// Receives one UploadBundle stream, checking it as it arrives: the first
// message must be a BundleHeader whose sha256 is 64 lowercase hex
// (INVALID_ARGUMENT naming the field) announcing 1..limit bytes
// (RESOURCE_EXHAUSTED otherwise); every further message is a chunk, and the
// chunks add up to exactly size_bytes and hash to sha256 (INVALID_ARGUMENT
// naming the header field otherwise). The tar must pass VerifyBundle with
// kMaxUnpackedFactor * limit. Pure apart from `read`.
absl::StatusOr<ReceivedBundle> ReceiveBundle(const ReadUploadMessage& read, int64_t limit);

}  // namespace npuperf::server
