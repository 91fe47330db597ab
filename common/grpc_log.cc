#include "common/grpc_log.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpc/support/log.h"

namespace npuperf {
namespace {

std::function<void(const GrpcLogLine&)>& Observer() {
  static auto* observer = new std::function<void(const GrpcLogLine&)>();
  return *observer;
}

LogLevel LevelOf(gpr_log_severity severity) {
  switch (severity) {
    case GPR_LOG_SEVERITY_DEBUG:
    case GPR_LOG_SEVERITY_INFO: return LogLevel::kInfo;
    case GPR_LOG_SEVERITY_ERROR: return LogLevel::kError;
  }
  return LogLevel::kError;
}

absl::string_view BaseName(absl::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

void Forward(gpr_log_func_args* args) {
  GrpcLogLine line{args->file != nullptr ? args->file : "", args->line, LevelOf(args->severity),
                   args->message != nullptr ? args->message : ""};
  if (Observer()) Observer()(line);
  Log(line.level, "grpc", absl::StrCat(BaseName(line.file), ":", line.line, " ", line.message));
}

}  // namespace

void RouteGrpcLogs(std::function<void(const GrpcLogLine&)> observer) {
  Observer() = std::move(observer);
  gpr_set_log_function(&Forward);
}

bool ListenerDied(const GrpcLogLine& line) {
  return absl::EndsWith(line.file, "tcp_server_posix.cc") &&
         absl::StartsWith(line.message, "Failed accept4");
}

}  // namespace npuperf
