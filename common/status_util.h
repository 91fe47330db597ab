#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace npuperf {

// One bad field of a request: "spec.operators[1].op_name" and why.
struct FieldViolation {
  std::string field;
  std::string description;
};

// INVALID_ARGUMENT carrying a google.rpc.BadRequest payload with every
// violation; the message lists them too, for clients that ignore details.
// The payload travels in a trailer, which gRPC clients cap at 8 KiB: past
// kMaxViolationBytes of violations the rest are summed up in one last
// violation ("...": "and N more"), and each field and description is cut at
// 256 bytes. REQUIRES: !violations.empty().
absl::Status InvalidArgumentWithFields(const std::vector<FieldViolation>& violations);

// The same BadRequest payload on another code (ALREADY_EXISTS for an
// idempotency key reused with another spec, naming the fields that differ).
absl::Status StatusWithFields(absl::StatusCode code, const std::string& what,
                              const std::vector<FieldViolation>& violations);

// The field violations attached to a status (empty when none).
std::vector<FieldViolation> FieldViolationsOf(const absl::Status& status);

// status with a google.rpc.ErrorInfo payload: a machine-readable reason
// (UPPER_SNAKE_CASE, e.g. "FOREIGN_AGENT") in domain "npuperf.dev", which
// clients receive in the status details.
absl::Status WithErrorReason(absl::Status status, const std::string& reason);

// The ErrorInfo reason attached to a status; empty when none.
std::string ErrorReasonOf(const absl::Status& status);

// The one absl -> gRPC mapping (style.md R2). absl and gRPC share code
// numbers. The message is cut at 1024 bytes; payloads travel as
// google.rpc.Status details in the grpc-status-details-bin trailer.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The reverse, for clients: keeps code, message and BadRequest details.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace npuperf
