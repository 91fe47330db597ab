#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/status_util.h"
#include "grpcpp/server_context.h"
#include "server/core/auth.h"
#include "server/core/metrics.h"
#include "server/store/db_deadline.h"

namespace npuperf::server {

// What a service adapter needs besides its domain object.
struct ServiceContext {
  Authenticator& auth;
  ServerMetrics& metrics;
  Clock& clock;  // times each call (npuperf_server_grpc_handling_seconds)
};

// Counts one finished RPC by method and status code and adds its handling
// time since `started`.
inline void CountFinished(ServiceContext& sc, const char* method, Clock::MonotonicTime started,
                          absl::StatusCode code) {
  sc.metrics.CountRequest(method, absl::StatusCodeToString(code));
  sc.metrics.ObserveHandling(
      method, std::chrono::duration<double>(sc.clock.MonotonicNow() - started).count());
}

// The caller's principal, or why the call is refused: UNAUTHENTICATED
// without a known bearer token, PERMISSION_DENIED when an agent token calls
// a team service or a team token calls AgentService (auth disabled: anyone
// may call anything). serves nullopt: any authenticated principal
// (ListAgents, which agents may call too).
inline absl::StatusOr<Principal> Authorize(ServiceContext& sc, const grpc::ServerContextBase& ctx,
                                           std::optional<PrincipalKind> serves) {
  std::string authorization;
  auto md = ctx.client_metadata().find("authorization");
  if (md != ctx.client_metadata().end()) authorization.assign(md->second.data(), md->second.size());
  auto principal = sc.auth.Authenticate(authorization);
  if (!principal.ok()) return principal.status();
  if (sc.auth.required() && serves && principal->kind != *serves) {
    return absl::PermissionDeniedError(serves == PrincipalKind::kAgent
                                           ? "only agent tokens may call AgentService"
                                           : "agent tokens may only call AgentService");
  }
  return principal;
}

// An exception that reached Serve: logged with its text, counted
// (npuperf_server_handler_exceptions_total), answered INTERNAL without it
// (the text may name files or queries).
inline absl::Status EscapedException(ServiceContext& sc, const char* method,
                                     absl::string_view what) {
  sc.metrics.handler_exceptions.Increment();
  LogError("server", absl::StrCat(method, ": exception escaped the handler: ", what));
  return absl::InternalError(absl::StrCat(method, ": internal error (logged by the server)"));
}

// The one wrapper of every RPC: authorizes the caller for the principal
// kind the service `serves`, runs the handler with the principal under the
// call's deadline (the store's statements stop there, R9), counts and times
// the request and maps the status once (R2). No exception leaves it: one that
// escapes the handler becomes INTERNAL (EscapedException).
template <typename F>
grpc::Status Serve(ServiceContext& sc, const char* method, grpc::ServerContext* ctx,
                   std::optional<PrincipalKind> serves, F&& handler) {
  const Clock::MonotonicTime started = sc.clock.MonotonicNow();
  absl::Status status;
  try {
    auto principal = Authorize(sc, *ctx, serves);
    if (!principal.ok()) {
      status = principal.status();
    } else {
      DbDeadlineScope deadline(ctx->deadline());
      status = handler(*principal);
    }
  } catch (const std::exception& e) {
    status = EscapedException(sc, method, e.what());
  } catch (...) {
    status = EscapedException(sc, method, "not a std::exception");
  }
  CountFinished(sc, method, started, status.code());
  return ToGrpcStatus(status);
}

// For one message of a stream, which often has no deadline: the store work
// it causes stops at the stream's deadline (Serve's scope) or after `limit`,
// whichever comes first (R9; AgentSession's heartbeats). Scoped like
// DbDeadlineScope; the service's way to DbDeadlineScope::Within.
class MessageDeadlineScope {
 public:
  MessageDeadlineScope(Clock& clock, std::chrono::milliseconds limit)
      : scope_(DbDeadlineScope::Within(clock.SystemNow(), limit)) {}

 private:
  DbDeadlineScope scope_;
};

// Serve for a unary call whose domain answer is the response itself: call
// maps the principal to absl::StatusOr<Resp>, copied into *resp when OK.
template <typename Resp, typename F>
grpc::Status ServeReply(ServiceContext& sc, const char* method, grpc::ServerContext* ctx,
                        std::optional<PrincipalKind> serves, Resp* resp, F&& call) {
  return Serve(sc, method, ctx, serves, [&](const Principal& p) -> absl::Status {
    absl::StatusOr<Resp> out = call(p);
    if (!out.ok()) return out.status();
    *resp = *std::move(out);
    return absl::OkStatus();
  });
}

}  // namespace npuperf::server
