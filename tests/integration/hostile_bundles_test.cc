// Hostile tenants against the real server: bundles (no existence oracle,
// no cross-team reference) and the safe defaults (authentication,
// plaintext, the SQLite file's mode).
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection_service.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

std::string Operator() { return (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(); }

// A tokens file with teams alpha and beta and agent a1 (their tokens are
// their names plus "-token"); the agent's token file beside it.
std::string WriteTokens(const TempDir& dir) {
  const auto path = dir.path() / "tokens";
  std::ofstream out(path);
  out << "team alpha " << Sha256Hex("alpha-token") << "\n"
      << "team beta " << Sha256Hex("beta-token") << "\n"
      << "agent a1 " << Sha256Hex("a1-token") << "\n";
  std::ofstream(dir.path() / "agent.token") << "a1-token\n";
  // The agent refuses a token file others can read.
  std::filesystem::permissions(dir.path() / "agent.token", std::filesystem::perms::owner_read |
                                                               std::filesystem::perms::owner_write);
  return path.string();
}

class Caller {
 public:
  Caller(const std::string& address, const std::string& token)
      : stub_(v1::CollectionService::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))),
        token_(token) {}

  void Prepare(grpc::ClientContext* ctx) {
    if (!token_.empty()) ctx->AddMetadata("authorization", "Bearer " + token_);
    ctx->set_deadline(WallClock().SystemNow() + std::chrono::seconds(20));
  }

  grpc::Status Upload(const std::string& tar, v1::UploadBundleResponse* resp) {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    auto writer = stub_->UploadBundle(&ctx, resp);
    v1::UploadBundleRequest m;
    m.mutable_header()->set_name("inplace_add_rmsnorm");
    m.mutable_header()->set_sha256(Sha256Hex(tar));
    m.mutable_header()->set_size_bytes(static_cast<int64_t>(tar.size()));
    writer->Write(m);
    m.set_chunk(tar);
    writer->Write(m);
    writer->WritesDone();
    return writer->Finish();
  }

  grpc::Status Submit(const std::string& sha, v1::SubmitCollectionResponse* resp) {
    v1::SubmitCollectionRequest req;
    auto* spec = req.mutable_spec();
    spec->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
    spec->mutable_case_selector()->set_case_arg("--case-id");
    auto* op = spec->add_operators();
    op->set_name("inplace_add_rmsnorm");
    op->set_bundle_sha256(sha);
    op->set_op_name(kKernel);
    op->add_case_ids("c0");
    grpc::ClientContext ctx;
    Prepare(&ctx);
    return stub_->SubmitCollection(&ctx, req, resp);
  }

  grpc::Status List(v1::ListCollectionsResponse* resp) {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    return stub_->ListCollections(&ctx, v1::ListCollectionsRequest(), resp);
  }

 private:
  std::unique_ptr<v1::CollectionService::Stub> stub_;
  std::string token_;
};

// Team beta uploading alpha's bytes learns nothing (already_present false,
// the whole upload read); beta submitting the hash of a bundle only alpha
// uploaded is NOT_FOUND and stores nothing; alpha's normal job still runs.
TEST(HostileBundlesTest, NoExistenceOracleAndNoCrossTeamReference) {
  Cluster c;
  const std::string tokens = WriteTokens(c.dir);
  c.agent_flags.insert(c.agent_flags.end(),
                       {"--token-file", (c.dir.path() / "agent.token").string(), "--host", "a1"});
  c.Start("0-3", {"--tokens-file", tokens});
  Caller alpha(c.address, "alpha-token"), beta(c.address, "beta-token");
  const std::string tar = *PackBundle(Operator(), 64 << 20);
  v1::UploadBundleResponse up;
  ASSERT_TRUE(alpha.Upload(tar, &up).ok());
  EXPECT_FALSE(up.already_present());
  ASSERT_TRUE(beta.Upload(tar, &up).ok());
  EXPECT_FALSE(up.already_present()) << "beta learned that alpha has these bytes";
  ASSERT_TRUE(beta.Upload(tar, &up).ok());
  EXPECT_TRUE(up.already_present());  // beta's own upload now

  const std::string only_alpha = tar + std::string(1024, '\0');  // a valid tar, other bytes
  ASSERT_TRUE(alpha.Upload(only_alpha, &up).ok());
  v1::SubmitCollectionResponse sub;
  const grpc::Status foreign = beta.Submit(Sha256Hex(only_alpha), &sub);
  EXPECT_EQ(foreign.error_code(), grpc::StatusCode::NOT_FOUND) << foreign.error_message();
  v1::ListCollectionsResponse list;
  ASSERT_TRUE(beta.List(&list).ok());
  EXPECT_EQ(list.collections_size(), 0);

  auto r = c.Cli({"--token", "alpha-token", "submit", "--quick", Operator(), "--op-name", kKernel,
                  "--repeats", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.err << "\nagent log:\n" << c.agent->Log();
}

// A token created in the database turns authentication on without any
// flag: an anonymous call is refused, the token's call served.
TEST(HostileDefaultsTest, DatabaseTokenTurnsAuthenticationOn) {
  Cluster c;
  c.db = "sqlite:" + (c.dir.path() / "auth.db").string();
  c.insecure_no_auth = false;
  auto created = RunCommand({(BuildDir() / "bin/npuperf-server").string(), "token", "create",
                             "--team", "alpha", "--db", c.db},
                            c.dir.path());
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string token(created.out.substr(0, created.out.find('\n')));
  c.Start("");
  v1::ListCollectionsResponse list;
  EXPECT_EQ(Caller(c.address, "").List(&list).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Caller(c.address, token).List(&list).ok());
}

std::vector<std::string> ServerArgv(const TempDir& dir, std::vector<std::string> flags) {
  std::vector<std::string> argv = {(BuildDir() / "bin/npuperf-server").string(), "--db",
                                   "sqlite:" + (dir.path() / "s.db").string(), "--metrics-listen",
                                   "127.0.0.1:0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

TEST(HostileDefaultsTest, InsecureAndPlaintextOnlyWhereSafe) {
  TempDir dir;
  auto open = RunCommand(ServerArgv(dir, {"--listen", "0.0.0.0:0", "--insecure-no-auth"}),
                         dir.path(), {}, std::chrono::seconds(20));
  EXPECT_NE(open.exit_code, 0);
  EXPECT_NE(open.err.find("--insecure-no-auth"), std::string::npos) << open.err;
  auto plain = RunCommand(ServerArgv(dir, {"--listen", "0.0.0.0:0"}), dir.path(), {},
                          std::chrono::seconds(20));
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.err.find("--allow-plaintext"), std::string::npos) << plain.err;

  auto s = Process::Start(ServerArgv(dir, {"--listen", "0.0.0.0:0", "--allow-plaintext"}),
                          dir.path() / "server.log");
  ASSERT_TRUE(s.ok()) << s.status();
  auto line = (*s)->WaitForLine("listening on", std::chrono::seconds(20));
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_NE((*s)->Log().find("--allow-plaintext: bearer tokens cross the network in clear"),
            std::string::npos);
  auto metrics = HttpGet(AddressAfter(*line, "metrics"), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->find("npuperf_server_plaintext_listener 1"), std::string::npos);
  EXPECT_EQ((*s)->Stop(), 0);
}

// The SQLite file holds every team's bundles: 0600, in a 0700 directory.
TEST(HostileDefaultsTest, SqliteFileIsPrivate) {
  Cluster c;
  c.db = "sqlite:" + (c.dir.path() / "private" / "npuperf.db").string();
  c.Start("");
  struct stat st {};
  ASSERT_EQ(::stat((c.dir.path() / "private").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((c.dir.path() / "private" / "npuperf.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Slow clients on /metrics (the exposer had 2 threads) no longer starve
// the probes: six idle connections, and /metrics still answers at once.
TEST(HostileDefaultsTest, SlowMetricsClientsDoNotBlockProbes) {
  Cluster c;
  c.Start("");
  std::vector<int> idle;
  for (int i = 0; i < 6; ++i) {
    idle.push_back(ConnectTcp(c.metrics_address));  // never sends a byte
    ASSERT_GE(idle.back(), 0);
  }
  const auto t0 = WallClock().MonotonicNow();
  auto metrics = HttpGet(c.metrics_address, "/metrics");
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_LT(WallClock().MonotonicNow() - t0, std::chrono::seconds(3));
  for (int fd : idle) ::close(fd);
}

}  // namespace
}  // namespace npuperf::testing
