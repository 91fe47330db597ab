#include "common/status_util.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace npuperf {
namespace {

constexpr char kBadRequestUrl[] = "type.googleapis.com/google.rpc.BadRequest";
constexpr char kErrorInfoUrl[] = "type.googleapis.com/google.rpc.ErrorInfo";
constexpr char kErrorDomain[] = "npuperf.dev";
constexpr size_t kMaxMessageBytes = 1024;
// Serialized BadRequest bytes (the trailer carries them base64-encoded,
// beside the message, under the clients' 8 KiB metadata limit).
constexpr size_t kMaxViolationBytes = 3072;
constexpr size_t kMaxViolationTextBytes = 256;

std::string Cut(const std::string& s) { return s.substr(0, kMaxViolationTextBytes); }

}  // namespace

absl::Status StatusWithFields(absl::StatusCode code, const std::string& what,
                              const std::vector<FieldViolation>& violations) {
  google::rpc::BadRequest bad;
  std::string message = what + ":";
  size_t listed = 0;
  for (const auto& v : violations) {
    if (bad.ByteSizeLong() > kMaxViolationBytes) break;
    auto* fv = bad.add_field_violations();
    fv->set_field(Cut(v.field));
    fv->set_description(Cut(v.description));
    if (message.size() < kMaxMessageBytes) {
      absl::StrAppend(&message, " ", fv->field(), ": ", fv->description(), ";");
    }
    ++listed;
  }
  if (listed < violations.size()) {
    auto* more = bad.add_field_violations();
    more->set_field("...");
    more->set_description(absl::StrCat("and ", violations.size() - listed, " more"));
    absl::StrAppend(&message, " and ", violations.size() - listed, " more;");
  }
  message.pop_back();
  absl::Status status(code, message);
  status.SetPayload(kBadRequestUrl, absl::Cord(bad.SerializeAsString()));
  return status;
}

absl::Status InvalidArgumentWithFields(const std::vector<FieldViolation>& violations) {
  return StatusWithFields(absl::StatusCode::kInvalidArgument, "invalid request", violations);
}

std::vector<FieldViolation> FieldViolationsOf(const absl::Status& status) {
  std::vector<FieldViolation> out;
  auto payload = status.GetPayload(kBadRequestUrl);
  google::rpc::BadRequest bad;
  if (!payload.has_value() || !bad.ParseFromString(std::string(*payload))) return out;
  for (const auto& fv : bad.field_violations()) out.push_back({fv.field(), fv.description()});
  return out;
}

absl::Status WithErrorReason(absl::Status status, const std::string& reason) {
  google::rpc::ErrorInfo info;
  info.set_reason(reason);
  info.set_domain(kErrorDomain);
  status.SetPayload(kErrorInfoUrl, absl::Cord(info.SerializeAsString()));
  return status;
}

std::string ErrorReasonOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrorInfoUrl);
  google::rpc::ErrorInfo info;
  if (!payload.has_value() || !info.ParseFromString(std::string(*payload))) return "";
  return info.reason();
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message(status.message().substr(0, kMaxMessageBytes));
  const auto code = static_cast<grpc::StatusCode>(status.raw_code());
  google::rpc::Status details;
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    auto* any = details.add_details();
    any->set_type_url(std::string(url));
    any->set_value(std::string(payload));
  });
  if (details.details().empty()) return grpc::Status(code, message);
  details.set_code(status.raw_code());
  details.set_message(message);
  return grpc::Status(code, message, details.SerializeAsString());
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status out(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  google::rpc::Status details;
  if (!status.error_details().empty() && details.ParseFromString(status.error_details())) {
    for (const auto& any : details.details()) {
      out.SetPayload(any.type_url(), absl::Cord(any.value()));
    }
  }
  return out;
}

}  // namespace npuperf
