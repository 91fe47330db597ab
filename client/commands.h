#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/status_util.h"
#include "grpcpp/client_context.h"
#include "npuperf/v1/collection_service.grpc.pb.h"
#include "npuperf/v1/device_service.grpc.pb.h"
#include "npuperf/v1/query_service.grpc.pb.h"

namespace npuperf::client {

// Exit codes of `npuperf` (bot contract, docs/api.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
// compare / regressions: something regressed.
inline constexpr int kExitRegressed = 3;
// compare / regressions: nothing comparable, or evidence insufficient.
inline constexpr int kExitNoVerdict = 4;
// The server is unavailable (or draining), or the call's deadline passed:
// worth retrying later.
inline constexpr int kExitUnavailable = 5;
// A collection, round or baseline the server does not have (or not the
// caller's), or a local path that does not exist.
inline constexpr int kExitNotFound = 6;

// The largest operator bundle submit packs (the server's default limit).
inline constexpr int64_t kMaxBundleBytes = int64_t{64} << 20;

// --format: text tables, or the proto3 JSON of the responses (docs/api.md).
enum class OutputFormat { kText, kJson };

// How watch (and submit --wait) shows progress on the error stream.
enum class ProgressStyle {
  kLines,     // one line per change (logs, pipes)
  kTerminal,  // one line redrawn in place, with a progress bar
};

// Connection settings: flags, then NPUPERF_* environment, then the config
// file (client/config.h).
struct ClientConfig {
  std::string server = "127.0.0.1:50051";
  std::string token;
  OutputFormat format = OutputFormat::kText;
  std::chrono::seconds timeout{30};
  std::string tls_ca;  // PEM file of the CA that signed the server's certificate; empty: plaintext
  // main.cc picks kTerminal when stderr is a terminal. Default: kLines.
  ProgressStyle progress = ProgressStyle::kLines;
  // kTerminal: the terminal's width (main.cc: TerminalColumns of stderr); the
  // progress line is cut to one column less, so it never wraps.
  int terminal_columns = 80;
};

// The stubs, as Session::Call names their methods: &Queries::GetRound.
using Collections = v1::CollectionService::StubInterface;
using Queries = v1::QueryService::StubInterface;
using Devices = v1::DeviceService::StubInterface;

// The stubs a command talks to (generated StubInterfaces: mocks in tests)
// and the clock its deadlines come from. Owns the stubs; `clock` must
// outlive the session. Not thread-safe (one command at a time).
class Session {
 public:
  // devices: DeviceService's stub (null: the device commands answer
  // UNAVAILABLE; tests of other commands need none).
  Session(std::unique_ptr<v1::CollectionService::StubInterface> collections,
          std::unique_ptr<v1::QueryService::StubInterface> queries, ClientConfig config,
          Clock& clock, std::unique_ptr<v1::DeviceService::StubInterface> devices = nullptr);
  // A channel to config.server (TLS when config.tls_ca is set).
  static std::unique_ptr<Session> Connect(const ClientConfig& config, Clock& clock);

  v1::CollectionService::StubInterface& collections() { return *collections_; }
  v1::QueryService::StubInterface& queries() { return *queries_; }
  // Null when the session was made without one.
  v1::DeviceService::StubInterface* devices() { return devices_.get(); }
  const ClientConfig& config() const { return config_; }
  Clock& clock() const { return clock_; }
  // Adds the bearer token and a deadline: clock().SystemNow() plus timeout,
  // or plus the config timeout when timeout is 0.
  void Prepare(grpc::ClientContext* ctx,
               std::chrono::seconds timeout = std::chrono::seconds(0)) const;

  // One unary call, the way every command makes it: a fresh ClientContext
  // prepared as above (token, deadline from timeout), `method` called on the
  // stub it belongs to (&Queries::GetRound on queries()), and the gRPC status
  // as an absl::Status with its field violations (FromGrpcStatus). The
  // streaming calls (UploadBundle, WatchCollection, FetchArtifacts) prepare
  // their own context.
  template <typename Stub, typename Request, typename Response>
  absl::Status Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const std::type_identity_t<Request>& request,
                    std::type_identity_t<Response>* response,
                    std::chrono::seconds timeout = std::chrono::seconds(0)) {
    grpc::ClientContext ctx;
    Prepare(&ctx, timeout);
    return FromGrpcStatus((StubOf<Stub>().*method)(&ctx, request, response));
  }

 private:
  template <typename Stub>
  Stub& StubOf() {
    if constexpr (std::is_same_v<Stub, Queries>) {
      return *queries_;
    } else if constexpr (std::is_same_v<Stub, Devices>) {
      return *devices_;  // REQUIRES: devices() is not null (the device commands check)
    } else {
      static_assert(std::is_same_v<Stub, Collections>,
                    "a method of Queries, Devices or Collections");
      return *collections_;
    }
  }

  std::unique_ptr<v1::CollectionService::StubInterface> collections_;
  std::unique_ptr<v1::QueryService::StubInterface> queries_;
  std::unique_ptr<v1::DeviceService::StubInterface> devices_;
  const ClientConfig config_;
  Clock& clock_;
};

// How long watch (and submit's wait) keeps reconnecting to a server that
// went away (restart, drain) before it gives up with kExitUnavailable.
inline constexpr std::chrono::seconds kDefaultReconnectFor{300};

// `npuperf submit` arguments.
struct SubmitArgs {
  std::vector<std::string> operator_dirs;  // positional
  std::string batch_dir;                   // --batch: every operator directory under it
  bool manifest = false;                   // --manifest: cases from PERFORMANCE_CASES.json
  v1::ProfileMode mode = v1::PROFILE_MODE_STANDARD;  // --quick / --compare
  std::string op_name;
  std::string op_name_map;  // JSON file {operator: op name}
  std::string launch;       // --launch: launch selector of every operator ("" = unique)
  std::vector<std::string> case_ids;
  std::string case_arg;
  std::string case_env;
  std::string runner;
  int warm_up = -1;  // -1: server default
  int repeats = 0;
  int64_t seed = 0;
  int retry = 0;
  int max_jobs = 0;
  int priority = 0;
  int timeout_seconds = 0;
  bool keep_raw = false;
  std::vector<std::string> labels;  // key=value
  std::vector<std::string> socs;
  std::string device_range;
  std::string idempotency_key;
  bool wait = true;
  // --reconnect-for: how long the wait keeps reconnecting (RunWatch).
  std::chrono::seconds reconnect_for = kDefaultReconnectFor;
  // --op-name-auto: discover each operator's (and case's) target first
  // (discover_commands.h DiscoverOpNames), which fills discovered_op_names.
  bool op_name_auto = false;
  // (operator, case id) -> the discovered exact op name ("" case: no cases).
  std::map<std::pair<std::string, std::string>, std::string> discovered_op_names;
};

// The case ids of dir/PERFORMANCE_CASES.json (submit --manifest), in order:
// the manifest must pass evidence::ParseCaseManifest, the rule the server and
// the agent apply. NOT_FOUND without the file; INVALID_ARGUMENT
// "<dir>/PERFORMANCE_CASES.json: case manifest cases[0].id must be a
// non-empty string" naming the bad field.
absl::StatusOr<std::vector<std::string>> ManifestCaseIds(const std::filesystem::path& dir);

// --op-name-map's file: a JSON object {operator: op name}, its string
// entries (others are ignored); empty without the flag (path ""). An
// unreadable file or another JSON value is INVALID_ARGUMENT naming the flag.
using OpNameMap = std::map<std::string, std::string>;
absl::StatusOr<OpNameMap> ReadOpNameMap(const std::string& path);

// Uploads one packed bundle (UploadBundle, one stream) named `name`; its
// sha256. Errors say "upload <what>: ...".
absl::StatusOr<std::string> UploadBundleBytes(Session& s, const std::string& name,
                                              const std::string& tar, const std::string& what);

// Fills spec from a's flags, everything but the operators: kind, params,
// case selector, caps, priority, labels, constraints. INVALID_ARGUMENT for a
// malformed --label.
absl::Status FillSpecParams(const SubmitArgs& a, v1::CollectionSpec* spec);

// The collection with every job: GetCollection pages them (each page its
// own call and deadline) and the pages are joined.
absl::StatusOr<v1::Collection> FetchCollection(Session& s, const std::string& id);

// The round, with its evidence and artifacts (one GetRound call).
absl::StatusOr<v1::Round> FetchRound(Session& s, int64_t round_id);

// Prints the collection (text or JSON per config) and returns kExitOk when
// it succeeded, kExitError otherwise.
int FinishCollection(const v1::Collection& c, std::ostream& out, const ClientConfig& config);

// The exit code of a failed call: kExitUnavailable (UNAVAILABLE,
// DEADLINE_EXCEEDED), kExitNotFound (NOT_FOUND) or kExitError.
int ExitCodeOfError(const absl::Status& s);

// Prints a failed call: "npuperf: CODE: message" and each field violation
// on err; with --format json also the error object (docs/api.md, ErrorJson
// in format.h) on out. Returns ExitCodeOfError(s).
int ReportError(const absl::Status& s, const ClientConfig& config, std::ostream& out,
                std::ostream& err);

// A usage error a command finds itself (CLI11 reports its own): "npuperf
// <command>: message" on err, and with --format json the error object
// (INVALID_ARGUMENT) on out. Returns kExitUsage.
int ReportUsage(const std::string& command, const std::string& message, const ClientConfig& config,
                std::ostream& out, std::ostream& err);

// Each command writes its result to out (text or JSON per config), errors
// to err, and returns an exit code.
int RunSubmit(Session& s, const SubmitArgs& args, std::ostream& out, std::ostream& err);
// Uploads the operators of args, submits their collection and follows it
// (watch progress on err) until it finishes; the finished collection with
// every job. Used by submit --op-name-auto and discover.
absl::StatusOr<v1::Collection> SubmitAndFollow(Session& s, const SubmitArgs& args,
                                               std::ostream& err);
int RunGet(Session& s, const std::string& id, std::ostream& out, std::ostream& err);
// Follows the collection until it finishes. A stream that fails with
// UNAVAILABLE (the server restarted or drains) is opened again after a
// capped backoff (0.5 s doubling to 10 s, jittered, on s.clock()) and resumes
// from the server's new snapshot; it gives up with kExitUnavailable when the
// next try would start more than reconnect_for after the first failure
// since the last event (0: never reconnect).
int RunWatch(Session& s, const std::string& id, std::ostream& out, std::ostream& err,
             std::chrono::seconds reconnect_for = kDefaultReconnectFor);
// RunWatch's loop: progress on err, reconnecting the same way; the last state
// of the collection (its jobs as the watch saw them), or the error it gave
// up on. Used by RunWatch and SubmitAndFollow (submit --op-name-auto, discover).
absl::StatusOr<v1::Collection> FollowCollection(Session& s, const std::string& id,
                                                std::ostream& err,
                                                std::chrono::seconds reconnect_for);
int RunCancel(Session& s, const std::string& id, const std::string& reason, std::ostream& out,
              std::ostream& err);
int RunList(Session& s, const std::vector<std::string>& labels, const std::string& page_token,
            std::ostream& out, std::ostream& err);
int RunRound(Session& s, int64_t round_id, std::ostream& out, std::ostream& err);
// What `npuperf rounds` asks for.
struct RoundsArgs {
  std::string op, case_id, collection_id, metric;
  // Change points of each case's metric series (needs metric).
  bool changes = false;
  // Smallest step to report, percent; 0: the server's default (2).
  double min_change_pct = 0;
};
// Rounds of an operator (op), or of a collection (collection_id); a usage
// error unless exactly one is given, or with changes but no metric.
int RunRounds(Session& s, const RoundsArgs& args, std::ostream& out, std::ostream& err);
int RunAgents(Session& s, std::ostream& out, std::ostream& err);

}  // namespace npuperf::client
