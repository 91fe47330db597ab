// npuperf-server: wires the store, scheduler, gRPC services and /metrics.
//
//   npuperf-server --listen HOST:PORT --metrics-listen HOST:PORT --db sqlite:PATH|postgres://...
//                  [--tokens-file F] [--tls-cert PEM --tls-key PEM]
//   npuperf-server migrate --db ...
//   npuperf-server token hash            (token on stdin -> sha256 hex)
//   npuperf-server token create --team NAME --db ...
#include <signal.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "common/keepalive.h"
#include "common/log.h"
#include "common/sha256.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "server/core/read_queries.h"
#include "server/service/agent_service.h"
#include "server/service/collection_service.h"
#include "server/service/query_service.h"
#include "server/server_options.h"
#include "server/store/factory.h"

namespace npuperf::server {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "npuperf-server: " << s.message() << "\n";
  return 1;
}

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, " ", path, ": cannot open"));
  std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (pem.find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": not a PEM file"));
  }
  return pem;
}

// Plaintext, or TLS with --tls-cert/--tls-key.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const ServerOptions& opt) {
  if (opt.tls_cert.empty()) return grpc::InsecureServerCredentials();
  auto cert = ReadPem("--tls-cert", opt.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadPem("--tls-key", opt.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  return grpc::SslServerCredentials(ssl);
}

std::unique_ptr<grpc::Server> BuildGrpcServer(const ServerOptions& opt,
                                              std::shared_ptr<grpc::ServerCredentials> creds,
                                              std::vector<grpc::Service*> services, int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(opt.listen, std::move(creds), port);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive::kServerKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive::kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             keepalive::kServerMinPingIntervalMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.SetMaxReceiveMessageSize(64 << 20);
  for (auto* s : services) builder.RegisterService(s);
  return builder.BuildAndStart();
}

std::string HostOf(const std::string& address) {
  return address.substr(0, address.rfind(':'));
}

int Serve(const ServerOptions& opt) {
  auto creds = ServerCredentials(opt);
  if (!creds.ok()) return Fail(creds.status());
  auto store = OpenStore(opt.db);
  if (!store.ok()) return Fail(store.status());
  std::map<std::string, Principal> tokens;
  if (!opt.tokens_file.empty()) {
    auto loaded = LoadTokensFile(opt.tokens_file);
    if (!loaded.ok()) return Fail(loaded.status());
    tokens = *std::move(loaded);
  }
  auto registry = std::make_shared<prometheus::Registry>();
  ServerMetrics metrics(*registry);
  RealClock clock;
  Scheduler scheduler(**store, clock, metrics, opt.scheduler);
  Authenticator auth(**store, std::move(tokens), !opt.tokens_file.empty());
  std::atomic<bool> stopping{false};
  ServiceContext sc{auth, metrics};
  ReadQueries reads(**store, scheduler.updates());
  CollectionServiceImpl collections(scheduler, reads, sc, stopping);
  AgentServiceImpl agents(scheduler, sc, stopping);
  ComparisonQueries comparisons(**store, clock);
  QueryServiceImpl queries(reads, comparisons, sc);

  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(opt.metrics_listen);
  } catch (const std::exception& e) {
    return Fail(absl::UnavailableError(absl::StrCat("--metrics-listen ", opt.metrics_listen, ": ", e.what())));
  }
  exposer->RegisterCollectable(registry);
  int port = 0;
  auto server = BuildGrpcServer(opt, *creds, {&collections, &agents, &queries}, &port);
  if (!server || port == 0) return Fail(absl::UnavailableError("cannot listen on " + opt.listen));
  // The first log line carries the chosen addresses (tests start with port 0).
  LogInfo("server", absl::StrCat("listening on ", HostOf(opt.listen), ":", port, " metrics ",
                                 HostOf(opt.metrics_listen), ":", exposer->GetListeningPorts().front(),
                                 " db ", opt.db, opt.tls_cert.empty() ? "" : " tls"));
  if (opt.tokens_file.empty()) {
    LogWarning("server", "no --tokens-file: authentication disabled (development mode)");
  }
  server->GetHealthCheckService()->SetServingStatus(true);

  std::thread reaper([&] {
    absl::Time next_gauges = absl::InfinitePast();
    while (!stopping) {
      if (auto s = scheduler.ExpireLeases(); !s.ok()) LogError("reaper", std::string(s.message()));
      if (absl::Now() >= next_gauges) {
        next_gauges = absl::Now() + absl::FromChrono(opt.state_metrics_interval);
        if (auto s = scheduler.RefreshStateMetrics(); !s.ok()) {
          LogError("metrics", std::string(s.message()));
        }
      }
      scheduler.changes().WaitNewer(UINT64_MAX, absl::FromChrono(opt.reaper_interval),
                                    [&] { return stopping.load(); });
    }
  });
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int sig = 0;
  sigwait(&signals, &sig);
  LogInfo("server", absl::StrCat("signal ", sig, ": draining"));
  server->GetHealthCheckService()->SetServingStatus(false);
  stopping = true;
  scheduler.changes().WakeAll();
  scheduler.updates().WakeAll();
  server->Shutdown(std::chrono::system_clock::now() + opt.shutdown_grace);
  reaper.join();
  LogInfo("server", "stopped");
  return 0;
}

int Migrate(const std::string& db) {
  auto store = OpenStore(db);
  if (!store.ok()) return Fail(store.status());
  std::cout << "migrated " << db << "\n";
  return 0;
}

int TokenHash() {
  std::string token;
  std::getline(std::cin, token);
  const std::string trimmed(absl::StripAsciiWhitespace(token));
  if (trimmed.empty()) return Fail(absl::InvalidArgumentError("no token on stdin"));
  std::cout << Sha256Hex(trimmed) << "\n";
  return 0;
}

int TokenCreate(const std::string& db, PrincipalKind kind, const std::string& name) {
  auto store = OpenStore(db);
  if (!store.ok()) return Fail(store.status());
  absl::BitGen gen;
  const std::string token = absl::StrFormat("npt_%016x%016x", absl::Uniform<uint64_t>(gen),
                                            absl::Uniform<uint64_t>(gen));
  RealClock clock;
  auto s = (*store)->InsertToken(Sha256Hex(token), PrincipalKindName(kind), name,
                                 ToUnixMillis(clock.SystemNow()));
  if (!s.ok()) return Fail(s);
  std::cout << token << "\n";
  return 0;
}

}  // namespace
}  // namespace npuperf::server

int main(int argc, char** argv) {
  using namespace npuperf::server;
  // Signals are taken synchronously by sigwait in Serve; block them in every thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ServerOptions opt;
  CLI::App app{"npuperf-server: queues NPU profiling collections, leases jobs to agents, stores evidence"};
  app.add_option("--listen", opt.listen, "gRPC HOST:PORT (port 0: pick a free one)")->capture_default_str();
  app.add_option("--metrics-listen", opt.metrics_listen, "Prometheus HOST:PORT")->capture_default_str();
  app.add_option("--db", opt.db, "sqlite:PATH or postgres://...")->capture_default_str();
  app.add_option("--tokens-file", opt.tokens_file, "lines 'team|agent NAME SHA256HEX'");
  auto* tls_cert = app.add_option("--tls-cert", opt.tls_cert, "TLS certificate chain (PEM) for the gRPC port");
  auto* tls_key = app.add_option("--tls-key", opt.tls_key, "TLS private key (PEM) of --tls-cert");
  tls_cert->needs(tls_key);
  tls_key->needs(tls_cert);
  int64_t lease_ms = opt.scheduler.lease_ttl.count();
  app.add_option("--lease-ttl-ms", lease_ms, "lease TTL renewed by heartbeats")->capture_default_str();
  int64_t heartbeat_ms = opt.scheduler.heartbeat_interval.count();
  app.add_option("--heartbeat-ms", heartbeat_ms, "heartbeat period asked of agents")->capture_default_str();
  int64_t reaper_ms = opt.reaper_interval.count();
  app.add_option("--reaper-ms", reaper_ms, "lease expiry check period")->capture_default_str();

  std::string migrate_db = opt.db;
  auto* migrate = app.add_subcommand("migrate", "apply pending schema migrations and exit");
  migrate->add_option("--db", migrate_db, "sqlite:PATH or postgres://...")->required();
  auto* token = app.add_subcommand("token", "token utilities")->require_subcommand(1);
  token->add_subcommand("hash", "print the sha256 of a token read from stdin");
  std::string token_db, team, agent;
  auto* create = token->add_subcommand("create", "mint a token into the database");
  create->add_option("--db", token_db, "sqlite:PATH or postgres://...")->required();
  auto* kind = create->add_option_group("kind");
  kind->add_option("--team", team, "team name");
  kind->add_option("--agent", agent, "agent name");
  kind->require_option(1);
  CLI11_PARSE(app, argc, argv);

  if (migrate->parsed()) return Migrate(migrate_db);
  if (token->parsed()) {
    if (token->get_subcommand("hash")->parsed()) return TokenHash();
    return TokenCreate(token_db, team.empty() ? PrincipalKind::kAgent : PrincipalKind::kTeam,
                       team.empty() ? agent : team);
  }
  opt.scheduler.lease_ttl = std::chrono::milliseconds(lease_ms);
  opt.scheduler.heartbeat_interval = std::chrono::milliseconds(heartbeat_ms);
  opt.reaper_interval = std::chrono::milliseconds(reaper_ms);
  return Serve(opt);
}
