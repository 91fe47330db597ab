// npuperf-server: wires the store, scheduler, gRPC services and /metrics.
//
//   npuperf-server --listen HOST:PORT --metrics-listen HOST:PORT --db sqlite:PATH|postgres://...
//                  [--tokens-file F] [--tls-cert PEM --tls-key PEM] [--agent-retention 7d]
//                  [--tls-client-ca PEM [--require-agent-cert]]
//   npuperf-server migrate --db ...
//   npuperf-server token hash            (token on stdin -> sha256 hex)
//   npuperf-server token create --team NAME | --agent HOST --db ...
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/bundle_tar.h"
#include "common/cli_docs.h"
#include "common/cli_environment.h"
#include "common/clock.h"
#include "common/duration_text.h"
#include "common/grpc_log.h"
#include "common/keepalive.h"
#include "common/log.h"
#include "common/metrics_http.h"
#include "common/process_metrics.h"
#include "common/secure_random.h"
#include "common/sha256.h"
#include "common/version.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "prometheus/registry.h"
#include "server/core/artifact_rules.h"
#include "server/core/bundle_upload.h"
#include "server/core/constants.h"
#include "server/core/reaper.h"
#include "server/core/safe_defaults.h"
#include "server/server_options.h"
#include "server/service/agent_service.h"
#include "server/service/collection_service.h"
#include "server/service/query_service.h"
#include "server/store/factory.h"
#include "server/store/migrator.h"

namespace npuperf::server {
namespace {

// gRPC connections: the handshake and HTTP/2 settings must arrive within
// this, and a connection without a call for this long is closed.
constexpr int kHandshakeTimeoutMs = 10'000;
constexpr int kConnectionIdleMs = 5 * 60'000;
// Exit code after the gRPC listener died (EX_TEMPFAIL: restart me).
constexpr int kExitListenerDied = 75;
// What GetServerInfo lists as features (docs/api.md): stable names, one
// added with each capability a client may want to detect.
constexpr const char* kFeatures[] = {
    "watch",         "bundle_upload", "golden_report", "baselines",   "regressions",
    "lease_secrets", "discovery",     "artifacts",     "ui",          "change_points",
    "compare_many",  "triage",        "confirmations", "calibration", "compare_implementations"};

// The services whose health is answered by name (grpc.health.v1; "" is the
// whole server).
const std::vector<std::string>& ServiceNames() {
  static const auto* names = new std::vector<std::string>{
      v1::CollectionService::service_full_name(), v1::AgentService::service_full_name(),
      v1::QueryService::service_full_name()};
  return *names;
}

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

// Plaintext, or TLS with --tls-cert/--tls-key; with --tls-client-ca client
// certificates are requested and verified, not required (the CLI has none).
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

std::string HostOf(const std::string& address) { return address.substr(0, address.rfind(':')); }

absl::StatusOr<std::map<std::string, Principal>> FileTokens(const ServerOptions& opt) {
  if (opt.tokens_file.empty()) return std::map<std::string, Principal>();
  return LoadTokensFile(opt.tokens_file);
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

// The first log line carries the chosen addresses (tests start with port 0).
void LogListening(const ServerOptions& opt, int port, const MetricsHttpServer& http,
                  const SafetyDecision& safety) {
  LogInfo("server", absl::StrCat("listening on ", HostOf(opt.listen), ":", port, " metrics ",
                                 HostOf(opt.metrics_listen), ":", http.port(), " db ",
                                 RedactDbUrl(opt.db), opt.tls_cert.empty() ? "" : " tls",
                                 opt.tls_client_ca.empty() ? "" : " client-certs",
                                 opt.require_agent_cert ? " (required of agents)" : ""));
  for (const auto& w : safety.warnings) LogWarning("server", w);
}

// Raises the soft RLIMIT_NOFILE to the hard limit (idle connections must
// not exhaust the descriptors at the default 1,024).
void RaiseFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max) return;
  const rlim_t was = lim.rlim_cur;
  lim.rlim_cur = lim.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &lim) == 0) {
    LogInfo("server", absl::StrCat("RLIMIT_NOFILE raised from ", was, " to ", lim.rlim_max));
  }
}

// The safe defaults over the tokens known at start (file and database).
absl::StatusOr<SafetyDecision> Safety(const ServerOptions& opt, Store& store, size_t file_tokens) {
  auto db_tokens = store.CountTokens();
  if (!db_tokens.ok()) return db_tokens.status();
  SafetyInputs in;
  in.listen = opt.listen;
  in.tls = !opt.tls_cert.empty();
  in.allow_plaintext = opt.allow_plaintext;
  in.insecure_no_auth = opt.insecure_no_auth;
  in.tokens = *db_tokens + static_cast<int64_t>(file_tokens);
  return DecideSafety(in);
}

// --upload-dir: created 0700 when missing, and one unlinked file made in it,
// so that a wrong directory fails the start, not every upload later.
absl::Status PrepareUploadDir(const std::filesystem::path& dir) {
  if (dir.empty()) return absl::OkStatus();  // $TMPDIR
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (!ec) std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  }
  if (ec || !std::filesystem::is_directory(dir)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--upload-dir ", dir.string(), ": ", ec ? ec.message() : "not a directory"));
  }
  auto probe = BundleFile::Create(dir);
  if (!probe.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--upload-dir ", dir.string(), ": cannot create files in it"));
  }
  return absl::OkStatus();
}

// SIGTERM and SIGINT, and SIGUSR1 for a dead listener (NoteListenerDied):
// main blocks them in every thread, Serve takes them synchronously with sigwait.
sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  return signals;
}

std::atomic<bool> listener_died{false};

// gRPC 1.51's listener never accepts again after accept4 failed with EMFILE
// (ListenerDied). Connections already open still work, but no new client or
// agent can reach the server, while /metrics still answers: a half-dead
// server. It ends instead, with kExitListenerDied, so that the supervisor
// (systemd Restart=on-failure, a Kubernetes restart) starts a listening one;
// every state is in the store. Runs on a gRPC thread: only an atomic store and
// a process-directed signal, which Serve's sigwait takes.
void NoteListenerDied(const GrpcLogLine& line) {
  if (!ListenerDied(line) || listener_died.exchange(true)) return;
  kill(getpid(), SIGUSR1);
}

// Blocks until a stop signal arrives (a stray SIGUSR1 is ignored); returns it.
int AwaitStopSignal() {
  const sigset_t signals = StopSignals();
  int sig = 0;
  do {
    sigwait(&signals, &sig);
  } while (sig == SIGUSR1 && !listener_died);
  return sig;
}

// The web pages' options: the cookie is Secure with --ui-secure-cookie and
// whenever TLS is configured.
ui::UiOptions UiOptionsOf(const ServerOptions& opt) {
  ui::UiOptions o = opt.ui;
  o.secure_cookie = o.secure_cookie || !opt.tls_cert.empty();
  return o;
}

// The domain objects and adapters of one serving process, built over an
// open store; the members are destroyed in reverse order.
struct Server {
  Server(Store& store, Clock& clock, const ServerOptions& opt,
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
        collections(scheduler, reads, ServiceContext{auth, metrics, clock}, stopping),
        agents(scheduler, ServiceContext{auth, metrics, clock}, stopping,
               AgentCertPolicy{opt.require_agent_cert}),
        queries(reads, comparisons, ServiceContext{auth, metrics, clock}, ServerInfo(opt),
                &scheduler.artifacts(), &calibrations),
        ui(store, auth, reads, comparisons, clock, UiOptionsOf(opt)) {}

  std::shared_ptr<prometheus::Registry> registry;
  ServerMetrics metrics;
  Scheduler scheduler;
  Authenticator auth;
  ReadQueries reads;
  Confirmations confirmations;
  ComparisonQueries comparisons;
  // A/A reruns through the ordinary submission (Scheduler::Submit).
  Calibrations calibrations;
  std::atomic<bool> stopping{false};
  // What GET /healthz answers: the gRPC health's overall status (SERVING
  // from the start of the gRPC port until the drain).
  std::atomic<bool> serving{false};
  CollectionServiceImpl collections;
  AgentServiceImpl agents;
  QueryServiceImpl queries;
  ui::UiServer ui;
};

// GET /healthz on the metrics port: the gRPC health in plain HTTP, for
// probes that cannot speak the gRPC port's TLS (kubelet). 200 while serving,
// 503 before and while draining; nothing else is on that port but /metrics.
HttpReply HealthzReply(bool serving) {
  return serving ? HttpReply{200, "application/json", "{\"status\":\"SERVING\"}\n", {}}
                 : HttpReply{503, "application/json", "{\"status\":\"NOT_SERVING\"}\n", {}};
}

// The routes of the metrics port besides /metrics: /healthz, and /ui
// unless --no-ui.
std::map<std::string, HttpRoute> HttpRoutes(Server& s, const ServerOptions& opt) {
  std::map<std::string, HttpRoute> routes;
  routes["/healthz"].handler = [&s](const HttpRequest&) { return HealthzReply(s.serving); };
  if (opt.ui_enabled) {
    routes["/ui"] = HttpRoute{[&s](const HttpRequest& req) { return s.ui.Handle(req); },
                              /*accepts_post=*/true};
  }
  return routes;
}

// Drains at SIGTERM: health NOT_SERVING, refuse new work, wake every
// long-poll and watch, stop the reaper, and give in-flight RPCs the grace.
void Drain(Server& s, Reaper& reaper, grpc::Server& grpc_server, Clock& clock,
           const ServerOptions& opt) {
  grpc_server.GetHealthCheckService()->SetServingStatus(false);  // every service name
  s.serving = false;
  s.stopping = true;
  reaper.Stop();
  s.scheduler.changes().WakeAll();
  s.scheduler.updates().WakeAll();
  s.scheduler.watches().Stop();  // every watch stream ends UNAVAILABLE
  grpc_server.Shutdown(clock.SystemNow() + opt.shutdown_grace);
}

int Serve(const ServerOptions& opt) {
  auto creds = ServerCredentials(opt);
  if (!creds.ok()) return Fail(creds.status());
  RealClock clock;
  auto store = OpenStore(opt.db, clock);
  if (!store.ok()) return Fail(store.status());
  auto tokens = FileTokens(opt);
  if (!tokens.ok()) return Fail(tokens.status());
  auto safety = Safety(opt, **store, tokens->size());
  if (!safety.ok()) return Fail(safety.status());
  RaiseFileLimit();
  if (auto s = PrepareUploadDir(opt.scheduler.bundles.upload_dir); !s.ok()) return Fail(s);
  Server s(**store, clock, opt, *std::move(tokens), *safety);
  if (!s.scheduler.artifacts().status().ok()) return Fail(s.scheduler.artifacts().status());
  s.metrics.plaintext_listener.Set(safety->plaintext_exposed ? 1 : 0);
  auto http = MetricsHttpServer::Start(
      opt.metrics_listen, {s.registry, std::make_shared<ProcessCollector>()}, HttpRoutes(s, opt));
  if (!http.ok()) {
    return Fail(
        absl::UnavailableError(absl::StrCat("--metrics-listen: ", http.status().message())));
  }
  int port = 0;
  auto grpc_server = BuildGrpcServer(opt, *creds, {&s.collections, &s.agents, &s.queries}, &port);
  if (!grpc_server || port == 0)
    return Fail(absl::UnavailableError("cannot listen on " + opt.listen));
  LogListening(opt, port, **http, *safety);
  grpc_server->GetHealthCheckService()->SetServingStatus(true);
  for (const std::string& name : ServiceNames()) {
    grpc_server->GetHealthCheckService()->SetServingStatus(name, true);
  }
  s.serving = true;
  // The server's own upkeep beside the reaper's: confirmations and
  // calibrations move on (each logs its own error; the first is returned).
  Reaper reaper(s.scheduler, clock, opt.reaper_interval, opt.state_metrics_interval, [&s] {
    absl::Status confirmed = s.confirmations.AdvancePending().status();
    absl::Status calibrated = s.calibrations.Advance();
    return confirmed.ok() ? calibrated : confirmed;
  });
  const int sig = AwaitStopSignal();
  if (sig == SIGUSR1) {
    LogError("server",
             absl::StrCat("the gRPC listener stopped accepting connections (accept4 failed: gRPC ",
                          grpc::Version(), " never re-arms it, grpc/grpc#33656); draining and ",
                          "exiting ", kExitListenerDied, " for the supervisor to restart it"));
  } else {
    LogInfo("server", absl::StrCat("signal ", sig, ": draining"));
  }
  Drain(s, reaper, *grpc_server, clock, opt);
  LogInfo("server", "stopped");
  return sig == SIGUSR1 ? kExitListenerDied : 0;
}

int Migrate(const std::string& db) {
  RealClock clock;
  auto store = OpenStore(db, clock);
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
  RealClock clock;
  auto store = OpenStore(db, clock);
  if (!store.ok()) return Fail(store.status());
  // 128 bits from the CSPRNG (absl::BitGen is not one).
  auto random = SecureRandomHex(16);
  if (!random.ok()) return Fail(random.status());
  const std::string token = "npt_" + *random;
  auto s = (*store)->InsertToken(Sha256Hex(token), PrincipalKindName(kind), name,
                                 ToUnixMillis(clock.SystemNow()));
  if (!s.ok()) return Fail(s);
  std::cout << token << "\n";
  return 0;
}

// What the command line asks for.
struct Command {
  enum class Action { kServe, kMigrate, kTokenHash, kTokenCreate };
  Action action = Action::kServe;
  ServerOptions options;                            // kServe
  std::string db;                                   // kMigrate, kTokenCreate
  PrincipalKind token_kind = PrincipalKind::kTeam;  // kTokenCreate
  std::string token_name;                           // kTokenCreate
};

// The flags of the serving command; the durations arrive as milliseconds
// and are copied into opt by ApplyDurations after parsing.
struct DurationFlags {
  int64_t lease_ms = 0;
  int64_t heartbeat_ms = 0;
  int64_t reaper_ms = 0;
  std::string agent_retention = "7d";
  int64_t retention_hours = 0;
  std::string upload_dir;
  std::string artifact_retention = "30d";
  std::string artifact_dir;
  int64_t max_artifact_mib = 0;
  int64_t artifact_quota_mib = 0;
  bool no_ui = false;
  std::string ui_session_ttl = "12h";
  std::vector<std::string> artifact_retention_teams;
};

// Artifacts (docs/operations.md, "Artifacts").
void AddArtifactFlags(CLI::App& app, DurationFlags& ms, const ArtifactOptions& a) {
  auto duration = [](const std::string& text) {
    if (text == "never") return std::string();
    auto d = ParseDurationText(text);
    return d.ok() ? std::string() : std::string(d.status().message());
  };
  app.add_option("--artifact-dir", ms.artifact_dir,
                 "where artifacts (raw output) are kept; shared by every replica (default: "
                 "<db>.artifacts beside a SQLite database; none for PostgreSQL)");
  ms.max_artifact_mib = a.max_bytes >> 20;
  app.add_option("--max-artifact-mib", ms.max_artifact_mib, "largest artifact accepted")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  ms.artifact_quota_mib = a.quota_bytes >> 20;
  app.add_option("--artifact-quota-mib", ms.artifact_quota_mib,
                 "artifact bytes one team may store (0: no quota)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--artifact-retention-team", ms.artifact_retention_teams,
                 "TEAM=AGE[,QUOTA_MIB]: one team's own retention (or never) and quota "
                 "(repeatable; overrides --artifact-retention and --artifact-quota-mib)")
      ->check([](const std::string& text) {
        auto p = ParseTeamArtifactPolicy(text);
        return p.ok() ? std::string() : std::string(p.status().message());
      });
  app.add_option("--artifact-retention", ms.artifact_retention,
                 "artifacts older than this are deleted unless a pinned baseline needs them "
                 "(<n>s|m|h|d, or never)")
      ->capture_default_str()
      ->check(duration);
}

// The artifact directory: --artifact-dir, else beside a SQLite database
// file (none for :memory: and PostgreSQL).
std::string ArtifactDirFor(const std::string& flag, const std::string& db) {
  if (!flag.empty() || db.rfind("sqlite:", 0) != 0) return flag;
  const std::string path = db.substr(7);
  return path.empty() || path == ":memory:" ? "" : path + ".artifacts";
}

// Bundles, watches and gRPC resources (docs/operations.md).
void AddLimitFlags(CLI::App& app, ServerOptions& opt, DurationFlags& ms) {
  BundleOptions& b = opt.scheduler.bundles;
  app.add_option("--bundle-quota-bytes", b.quota_bytes, "bundle bytes one team may store (0: none)")
      ->capture_default_str();
  ms.retention_hours = b.retention.count();
  app.add_option("--bundle-retention-hours", ms.retention_hours,
                 "unused bundles nothing needs are deleted after this")
      ->capture_default_str();
  app.add_option("--max-uploads", b.max_uploads, "uploads in progress at once")
      ->capture_default_str();
  app.add_option("--max-uploads-per-team", b.max_uploads_per_team,
                 "uploads in progress at once per team")
      ->capture_default_str();
  app.add_option("--upload-dir", ms.upload_dir, "where uploads are spooled (default: $TMPDIR)");
  AddArtifactFlags(app, ms, opt.scheduler.artifacts);
  WatchOptions& w = opt.scheduler.watches;
  app.add_option("--max-watches", w.max_total, "WatchCollection streams")->capture_default_str();
  app.add_option("--max-watches-per-team", w.max_per_team, "WatchCollection streams per team")
      ->capture_default_str();
  app.add_option("--max-streams-per-connection", opt.max_streams_per_connection,
                 "concurrent gRPC streams per connection")
      ->capture_default_str();
  app.add_option("--max-threads", opt.max_threads, "threads of the gRPC handlers")
      ->capture_default_str();
  app.add_option("--memory-quota-mib", opt.memory_quota_mib, "memory of the gRPC server")
      ->capture_default_str();
}

// --tls-cert/--tls-key, and the client certificates of mTLS.
void AddTlsFlags(CLI::App& app, ServerOptions& opt) {
  auto* tls_cert =
      app.add_option("--tls-cert", opt.tls_cert, "TLS certificate chain (PEM) for the gRPC port");
  auto* tls_key = app.add_option("--tls-key", opt.tls_key, "TLS private key (PEM) of --tls-cert");
  tls_cert->needs(tls_key);
  tls_key->needs(tls_cert);
  auto* client_ca = app.add_option("--tls-client-ca", opt.tls_client_ca,
                                   "CA (PEM) whose client certificates the gRPC port verifies")
                        ->envname("NPUPERF_TLS_CLIENT_CA")
                        ->needs(tls_cert);
  app.add_flag("--require-agent-cert", opt.require_agent_cert,
               "every AgentService call must present a client certificate naming its agent")
      ->envname("NPUPERF_REQUIRE_AGENT_CERT")
      ->needs(client_ca);
}

// The web pages (docs/reports.md, "In the browser").
void AddUiFlags(CLI::App& app, ServerOptions& opt, DurationFlags& ms) {
  app.add_flag("--no-ui", ms.no_ui, "serve no web pages (/ui) on the metrics port");
  app.add_option("--ui-session-ttl", ms.ui_session_ttl,
                 "how long a web-page login lasts (<n>s|m|h|d)")
      ->capture_default_str()
      ->check([](const std::string& text) {
        auto d = ParseDurationText(text);
        if (!d.ok()) return std::string(d.status().message());
        return d->count() >= 60'000 ? std::string() : std::string("must be at least 1m");
      });
  app.add_flag("--ui-secure-cookie", opt.ui.secure_cookie,
               "mark the session cookie Secure (also when --tls-cert is set; for an HTTPS proxy)");
}

void AddServeFlags(CLI::App& app, ServerOptions& opt, DurationFlags& ms) {
  app.add_option("--listen", opt.listen, "gRPC HOST:PORT (port 0: pick a free one)")
      ->capture_default_str();
  app.add_option("--metrics-listen", opt.metrics_listen, "Prometheus HOST:PORT")
      ->capture_default_str();
  app.add_option("--db", opt.db, "sqlite:PATH or postgres://...")->capture_default_str();
  app.add_option("--tokens-file", opt.tokens_file, "lines 'team|agent NAME SHA256HEX'");
  AddTlsFlags(app, opt);
  app.add_flag("--insecure-no-auth", opt.insecure_no_auth,
               "no authentication (loopback --listen only; development)");
  app.add_flag("--allow-plaintext", opt.allow_plaintext,
               "serve plaintext on a non-loopback --listen (tokens cross the network in clear)");
  AddLimitFlags(app, opt, ms);
  ms.lease_ms = opt.scheduler.lease_ttl.count();
  app.add_option("--lease-ttl-ms", ms.lease_ms, "lease TTL renewed by heartbeats")
      ->capture_default_str();
  ms.heartbeat_ms = opt.scheduler.heartbeat_interval.count();
  app.add_option("--heartbeat-ms", ms.heartbeat_ms, "heartbeat period asked of agents")
      ->capture_default_str();
  ms.reaper_ms = opt.reaper_interval.count();
  app.add_option("--reaper-ms", ms.reaper_ms, "lease expiry check period")->capture_default_str();
  app.add_option("--agent-retention", ms.agent_retention,
                 "prune agents unseen for this long (<n>s|m|h|d), unless they hold a lease")
      ->capture_default_str()
      ->check([](const std::string& text) {
        auto d = ParseDurationText(text);
        return d.ok() ? std::string() : std::string(d.status().message());
      });
  AddUiFlags(app, opt, ms);
  app.add_option("--max-jobs-per-collection", opt.scheduler.limits.max_jobs_per_collection,
                 "jobs one collection may expand into")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--max-queued-jobs-per-team", opt.scheduler.limits.max_queued_jobs_per_team,
                 "queued jobs a team may have at once (0: no limit)")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))
      ->capture_default_str();
}

void ApplyDurations(const DurationFlags& ms, ServerOptions& opt) {
  opt.scheduler.lease_ttl = std::chrono::milliseconds(ms.lease_ms);
  opt.scheduler.heartbeat_interval = std::chrono::milliseconds(ms.heartbeat_ms);
  opt.reaper_interval = std::chrono::milliseconds(ms.reaper_ms);
  opt.scheduler.agent_retention = ParseDurationText(ms.agent_retention).value();  // checked
  opt.scheduler.bundles.retention = std::chrono::hours(ms.retention_hours);
  opt.scheduler.bundles.upload_dir = ms.upload_dir;
  opt.ui_enabled = !ms.no_ui;
  opt.ui.session_ttl = ParseDurationText(ms.ui_session_ttl).value();  // checked
  ArtifactOptions& a = opt.scheduler.artifacts;
  a.dir = ArtifactDirFor(ms.artifact_dir, opt.db);
  a.max_bytes = ms.max_artifact_mib << 20;
  a.quota_bytes = ms.artifact_quota_mib << 20;
  a.retention = ms.artifact_retention == "never"
                    ? std::chrono::milliseconds(0)
                    : ParseDurationText(ms.artifact_retention).value();  // checked
}

// Parses argv into *cmd; returns the exit code when CLI11 already answered
// (help, or a usage error), nullopt to go on.
std::optional<int> ParseCommandLine(int argc, char** argv, Command* cmd) {
  CLI::App app{
      "npuperf-server: queues NPU profiling collections, leases jobs to agents, stores evidence"};
  app.set_version_flag("--version", VersionLine("npuperf-server"));
  DurationFlags ms;
  AddServeFlags(app, cmd->options, ms);
  std::string migrate_db = cmd->options.db;
  auto* migrate = app.add_subcommand("migrate", "apply pending schema migrations and exit");
  migrate->add_option("--db", migrate_db, "sqlite:PATH or postgres://...")->required();
  auto* token = app.add_subcommand("token", "token utilities")->require_subcommand(1);
  auto* hash = token->add_subcommand("hash", "print the sha256 of a token read from stdin");
  std::string token_db, team, agent;
  auto* create = token->add_subcommand("create", "mint a token into the database");
  create->add_option("--db", token_db, "sqlite:PATH or postgres://...")->required();
  auto* kind = create->add_option_group("kind");
  kind->add_option("--team", team, "team name");
  kind->add_option("--agent", agent, "agent token: the host name it may register as");
  kind->require_option(1);
  AddGeneratedDocsFlags(app, "npuperf-server", 8, VersionLine("npuperf-server"), kDaemonManFooter,
                        std::cout);        // hidden: --completion, --man-page
  AddEnvironmentAndConfig(app, "server");  // NPUPERF_LISTEN ..., --config / NPUPERF_SERVER_CONFIG
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a bad flag 2 (not CLI11's own 105..114),
    // CLI11's message naming it on stderr.
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto teams = ParseTeamArtifactPolicies(ms.artifact_retention_teams);
  if (!teams.ok()) {
    std::cerr << "npuperf-server: " << teams.status().message() << "\n";
    return 2;
  }
  cmd->options.scheduler.artifacts.teams = *std::move(teams);
  ApplyDurations(ms, cmd->options);
  if (migrate->parsed()) {
    cmd->action = Command::Action::kMigrate;
    cmd->db = migrate_db;
  } else if (hash->parsed()) {
    cmd->action = Command::Action::kTokenHash;
  } else if (create->parsed()) {
    cmd->action = Command::Action::kTokenCreate;
    cmd->db = token_db;
    cmd->token_kind = team.empty() ? PrincipalKind::kAgent : PrincipalKind::kTeam;
    cmd->token_name = team.empty() ? agent : team;
  }
  return std::nullopt;
}

}  // namespace
}  // namespace npuperf::server

int main(int argc, char** argv) {
  using namespace npuperf::server;
  npuperf::UseUtf8PathNames();  // uploaded bundles may hold non-ASCII names (libarchive)
  // Before any thread starts, so that every thread inherits the mask.
  const sigset_t signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  npuperf::RouteGrpcLogs(&NoteListenerDied);  // before any gRPC object

  Command cmd;
  if (auto exit_code = ParseCommandLine(argc, argv, &cmd)) return *exit_code;
  switch (cmd.action) {
    case Command::Action::kMigrate: return Migrate(cmd.db);
    case Command::Action::kTokenHash: return TokenHash();
    case Command::Action::kTokenCreate: return TokenCreate(cmd.db, cmd.token_kind, cmd.token_name);
    case Command::Action::kServe: break;
  }
  return Serve(cmd.options);
}
