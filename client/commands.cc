#include "client/commands.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/discover_commands.h"
#include "client/format.h"
#include "common/bundle_tar.h"
#include "common/keepalive.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "evidence/cases.h"
#include "evidence/parallel.h"
#include "grpcpp/create_channel.h"
#include "nlohmann/json.hpp"

namespace npuperf::client {
namespace fs = std::filesystem;
namespace {

constexpr size_t kChunkBytes = 1 << 20;

// "key=value" labels into a proto map; the error names the bad one.
absl::Status AddLabels(const std::vector<std::string>& labels,
                       google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& l : labels) {
    std::vector<std::string> kv = absl::StrSplit(l, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--label '", l, "': want key=value"));
    }
    (*out)[kv[0]] = kv[1];
  }
  return absl::OkStatus();
}

// Writes a response as JSON or, for --format text, with its printer.
template <typename M>
int Render(const M& message, const ClientConfig& config, std::ostream& out,
           void (*print)(const M&, std::ostream&)) {
  if (config.format == OutputFormat::kJson) {
    out << ToJson(message) << "\n";
  } else {
    print(message, out);
  }
  return kExitOk;
}

void PrintRoundsAndChanges(const v1::ListRoundsResponse& rounds, std::ostream& out) {
  PrintRounds(rounds, out);
  PrintSeriesChanges(rounds, out);
}

bool IsOperatorDir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "PERFORMANCE_CASES.json", ec)) return true;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("test_", 0) == 0 && e.path().extension() == ".py") return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ManifestCaseIds(const fs::path& dir) {
  const fs::path path = dir / "PERFORMANCE_CASES.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(dir.string(), ": no PERFORMANCE_CASES.json"));
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  // The one manifest rule (evidence/cases.h), as the server and the agent apply it.
  absl::StatusOr<evidence::CaseManifest> manifest = evidence::ParseCaseManifest(bytes, {});
  if (!manifest.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.string(), ": ", manifest.status().message()));
  }
  std::vector<std::string> ids;
  for (const evidence::PerfCase& c : manifest->cases) ids.push_back(c.id);
  return ids;
}

namespace {

// Packs and uploads one operator directory; returns its sha256.
absl::StatusOr<std::string> Upload(Session& s, const fs::path& dir) {
  auto tar = PackBundle(dir, kMaxBundleBytes);
  if (!tar.ok()) return tar.status();
  return UploadBundleBytes(s, dir.filename().string(), *tar, dir.string());
}

// The operator directories of a submission: the positional ones, plus every
// operator directory under --batch (then all sorted together).
absl::StatusOr<std::vector<fs::path>> OperatorDirs(const SubmitArgs& a) {
  std::vector<fs::path> dirs(a.operator_dirs.begin(), a.operator_dirs.end());
  if (!a.batch_dir.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(a.batch_dir, ec)) {
      if (e.is_directory() && IsOperatorDir(e.path())) dirs.push_back(e.path());
    }
    if (ec) return absl::NotFoundError(absl::StrCat("--batch ", a.batch_dir, ": ", ec.message()));
    std::sort(dirs.begin(), dirs.end());
  }
  if (dirs.empty())
    return absl::InvalidArgumentError("no operator directory given (positional or --batch)");
  return dirs;
}

// Operators read (their manifests parsed), and then their bundles packed
// and uploaded, this many at a time: one after the other they were most of
// the CLI's own time in a submit of ten 10,000-case operators (issue 36).
// Two: the machine's cores in CI, and the server's default
// --max-uploads-per-team.
constexpr int kParallelOperators = 2;

// The operator in dir: its names and cases; its bundle comes later (UploadAll).
absl::StatusOr<v1::OperatorSpec> ReadOperator(const SubmitArgs& a, const OpNameMap& map,
                                              const fs::path& dir) {
  v1::OperatorSpec op;
  fs::path normal = fs::absolute(dir).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();  // "dir/" form
  const std::string name = normal.filename().string();
  op.set_name(name);
  op.set_runner(a.runner);
  op.set_op_name(a.op_name);
  if (auto it = map.find(name); it != map.end()) op.set_op_name(it->second);
  op.set_launch(a.launch);
  std::vector<std::string> cases = a.case_ids;
  if (cases.empty() && a.manifest) {
    auto ids = ManifestCaseIds(dir);
    if (!ids.ok()) return ids.status();
    cases = *ids;
    op.set_manifest_path("PERFORMANCE_CASES.json");
  }
  for (const auto& c : cases) op.add_case_ids(c);
  for (const auto& [job, op_name] : a.discovered_op_names) {
    if (job.first != name) continue;
    if (job.second.empty()) {
      op.set_op_name(op_name);
    } else {
      (*op.mutable_op_name_map())[job.second] = op_name;
    }
  }
  return op;
}

// Packs and uploads dirs: their sha256s in order, or the error of the first
// directory (in order) that failed. An upload the server refused for the
// team's uploads in progress (a lower --max-uploads-per-team, or a
// teammate's upload) is tried once more alone, after the others.
absl::StatusOr<std::vector<std::string>> UploadAll(Session& s, const std::vector<fs::path>& dirs) {
  std::vector<absl::StatusOr<std::string>> shas(dirs.size(), absl::UnknownError("not uploaded"));
  evidence::ForEachIndex(dirs.size(), kParallelOperators,
                         [&](size_t i) { shas[i] = Upload(s, dirs[i]); });
  std::vector<std::string> out;
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (absl::IsResourceExhausted(shas[i].status())) shas[i] = Upload(s, dirs[i]);
    if (!shas[i].ok()) return shas[i].status();
    out.push_back(*std::move(shas[i]));
  }
  return out;
}

// Adds every operator to spec, in order: all are read first, so that a bad
// manifest is refused before anything is uploaded; then the bundles.
absl::Status BuildOperators(Session& s, const SubmitArgs& a, v1::CollectionSpec* spec) {
  auto dirs = OperatorDirs(a);
  if (!dirs.ok()) return dirs.status();
  auto map = ReadOpNameMap(a.op_name_map);
  if (!map.ok()) return map.status();
  std::vector<absl::StatusOr<v1::OperatorSpec>> ops(dirs->size(), absl::UnknownError("not read"));
  evidence::ForEachIndex(dirs->size(), kParallelOperators,
                         [&](size_t i) { ops[i] = ReadOperator(a, *map, (*dirs)[i]); });
  for (const auto& op : ops) {
    if (!op.ok()) return op.status();
  }
  absl::StatusOr<std::vector<std::string>> shas = UploadAll(s, *dirs);
  if (!shas.ok()) return shas.status();
  for (size_t i = 0; i < ops.size(); ++i) {
    v1::OperatorSpec* op = spec->add_operators();
    *op = *std::move(ops[i]);
    op->set_bundle_sha256((*shas)[i]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OpNameMap> ReadOpNameMap(const std::string& path) {
  OpNameMap out;
  if (path.empty()) return out;
  std::ifstream in(path);
  const nlohmann::json map = nlohmann::json::parse(in, nullptr, false);
  if (!in || map.is_discarded() || !map.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--op-name-map ", path, ": want a JSON object {operator: op name}"));
  }
  for (const auto& [op, name] : map.items()) {
    if (name.is_string()) out.emplace(op, name.get<std::string>());
  }
  return out;
}

absl::StatusOr<std::string> UploadBundleBytes(Session& s, const std::string& name,
                                              const std::string& tar, const std::string& what) {
  const std::string sha = Sha256Hex(tar);
  grpc::ClientContext ctx;
  s.Prepare(&ctx, std::chrono::seconds(300));
  v1::UploadBundleResponse resp;
  auto writer = s.collections().UploadBundle(&ctx, &resp);
  v1::UploadBundleRequest header;
  header.mutable_header()->set_name(name);
  header.mutable_header()->set_size_bytes(static_cast<int64_t>(tar.size()));
  header.mutable_header()->set_sha256(sha);
  bool ok = writer->Write(header);
  for (size_t off = 0; ok && off < tar.size(); off += kChunkBytes) {
    v1::UploadBundleRequest chunk;
    chunk.set_chunk(tar.substr(off, kChunkBytes));
    ok = writer->Write(chunk);
  }
  writer->WritesDone();
  auto status = FromGrpcStatus(writer->Finish());
  if (!status.ok())
    return absl::Status(status.code(), absl::StrCat("upload ", what, ": ", status.message()));
  return sha;
}

absl::Status FillSpecParams(const SubmitArgs& a, v1::CollectionSpec* spec) {
  spec->set_kind(a.manifest             ? v1::COLLECTION_KIND_MANIFEST
                 : !a.batch_dir.empty() ? v1::COLLECTION_KIND_BATCH
                                        : v1::COLLECTION_KIND_UNSPECIFIED);
  auto* p = spec->mutable_params();
  p->set_mode(a.mode);
  if (a.warm_up == 0) p->set_skip_warm_up(true);
  if (a.warm_up > 0) p->set_warm_up(a.warm_up);
  p->set_repeats(a.repeats);
  p->set_seed(a.seed);
  p->set_retry(a.retry);
  p->set_timeout_seconds(a.timeout_seconds);
  p->set_keep_raw_output(a.keep_raw);
  if (!a.case_arg.empty()) spec->mutable_case_selector()->set_case_arg(a.case_arg);
  if (!a.case_env.empty()) spec->mutable_case_selector()->set_case_env(a.case_env);
  spec->set_max_concurrent_jobs(a.max_jobs);
  spec->set_priority(a.priority);
  if (auto st = AddLabels(a.labels, spec->mutable_labels()); !st.ok()) return st;
  for (const auto& soc : a.socs) spec->mutable_constraints()->add_socs(soc);
  spec->mutable_constraints()->set_device_range(a.device_range);
  return absl::OkStatus();
}

namespace {

absl::StatusOr<v1::SubmitCollectionRequest> BuildRequest(Session& s, const SubmitArgs& a) {
  v1::SubmitCollectionRequest req;
  if (auto st = FillSpecParams(a, req.mutable_spec()); !st.ok()) return st;
  req.set_idempotency_key(a.idempotency_key);
  if (auto st = BuildOperators(s, a, req.mutable_spec()); !st.ok()) return st;
  return req;
}

// The rest of a collection's jobs after `first` (a first page, as
// GetCollection, SubmitCollection or CancelCollection answered it): later
// pages carry no spec, so the result keeps first's; the other fields are the
// last page's.
absl::StatusOr<v1::Collection> FetchAfter(Session& s, v1::Collection first) {
  google::protobuf::RepeatedPtrField<v1::Job> jobs = std::move(*first.mutable_jobs());
  v1::CollectionSpec spec = std::move(*first.mutable_spec());
  v1::Collection all = std::move(first);
  while (!jobs.empty() && jobs.size() < all.counts().total()) {
    v1::GetCollectionRequest req;
    req.set_collection_id(all.id());
    req.set_job_page_token(absl::StrCat(jobs[jobs.size() - 1].id()));
    v1::GetCollectionResponse page;
    auto st = s.Call(&Collections::GetCollection, req, &page);
    if (!st.ok()) return st;
    const int got = page.collection().jobs_size();
    for (auto& j : *page.mutable_collection()->mutable_jobs()) *jobs.Add() = std::move(j);
    all = std::move(*page.mutable_collection());
    if (page.next_job_page_token().empty() || got == 0) break;
  }
  *all.mutable_jobs() = std::move(jobs);
  *all.mutable_spec() = std::move(spec);
  return all;
}

}  // namespace

absl::StatusOr<v1::Collection> FetchCollection(Session& s, const std::string& id) {
  v1::GetCollectionRequest req;
  req.set_collection_id(id);
  v1::GetCollectionResponse page;
  auto st = s.Call(&Collections::GetCollection, req, &page);
  if (!st.ok()) return st;
  if (page.next_job_page_token().empty()) return std::move(*page.mutable_collection());
  return FetchAfter(s, std::move(*page.mutable_collection()));
}

namespace {

// c as returned by a call that carries only the first page of its jobs
// (SubmitCollection, CancelCollection, the last watch snapshot), completed
// with the rest when some are missing: the pages after its last job.
absl::StatusOr<v1::Collection> Completed(Session& s, v1::Collection c) {
  if (c.jobs_size() >= c.counts().total()) return c;
  if (c.jobs().empty()) return FetchCollection(s, c.id());
  return FetchAfter(s, std::move(c));
}

// Uploads the operators, submits the collection and says so on err; the
// collection as SubmitCollection answered (its first page of jobs).
absl::StatusOr<v1::Collection> Submit(Session& s, const SubmitArgs& args, std::ostream& err) {
  auto req = BuildRequest(s, args);
  if (!req.ok()) return req.status();
  v1::SubmitCollectionResponse resp;
  auto st = s.Call(&Collections::SubmitCollection, *req, &resp);
  if (!st.ok()) return st;
  err << (resp.created() ? "submitted " : "already submitted (idempotency key) ")
      << resp.collection().id() << ": " << resp.collection().counts().total() << " jobs\n";
  return std::move(*resp.mutable_collection());
}

}  // namespace

int FinishCollection(const v1::Collection& c, std::ostream& out, const ClientConfig& config) {
  Render(c, config, out, PrintCollection);
  return c.state() == v1::COLLECTION_STATE_SUCCEEDED ? kExitOk : kExitError;
}

int ExitCodeOfError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded: return kExitUnavailable;
    case absl::StatusCode::kNotFound: return kExitNotFound;
    default: return kExitError;
  }
}

int ReportError(const absl::Status& s, const ClientConfig& config, std::ostream& out,
                std::ostream& err) {
  const int code = ExitCodeOfError(s);
  err << "npuperf: " << absl::StatusCodeToString(s.code()) << ": " << s.message() << "\n";
  for (const auto& v : FieldViolationsOf(s))
    err << "  " << v.field << ": " << v.description << "\n";
  if (config.format == OutputFormat::kJson) out << ErrorJson(s, code) << "\n";
  return code;
}

int ReportUsage(const std::string& command, const std::string& message, const ClientConfig& config,
                std::ostream& out, std::ostream& err) {
  err << "npuperf " << command << ": " << message << "\n";
  if (config.format == OutputFormat::kJson) {
    out << ErrorJson(absl::InvalidArgumentError(message), kExitUsage) << "\n";
  }
  return kExitUsage;
}

Session::Session(std::unique_ptr<v1::CollectionService::StubInterface> collections,
                 std::unique_ptr<v1::QueryService::StubInterface> queries, ClientConfig config,
                 Clock& clock, std::unique_ptr<v1::DeviceService::StubInterface> devices)
    : collections_(std::move(collections)),
      queries_(std::move(queries)),
      devices_(std::move(devices)),
      config_(std::move(config)),
      clock_(clock) {}

std::unique_ptr<Session> Session::Connect(const ClientConfig& config, Clock& clock) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive::kClientKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive::kKeepaliveTimeoutMs);
  // A restarted server is found again within RunWatch's own retry cap (gRPC's
  // default backoff grows to 120 s, failing every retry meanwhile).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 10'000);
  args.SetMaxReceiveMessageSize(64 << 20);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!config.tls_ca.empty()) {
    std::ifstream ca(config.tls_ca);
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs.assign(std::istreambuf_iterator<char>(ca), std::istreambuf_iterator<char>());
    creds = grpc::SslCredentials(ssl);
  }
  auto channel = grpc::CreateCustomChannel(config.server, creds, args);
  return std::make_unique<Session>(v1::CollectionService::NewStub(channel),
                                   v1::QueryService::NewStub(channel), config, clock,
                                   v1::DeviceService::NewStub(channel));
}

void Session::Prepare(grpc::ClientContext* ctx, std::chrono::seconds timeout) const {
  if (!config_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + config_.token);
  ctx->set_deadline(clock_.SystemNow() + (timeout.count() > 0 ? timeout : config_.timeout));
}

int RunSubmit(Session& s, const SubmitArgs& given, std::ostream& out, std::ostream& err) {
  SubmitArgs args = given;
  if (args.op_name_auto) {
    if (!args.op_name.empty() || !args.op_name_map.empty()) {
      return ReportUsage("submit", "--op-name-auto excludes --op-name and --op-name-map",
                         s.config(), out, err);
    }
    absl::StatusOr<SubmitArgs> named = DiscoverOpNames(s, args, err);
    if (absl::IsFailedPrecondition(named.status())) {  // no single target: an input error
      err << "npuperf submit: " << named.status().message() << "\n";
      if (s.config().format == OutputFormat::kJson) {
        out << ErrorJson(named.status(), kExitUsage) << "\n";
      }
      return kExitUsage;
    }
    if (!named.ok()) return ReportError(named.status(), s.config(), out, err);
    args = *std::move(named);
  }
  absl::StatusOr<v1::Collection> c = Submit(s, args, err);
  if (!c.ok()) return ReportError(c.status(), s.config(), out, err);
  if (args.wait) return RunWatch(s, c->id(), out, err, args.reconnect_for);
  auto all = Completed(s, *std::move(c));
  if (!all.ok()) return ReportError(all.status(), s.config(), out, err);
  // --no-wait: queued (or running, or done) is success; only a collection the
  // idempotency key found already failed or cancelled is not.
  const int code = FinishCollection(*all, out, s.config());
  const bool ended_badly =
      all->state() == v1::COLLECTION_STATE_FAILED || all->state() == v1::COLLECTION_STATE_CANCELLED;
  return ended_badly ? code : kExitOk;
}

absl::StatusOr<v1::Collection> SubmitAndFollow(Session& s, const SubmitArgs& args,
                                               std::ostream& err) {
  absl::StatusOr<v1::Collection> submitted = Submit(s, args, err);
  if (!submitted.ok()) return submitted.status();
  absl::StatusOr<v1::Collection> last =
      FollowCollection(s, submitted->id(), err, args.reconnect_for);
  if (!last.ok()) return last.status();
  return Completed(s, *std::move(last));
}

int RunGet(Session& s, const std::string& id, std::ostream& out, std::ostream& err) {
  auto c = FetchCollection(s, id);
  if (!c.ok()) return ReportError(c.status(), s.config(), out, err);
  FinishCollection(*c, out, s.config());
  return kExitOk;
}

int RunCancel(Session& s, const std::string& id, const std::string& reason, std::ostream& out,
              std::ostream& err) {
  v1::CancelCollectionRequest req;
  req.set_collection_id(id);
  req.set_reason(reason);
  v1::CancelCollectionResponse resp;
  auto st = s.Call(&Collections::CancelCollection, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  auto all = Completed(s, resp.collection());
  if (!all.ok()) return ReportError(all.status(), s.config(), out, err);
  FinishCollection(*all, out, s.config());
  return kExitOk;
}

int RunList(Session& s, const std::vector<std::string>& labels, const std::string& page_token,
            std::ostream& out, std::ostream& err) {
  v1::ListCollectionsRequest req;
  if (auto st = AddLabels(labels, req.mutable_labels()); !st.ok())
    return ReportError(st, s.config(), out, err);
  req.set_page_token(page_token);
  v1::ListCollectionsResponse resp;
  auto st = s.Call(&Collections::ListCollections, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  return Render(resp, s.config(), out, PrintCollectionList);
}

absl::StatusOr<v1::Round> FetchRound(Session& s, int64_t round_id) {
  v1::GetRoundRequest req;
  req.set_round_id(round_id);
  v1::GetRoundResponse resp;
  auto st = s.Call(&Queries::GetRound, req, &resp);
  if (!st.ok()) return st;
  return std::move(*resp.mutable_round());
}

int RunRound(Session& s, int64_t round_id, std::ostream& out, std::ostream& err) {
  auto round = FetchRound(s, round_id);
  if (!round.ok()) return ReportError(round.status(), s.config(), out, err);
  return Render(*round, s.config(), out, PrintRound);
}

int RunRounds(Session& s, const RoundsArgs& args, std::ostream& out, std::ostream& err) {
  if (args.op.empty() == args.collection_id.empty()) {
    return ReportUsage("rounds", "give an operator or --collection", s.config(), out, err);
  }
  if (args.changes && args.metric.empty()) {
    return ReportUsage("rounds", "--changes needs --metric (e.g. --metric duration)", s.config(),
                       out, err);
  }
  v1::ListRoundsRequest req;
  req.set_operator_name(args.op);
  req.set_case_id(args.case_id);
  req.set_collection_id(args.collection_id);
  req.set_page_size(1000);
  req.set_metric(args.metric);
  req.set_changes(args.changes);
  req.set_min_change_pct(args.min_change_pct);
  v1::ListRoundsResponse resp;
  auto st = s.Call(&Queries::ListRounds, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  return Render(resp, s.config(), out, args.changes ? PrintRoundsAndChanges : PrintRounds);
}

int RunAgents(Session& s, std::ostream& out, std::ostream& err) {
  v1::ListAgentsResponse resp;
  auto st = s.Call(&Queries::ListAgents, v1::ListAgentsRequest(), &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  return Render(resp, s.config(), out, PrintAgents);
}

}  // namespace npuperf::client
