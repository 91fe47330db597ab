#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "tests/fakes/temp_dir.h"
#include "tests/integration/process_harness.h"

namespace npuperf::testing {

// SUCCEEDED, FAILED or CANCELLED: a predicate for Cluster::WaitFor.
bool Terminal(const v1::Collection& c);

// npuperf_server_agent_calls_refused_total{method,reason} in a scrape of
// the server's /metrics (0 when absent).
double AgentCallsRefused(const std::string& metrics, const std::string& method,
                         const std::string& reason);

// A server on SQLite (or on `db` when set) and one agent on msprof-sim, in a
// temp dir, on free ports.
struct Cluster {
  TempDir dir;
  std::string db;  // --db of every server started; empty: sqlite in dir
  std::unique_ptr<Process> server;
  std::unique_ptr<Process> agent;
  std::string address;                 // gRPC HOST:PORT
  std::string metrics_address;         // server /metrics
  std::string cli_token;               // --token of every Cli call (empty: none)
  std::vector<std::string> cli_flags;  // global flags of every Cli call (e.g. --tls-ca F)
  // Servers run with --insecure-no-auth (loopback) unless this is false or
  // their flags give --tokens-file.
  bool insecure_no_auth = true;
  // A command the server runs under (its argv prefix, e.g. prlimit); empty:
  // the server itself.
  std::vector<std::string> server_wrapper;
  // Flags every agent started by StartAgent gets on top of the cluster's own
  // (how runners get their account, --token-file F). Default: runners as the
  // agent's user; tests that add flags append to it.
  std::vector<std::string> agent_flags = {"--run-as-self"};

  // Starts the server (extra flags appended) and, when devices is not empty,
  // one agent serving them.
  void Start(const std::string& devices = "0-3", const std::vector<std::string>& server_flags = {});
  std::vector<std::string> server_flags_;
  // An agent named `name` (its log and work dir), on this cluster's lock dir
  // and simulator state; it talks to `server_address` (empty: this cluster's
  // server).
  std::unique_ptr<Process> StartAgent(const std::string& devices, const std::string& name,
                                      const std::map<std::string, std::string>& env = {},
                                      const std::string& server_address = "");
  // StartAgent without waiting for the registration (an agent the server
  // refuses).
  std::unique_ptr<Process> LaunchAgent(const std::string& devices, const std::string& name,
                                       const std::map<std::string, std::string>& env = {},
                                       const std::string& server_address = "");
  // Another server on the same database (a replica) on a free port; returns
  // it and sets *replica_address.
  std::unique_ptr<Process> StartReplica(const std::string& name, std::string* replica_address);
  // Restarts the server on the same database and address.
  void RestartServer(const std::vector<std::string>& server_flags = {});
  // The collection as the server sees it now.
  v1::Collection Get(const std::string& id);
  // Polls Get until pred holds or timeout passes; returns the last snapshot.
  v1::Collection WaitFor(const std::string& id,
                         const std::function<bool(const v1::Collection&)>& pred,
                         std::chrono::seconds timeout);
  // The stored round, over QueryService.GetRound (no token: for clusters
  // started without tokens).
  absl::StatusOr<v1::Round> GetRound(int64_t round_id) const;
  // Runs the npuperf CLI against this cluster (or against `server`).
  CommandResult Cli(std::vector<std::string> args, const std::string& server_address = "");

 private:
  std::vector<std::string> ServerArgv(const std::string& listen) const;
};

}  // namespace npuperf::testing
