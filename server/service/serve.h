#pragma once

#include <string>

#include "absl/status/status.h"
#include "common/status_util.h"
#include "grpcpp/server_context.h"
#include "server/core/auth.h"
#include "server/store/db_deadline.h"
#include "server/core/metrics.h"

namespace npuperf::server {

// What a service adapter needs besides its domain object.
struct ServiceContext {
  Authenticator& auth;
  ServerMetrics& metrics;
};

// Authenticates the caller (agents only where agent_only), runs the handler
// with the principal under the call's deadline (the store's statements stop
// there, R9), counts the request and maps the status once (R2).
template <typename F>
grpc::Status Serve(ServiceContext& sc, const char* method, grpc::ServerContext* ctx,
                   bool agent_only, F&& handler) {
  std::string authorization;
  auto md = ctx->client_metadata().find("authorization");
  if (md != ctx->client_metadata().end()) authorization.assign(md->second.data(), md->second.size());
  absl::Status status;
  auto principal = sc.auth.Authenticate(authorization);
  if (!principal.ok()) {
    status = principal.status();
  } else if (sc.auth.required() && agent_only != (principal->kind == "agent")) {
    status = absl::PermissionDeniedError(agent_only ? "only agent tokens may call AgentService"
                                                    : "agent tokens may only call AgentService");
  } else {
    DbDeadlineScope deadline(ctx->deadline());
    status = handler(*principal);
  }
  sc.metrics.CountRequest(method, absl::StatusCodeToString(status.code()));
  return ToGrpcStatus(status);
}

}  // namespace npuperf::server
