#include "server/server_flags.h"

#include <iostream>

#include "CLI/CLI.hpp"
#include "common/cli_docs.h"
#include "common/cli_environment.h"
#include "common/duration_text.h"
#include "common/version.h"
#include "server/core/artifact_rules.h"

namespace npuperf::server {
namespace {

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
  std::vector<std::string> device_admins;
  std::string canary_interval = "off";
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
  app.add_option("--lease-ttl-ms", ms.lease_ms,
                 "lease TTL; a heartbeat renews a lease once less than half of it is left")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{300}, int64_t{86'400'000}));
  ms.heartbeat_ms = opt.scheduler.heartbeat_interval.count();
  app.add_option("--heartbeat-ms", ms.heartbeat_ms,
                 "heartbeat period asked of agents (at most a third of --lease-ttl-ms)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{100}, int64_t{3'600'000}));
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
  app.add_option("--device-admin", ms.device_admins,
                 "a team that may release quarantined devices (repeatable; docs/operations.md "
                 "\"Device health\")");
  app.add_option("--canary-interval", ms.canary_interval,
                 "run the built-in canary on each idle device this often (<n>s|m|h|d, e.g. 1h) "
                 "and quarantine slow ones; off: never (docs/operations.md \"Canaries\")")
      ->capture_default_str()
      ->check([](const std::string& text) {
        if (text == "off") return std::string();
        auto d = ParseDurationText(text);
        if (!d.ok()) return std::string(d.status().message());
        return *d < std::chrono::seconds(1) ? std::string("must be at least 1s, or off")
                                            : std::string();
      });
  app.add_option("--canary-op-name", opt.canaries.op_name,
                 "the canary kernel's name in op_summary (what this fleet's CANN names torch.add's "
                 "fp16 kernel)")
      ->capture_default_str();
}

void ApplyDurations(const DurationFlags& ms, ServerOptions& opt) {
  opt.scheduler.lease_ttl = std::chrono::milliseconds(ms.lease_ms);
  opt.scheduler.heartbeat_interval = std::chrono::milliseconds(ms.heartbeat_ms);
  opt.reaper_interval = std::chrono::milliseconds(ms.reaper_ms);
  opt.scheduler.agent_retention = ParseDurationText(ms.agent_retention).value();  // checked
  opt.scheduler.device_admins = {ms.device_admins.begin(), ms.device_admins.end()};
  opt.canaries.interval = ms.canary_interval == "off"
                              ? std::chrono::milliseconds(0)
                              : ParseDurationText(ms.canary_interval).value();  // checked
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

}  // namespace

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
  // A lease is rewritten once less than half its TTL is left
  // (core/job_rules.h LeaseRenewalDue): a second heartbeat must still come
  // before it runs out, or a slow one would cost a running job its lease.
  if (ms.heartbeat_ms * 3 > ms.lease_ms) {
    std::cerr << "npuperf-server: --heartbeat-ms " << ms.heartbeat_ms
              << " must be at most a third of --lease-ttl-ms " << ms.lease_ms << "\n";
    return 2;
  }
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

}  // namespace npuperf::server
