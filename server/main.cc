// npuperf-server: opens the store, serves (server_wiring.h builds the domain
// and the gRPC server over it) until SIGTERM, drains; and the subcommands.
// The flags are server_flags.h's.
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
#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/bundle_tar.h"
#include "common/clock.h"
#include "common/grpc_log.h"
#include "common/log.h"
#include "common/metrics_http.h"
#include "common/process_metrics.h"
#include "common/secure_random.h"
#include "common/sha256.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "server/backends/factory.h"
#include "server/core/bundle_upload.h"
#include "server/core/reaper.h"
#include "server/core/safe_defaults.h"
#include "server/server_flags.h"
#include "server/server_options.h"
#include "server/server_wiring.h"

namespace npuperf::server {
namespace {

// Exit code after the gRPC listener died (EX_TEMPFAIL: restart me).
constexpr int kExitListenerDied = 75;

int Fail(const absl::Status& s) {
  std::cerr << "npuperf-server: " << s.message() << "\n";
  return 1;
}

std::string HostOf(const std::string& address) { return address.substr(0, address.rfind(':')); }

absl::StatusOr<std::map<std::string, Principal>> FileTokens(const ServerOptions& opt) {
  if (opt.tokens_file.empty()) return std::map<std::string, Principal>();
  return LoadTokensFile(opt.tokens_file);
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
  auto grpc_server =
      BuildGrpcServer(opt, *creds, {&s.collections, &s.agents, &s.queries, &s.devices}, &port);
  if (!grpc_server || port == 0)
    return Fail(absl::UnavailableError("cannot listen on " + opt.listen));
  LogListening(opt, port, **http, *safety);
  grpc_server->GetHealthCheckService()->SetServingStatus(true);
  for (const std::string& name : ServiceNames()) {
    grpc_server->GetHealthCheckService()->SetServingStatus(name, true);
  }
  s.serving = true;
  // The server's own upkeep beside the reaper's: confirmations,
  // calibrations, bisections and canaries move on (the first error is
  // returned).
  Reaper reaper(s.scheduler, clock, opt.reaper_interval, opt.state_metrics_interval, [&s] {
    absl::Status first = s.confirmations.AdvancePending().status();
    for (absl::Status next :
         {s.calibrations.Advance(), s.bisections.AdvancePending().status(), s.canaries.Tick()}) {
      if (first.ok()) first = next;
    }
    return first;
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
  if (kind == PrincipalKind::kTeam && IsReservedTeamName(name)) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("team ", name, ": names starting \"npuperf.\" are the server's own")));
  }
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

}  // namespace
}  // namespace npuperf::server

int main(int argc, char** argv) {
  using namespace npuperf::server;
  npuperf::UseUtf8PathNames();  // uploaded bundles may hold non-ASCII names (libarchive)
  // Debian's Abseil is built without NDEBUG, so every Mutex lock also fed its deadlock
  // detector (a lock graph and stack traces; about 3 % of the server's CPU in fleet_bench,
  // issue 36). The tests keep it on, where it finds lock-order inversions.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
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
