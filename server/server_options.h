#pragma once

#include <chrono>
#include <string>

#include "server/compare/canaries.h"
#include "server/compare/canary_operator.h"
#include "server/core/scheduler.h"
#include "server/ui/ui_server.h"

namespace npuperf::server {

// Flags of npuperf-server, parsed in main.cc.
struct ServerOptions {
  // gRPC address; port 0 picks a free port. Default: 127.0.0.1:50051.
  std::string listen = "127.0.0.1:50051";
  // Prometheus /metrics address; port 0 picks a free port. Default: 127.0.0.1:9464.
  std::string metrics_listen = "127.0.0.1:9464";
  // "sqlite:PATH" or "postgres://...". Default: sqlite:var/npuperf.db.
  std::string db = "sqlite:var/npuperf.db";
  // Bearer tokens ("team|agent NAME SHA256HEX" lines), besides those of the
  // database (`token create`). Authentication is on whatever the tokens.
  std::string tokens_file;
  // Runs without authentication; accepted only on a loopback --listen
  // (development, make demo). Default: off.
  bool insecure_no_auth = false;
  // Serves plaintext on a non-loopback --listen (refused without it unless
  // TLS is configured; warned at start, npuperf_server_plaintext_listener).
  bool allow_plaintext = false;
  // Concurrent streams per connection (GRPC_ARG_MAX_CONCURRENT_STREAMS).
  // Default: 100.
  int max_streams_per_connection = 100;
  // Threads of the synchronous handlers and memory of the gRPC server
  // (grpc::ResourceQuota; each agent holds two: its session and its lease
  // poll). Default: 2,000 and 1024 MiB.
  int max_threads = 2'000;
  int64_t memory_quota_mib = 1024;
  // TLS for the gRPC port: PEM certificate chain and private key (both or
  // neither). Default: none (plaintext).
  std::string tls_cert;
  std::string tls_key;
  // mTLS: the PEM CA whose client certificates the gRPC port requests and
  // verifies (needs --tls-cert; a client without one still connects).
  // Default: none (no client certificates requested).
  std::string tls_client_ca;
  // Every AgentService call must present a client certificate naming its
  // agent (docs/security.md, "Agent client certificates"; needs
  // --tls-client-ca). Default: off (a presented one must still match).
  bool require_agent_cert = false;
  // How often the jobs/agents/devices-by-state gauges are read from the
  // store. Default: 5 s.
  std::chrono::milliseconds state_metrics_interval{5'000};
  // How often expired leases are taken back. Default: 1 s.
  std::chrono::milliseconds reaper_interval{1'000};
  // Grace for in-flight RPCs at SIGTERM. Default: 10 s.
  std::chrono::milliseconds shutdown_grace{10'000};
  SchedulerOptions scheduler;
  // Canaries (--canary-interval, --canary-op-name). Default: off.
  CanaryOptions canaries{std::chrono::milliseconds(0), kDefaultCanaryOpName};
  // The read-only web pages at /ui on the metrics port (--no-ui turns them
  // off). Default: on.
  bool ui_enabled = true;
  // Their sessions and cookie (--ui-session-ttl, --ui-secure-cookie; the
  // cookie is Secure also when --tls-cert is set).
  ui::UiOptions ui;
};

}  // namespace npuperf::server
