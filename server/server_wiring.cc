#include "server/server_wiring.h"

#include <fstream>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/keepalive.h"
#include "common/version.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server/core/limits.h"
#include "server/store/migrator.h"

namespace npuperf::server {
namespace {

// gRPC connections: the handshake and HTTP/2 settings must arrive within
// this, and a connection without a call for this long is closed.
constexpr int kHandshakeTimeoutMs = 10'000;
constexpr int kConnectionIdleMs = 5 * 60'000;
// What GetServerInfo lists as features (docs/api.md): stable names, one
// added with each capability a client may want to detect.
constexpr const char* kFeatures[] = {"watch",
                                     "bundle_upload",
                                     "golden_report",
                                     "baselines",
                                     "regressions",
                                     "lease_secrets",
                                     "discovery",
                                     "artifacts",
                                     "ui",
                                     "change_points",
                                     "compare_many",
                                     "triage",
                                     "confirmations",
                                     "calibration",
                                     "device_health",
                                     "compare_implementations",
                                     "bisection",
                                     "canaries",
                                     "timelines"};

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, " ", path, ": cannot open"));
  std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (pem.find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": not a PEM file"));
  }
  return pem;
}

// GetServerInfo's answer: this binary's release and commit, and the schema
// the store was migrated to (opening it applied every embedded migration).
v1::GetServerInfoResponse ServerInfo(const ServerOptions& opt) {
  const bool postgres = opt.db.rfind("postgres", 0) == 0;
  const auto migrations =
      EmbeddedMigrations(postgres ? SqlDialect::kPostgres : SqlDialect::kSqlite);
  v1::GetServerInfoResponse info;
  info.set_version(std::string(Version()));
  info.set_commit(std::string(Commit()));
  info.set_schema_version(migrations.empty() ? 0 : migrations.back().version);
  info.set_database(postgres ? "postgres" : "sqlite");
  for (const char* f : kFeatures) info.add_features(f);
  return info;
}

// The web pages' options: the cookie is Secure with --ui-secure-cookie and
// whenever TLS is configured.
ui::UiOptions UiOptionsOf(const ServerOptions& opt) {
  ui::UiOptions o = opt.ui;
  o.secure_cookie = o.secure_cookie || !opt.tls_cert.empty();
  o.device_admins = opt.scheduler.device_admins;
  return o;
}

// GET /healthz on the metrics port: the gRPC health in plain HTTP, for
// probes that cannot speak the gRPC port's TLS (kubelet). 200 while serving,
// 503 before and while draining; nothing else is on that port but /metrics.
HttpReply HealthzReply(bool serving) {
  return serving ? HttpReply{200, "application/json", "{\"status\":\"SERVING\"}\n", {}}
                 : HttpReply{503, "application/json", "{\"status\":\"NOT_SERVING\"}\n", {}};
}

}  // namespace

Server::Server(Store& store, Clock& clock, const ServerOptions& opt,
               std::map<std::string, Principal> tokens, const SafetyDecision& safety)
    : registry(std::make_shared<prometheus::Registry>()),
      metrics(*registry),
      scheduler(store, clock, metrics, opt.scheduler),
      auth(store, std::move(tokens), safety.auth_required),
      reads(store),
      confirmations(store, clock,
                    [this](const std::string& team, const v1::SubmitCollectionRequest& req,
                           const std::map<std::string, std::string>& labels) {
                      return scheduler.SubmitForServer(team, req, labels);
                    }),
      comparisons(store, clock, &confirmations),
      calibrations(store, clock,
                   [this](const std::string& team, const v1::SubmitCollectionRequest& req,
                          const std::map<std::string, std::string>& labels) {
                     return scheduler.SubmitForServer(team, req, labels);
                   }),
      bisections(
          store, clock,
          [this](const std::string& team, const v1::SubmitCollectionRequest& req,
                 const std::map<std::string, std::string>& labels) {
            return scheduler.SubmitForServer(team, req, labels);
          },
          [this](const std::string& team, const std::string& id, const std::string& reason) {
            return scheduler.Cancel(team, id, reason).status();
          },
          [this](v1::BisectionState state) {
            std::string name = v1::BisectionState_Name(state);
            name = absl::AsciiStrToLower(name.substr(sizeof("BISECTION_STATE_") - 1));
            metrics.bisections.Add({{"state", name}}).Increment();
          }),
      canaries(
          store, clock, metrics, scheduler.device_health(),
          [this](const std::string& team, const v1::SubmitCollectionRequest& req,
                 const std::map<std::string, std::string>& labels) {
            return scheduler.SubmitForServer(team, req, labels);
          },
          [this](const std::string& team, const std::string& id, const std::string& reason) {
            return scheduler.Cancel(team, id, reason).status();
          },
          opt.canaries),
      timelines(
          store,
          [this](const std::string& team, const v1::SubmitCollectionRequest& req,
                 const std::map<std::string, std::string>& labels) {
            return scheduler.SubmitForServer(team, req, labels);
          },
          [this](const std::string& team, const std::string& id, const std::string& reason) {
            return scheduler.Cancel(team, id, reason).status();
          }),
      collections(scheduler, reads, timelines, ServiceContext{auth, metrics, clock}, stopping),
      agents(scheduler, ServiceContext{auth, metrics, clock}, stopping,
             AgentCertPolicy{opt.require_agent_cert}),
      queries(reads, comparisons, ServiceContext{auth, metrics, clock}, ServerInfo(opt),
              &scheduler.artifacts(), &calibrations, &bisections),
      devices(scheduler.device_health(), canaries, ServiceContext{auth, metrics, clock}),
      ui(store, auth, reads, comparisons, clock, UiOptionsOf(opt)) {}

const std::vector<std::string>& ServiceNames() {
  static const auto* names = new std::vector<std::string>{
      v1::CollectionService::service_full_name(), v1::AgentService::service_full_name(),
      v1::QueryService::service_full_name(), v1::DeviceService::service_full_name()};
  return *names;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const ServerOptions& opt) {
  if (opt.tls_cert.empty()) return grpc::InsecureServerCredentials();
  auto cert = ReadPem("--tls-cert", opt.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadPem("--tls-key", opt.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  if (!opt.tls_client_ca.empty()) {
    auto ca = ReadPem("--tls-client-ca", opt.tls_client_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
    ssl.client_certificate_request = GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

std::unique_ptr<grpc::Server> BuildGrpcServer(const ServerOptions& opt,
                                              std::shared_ptr<grpc::ServerCredentials> creds,
                                              std::vector<grpc::Service*> services, int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  // Links grpc.health.v1's descriptor into the pool, so that reflection
  // serves the file of the health service it lists.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(opt.listen, std::move(creds), port);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive::kServerKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive::kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             keepalive::kServerMinPingIntervalMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.SetMaxReceiveMessageSize(kMaxReceiveMessageBytes);
  // Per connection: concurrent streams; a connection that never completes
  // its handshake and HTTP/2 settings, or holds no call for long, is closed.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, opt.max_streams_per_connection);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kHandshakeTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, kConnectionIdleMs);
  // The whole server: threads of the synchronous handlers and memory.
  grpc::ResourceQuota quota("npuperf-server");
  quota.SetMaxThreads(opt.max_threads);
  quota.Resize(static_cast<size_t>(opt.memory_quota_mib) << 20);
  builder.SetResourceQuota(quota);
  for (auto* s : services) builder.RegisterService(s);
  return builder.BuildAndStart();
}

std::map<std::string, HttpRoute> HttpRoutes(Server& s, const ServerOptions& opt) {
  std::map<std::string, HttpRoute> routes;
  routes["/healthz"].handler = [&s](const HttpRequest&) { return HealthzReply(s.serving); };
  if (opt.ui_enabled) {
    routes["/ui"] = HttpRoute{[&s](const HttpRequest& req) { return s.ui.Handle(req); },
                              /*accepts_post=*/true};
  }
  return routes;
}

}  // namespace npuperf::server
