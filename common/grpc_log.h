#pragma once

#include <functional>

#include "absl/strings/string_view.h"
#include "common/log.h"

namespace npuperf {

// One line gRPC core wrote with gpr_log.
struct GrpcLogLine {
  absl::string_view file;  // source file as gRPC reports it (a path)
  int line = 0;
  LogLevel level = LogLevel::kError;
  absl::string_view message;
};

// Routes gRPC core's own log lines (gpr_log: "E1201 19:03:35.678 ... Failed
// accept4") into Log(), component "grpc", so they share the binaries' format
// and escaping. `observer`, when set, sees every line first. Call once, early
// in main, before any gRPC object exists (gRPC keeps a plain function pointer;
// the observer lives in a process-wide slot). gRPC's GRPC_VERBOSITY still
// decides which lines are written at all (ERROR by default).
void RouteGrpcLogs(std::function<void(const GrpcLogLine&)> observer = {});

// Whether `line` says a gRPC 1.51 server's listener has stopped accepting for
// good: its TCP server logs "Failed accept4: <strerror>" when accept4 fails
// with anything but EINTR, EAGAIN or ECONNABORTED (EMFILE and ENFILE among
// them) and then never re-arms the port, even after descriptors are free again
// (grpc/grpc#33656, fixed in gRPC 1.57).
bool ListenerDied(const GrpcLogLine& line);

}  // namespace npuperf
