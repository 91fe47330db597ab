// The wiring of one serving npuperf-server: the domain objects and gRPC
// adapters over an open store (Server), the gRPC server that serves them and
// the routes of the metrics port. main.cc opens the store, starts and drains.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/metrics_http.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/registry.h"
#include "server/compare/bisections.h"
#include "server/compare/calibrations.h"
#include "server/compare/canaries.h"
#include "server/compare/comparison_queries.h"
#include "server/compare/confirmations.h"
#include "server/compare/timelines.h"
#include "server/core/auth.h"
#include "server/core/metrics.h"
#include "server/core/read_queries.h"
#include "server/core/safe_defaults.h"
#include "server/core/scheduler.h"
#include "server/server_options.h"
#include "server/service/agent_service.h"
#include "server/service/collection_service.h"
#include "server/service/device_service.h"
#include "server/service/query_service.h"
#include "server/ui/ui_server.h"

namespace npuperf::server {

// The domain objects and adapters of one serving process, built over an
// open store; the members are destroyed in reverse order.
struct Server {
  Server(Store& store, Clock& clock, const ServerOptions& opt,
         std::map<std::string, Principal> tokens, const SafetyDecision& safety);

  std::shared_ptr<prometheus::Registry> registry;
  ServerMetrics metrics;
  Scheduler scheduler;
  Authenticator auth;
  ReadQueries reads;
  Confirmations confirmations;
  ComparisonQueries comparisons;
  // A/A reruns through the ordinary submission (Scheduler::Submit).
  Calibrations calibrations;
  // Commit-range bisections through the ordinary submission.
  Bisections bisections;
  // Canaries on idle devices (--canary-interval), quarantining slow ones.
  Canaries canaries;
  // Supplemental instruction profiles of formal rounds (SubmitTimeline).
  Timelines timelines;
  std::atomic<bool> stopping{false};
  // What GET /healthz answers: the gRPC health's overall status (SERVING
  // from the start of the gRPC port until the drain).
  std::atomic<bool> serving{false};
  CollectionServiceImpl collections;
  AgentServiceImpl agents;
  QueryServiceImpl queries;
  DeviceServiceImpl devices;
  ui::UiServer ui;
};

// The services whose health is answered by name (grpc.health.v1; "" is the
// whole server).
const std::vector<std::string>& ServiceNames();

// Plaintext, or TLS with --tls-cert/--tls-key; with --tls-client-ca client
// certificates are requested and verified, not required (the CLI has none).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const ServerOptions& opt);

// The gRPC server on opt.listen with the keepalive, size, stream, handshake,
// idle and resource settings, health checking and reflection; *port is the
// port it listens on (0 when it could not).
std::unique_ptr<grpc::Server> BuildGrpcServer(const ServerOptions& opt,
                                              std::shared_ptr<grpc::ServerCredentials> creds,
                                              std::vector<grpc::Service*> services, int* port);

// The routes of the metrics port besides /metrics: /healthz, and /ui
// unless --no-ui.
std::map<std::string, HttpRoute> HttpRoutes(Server& s, const ServerOptions& opt);

}  // namespace npuperf::server
