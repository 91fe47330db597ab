// Agent client certificates through the real binaries (docs/security.md,
// "Agent client certificates"): a throwaway CA made with openssl signs the
// server's certificate and one for each of agents h1 and h2. The server runs
// TLS with --tls-client-ca and --require-agent-cert. The agent of h1 with its
// own certificate runs a job; with h2's certificate, or none, it is refused
// (its log says why, the refusal is counted); the CLI without a certificate
// still submits and lists.
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using std::chrono::seconds;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";
constexpr char kTeamToken[] = "npt_team_alpha_cert_0123456789ab";
constexpr char kH1Token[] = "npt_agent_h1_cert_0123456789abcd";

// Runs openssl in dir; fails the test (not skips) when it is missing.
void OpenSsl(const std::filesystem::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  auto r = RunCommand(args, dir, {}, seconds(60));
  ASSERT_EQ(r.exit_code, 0) << "openssl (Debian package openssl, deploy/install-deps.sh): " << r.out
                            << r.err;
}

// name.key and name.pem signed by ca, with the subjectAltName san and the
// extended key usage `usage`.
void IssueCert(const std::filesystem::path& dir, const std::string& name, const std::string& san,
               const std::string& usage) {
  std::ofstream(dir / (name + ".ext"))
      << "subjectAltName=" << san << "\nextendedKeyUsage=" << usage << "\n";
  OpenSsl(dir, {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-subj", "/CN=" + name, "-keyout", name + ".key", "-out", name + ".csr"});
  OpenSsl(dir, {"x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "1", "-extfile", name + ".ext", "-out", name + ".pem"});
  std::error_code ec;  // the key as the agent wants it (0600)
  std::filesystem::permissions(dir / (name + ".key"), std::filesystem::perms(0600), ec);
}

// The CA, the server's certificate (localhost) and the agents' (h1, h2).
void MakePki(const std::filesystem::path& dir) {
  OpenSsl(dir,
          {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-days", "1", "-subj", "/CN=npuperf test CA", "-keyout", "ca.key", "-out", "ca.pem"});
  IssueCert(dir, "server", "DNS:localhost,IP:127.0.0.1", "serverAuth");
  IssueCert(dir, "h1", "DNS:h1", "clientAuth");
  IssueCert(dir, "h2", "DNS:h2", "clientAuth");
}

TEST(AgentCertificateTest, OnlyTheAgentsOwnCertificateIsAccepted) {
  Cluster c;
  const auto d = c.dir.path();
  MakePki(d);
  if (::testing::Test::HasFatalFailure()) return;
  std::ofstream(d / "tokens") << "team alpha " << Sha256Hex(kTeamToken) << "\nagent h1 "
                              << Sha256Hex(kH1Token) << "\n";
  std::ofstream(d / "h1.token") << kH1Token << "\n";
  std::filesystem::permissions(d / "h1.token", std::filesystem::perms(0600));
  c.cli_token = kTeamToken;
  c.cli_flags = {"--tls-ca", (d / "ca.pem").string()};
  c.Start("", {"--tokens-file", (d / "tokens").string(), "--tls-cert", (d / "server.pem").string(),
               "--tls-key", (d / "server.key").string(), "--tls-client-ca", (d / "ca.pem").string(),
               "--require-agent-cert"});
  const std::vector<std::string> as_h1 = {"--run-as-self", "--token-file",
                                          (d / "h1.token").string(), "--host", "h1"};
  const std::map<std::string, std::string> ca = {{"NPUPERF_TLS_CA", (d / "ca.pem").string()}};

  // h1's token with h2's certificate: refused, and the agent's log says why.
  c.agent_flags = as_h1;
  c.agent_flags.insert(c.agent_flags.end(), {"--tls-cert", (d / "h2.pem").string(), "--tls-key",
                                             (d / "h2.key").string()});
  auto foreign = c.LaunchAgent("0", "foreign", ca);
  ASSERT_NE(foreign, nullptr);
  auto refused = foreign->WaitForLine("register failed", seconds(20));
  ASSERT_TRUE(refused.ok()) << refused.status() << foreign->Log();
  EXPECT_NE(refused->find("PERMISSION_DENIED"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("names agent 'h2'"), std::string::npos) << *refused;
  foreign->Stop();
  // Without a certificate: refused as unauthenticated.
  c.agent_flags = as_h1;
  auto bare = c.LaunchAgent("0", "bare", ca);
  ASSERT_NE(bare, nullptr);
  refused = bare->WaitForLine("register failed", seconds(20));
  ASSERT_TRUE(refused.ok()) << refused.status() << bare->Log();
  EXPECT_NE(refused->find("UNAUTHENTICATED"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("--require-agent-cert"), std::string::npos) << *refused;
  bare->Stop();

  // Its own certificate (from the environment): a job runs end to end.
  c.agent_flags = as_h1;
  auto env = ca;
  env["NPUPERF_TLS_CERT"] = (d / "h1.pem").string();
  env["NPUPERF_TLS_KEY"] = (d / "h1.key").string();
  c.agent = c.StartAgent("0", "agent", env);
  ASSERT_NE(c.agent, nullptr);
  auto submit = c.Cli({"--format", "json", "submit", "--quick", "--repeats", "1", "--warm-up", "0",
                       (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(), "--op-name",
                       kKernel, "--no-wait"});
  v1::Collection submitted;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(submit.out, &submitted).ok())
      << submit.out << submit.err;
  const v1::Collection done = c.WaitFor(submitted.id(), Terminal, seconds(120));
  EXPECT_EQ(done.state(), v1::COLLECTION_STATE_SUCCEEDED) << done.DebugString() << c.agent->Log();
  auto list = c.Cli({"list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find(submitted.id()), std::string::npos) << list.out;

  auto metrics = HttpGet(c.metrics_address, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_GE(AgentCallsRefused(*metrics, "RegisterAgent", "cert_mismatch"), 1) << *metrics;
  EXPECT_GE(AgentCallsRefused(*metrics, "RegisterAgent", "no_client_cert"), 1);
  c.agent->Stop();
  EXPECT_EQ(c.server->Stop(), 0);
}

// A server asked for client certificates without TLS, or to require them
// without a CA, is a flag error naming the flag.
TEST(AgentCertificateTest, ClientCertificateFlagsNeedTheirPrerequisites) {
  TempDir dir;
  const std::string server = (BuildDir() / "bin/npuperf-server").string();
  const std::string db = "sqlite:" + (dir.path() / "s.db").string();
  auto no_tls =
      RunCommand({server, "--tls-client-ca", "ca.pem", "--db", db}, dir.path(), {}, seconds(20));
  EXPECT_NE(no_tls.exit_code, 0);
  EXPECT_NE((no_tls.out + no_tls.err).find("--tls-cert"), std::string::npos) << no_tls.err;
  auto no_ca =
      RunCommand({server, "--require-agent-cert", "--db", db}, dir.path(), {}, seconds(20));
  EXPECT_NE(no_ca.exit_code, 0);
  EXPECT_NE((no_ca.out + no_ca.err).find("--tls-client-ca"), std::string::npos) << no_ca.err;
}

}  // namespace
}  // namespace npuperf::testing
