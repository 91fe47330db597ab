// The server's standard grpc.health.v1 service and reflection, and its
// plain-HTTP /healthz on the metrics port.
#include <signal.h>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "npuperf/v1/agent_service.grpc.pb.h"
#include "npuperf/v1/query_service.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

TEST(ServerHealthTest, HealthServingAndReflectionListsTheServices) {
  Cluster c;
  c.Start("");
  auto channel = grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials());
  {
    auto health = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
  auto stream = reflection->ServerReflectionInfo(&ctx);
  grpc::reflection::v1alpha::ServerReflectionRequest req;
  req.set_list_services("");
  ASSERT_TRUE(stream->Write(req));
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  std::set<std::string> names;
  for (const auto& s : resp.list_services_response().service()) names.insert(s.name());
  EXPECT_TRUE(stream->Finish().ok());
  for (const char* want : {"npuperf.v1.CollectionService", "npuperf.v1.QueryService",
                           "npuperf.v1.AgentService", "grpc.health.v1.Health"}) {
    EXPECT_TRUE(names.contains(want)) << want;
  }
  EXPECT_EQ(c.server->Stop(), 0);
}

grpc::health::v1::HealthCheckResponse::ServingStatus HealthOf(grpc::Channel& channel,
                                                              const std::string& service,
                                                              grpc::StatusCode* code) {
  auto health = grpc::health::v1::Health::NewStub(
      std::shared_ptr<grpc::Channel>(&channel, [](grpc::Channel*) {}));
  grpc::ClientContext ctx;
  ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  grpc::health::v1::HealthCheckResponse resp;
  *code = health->Check(&ctx, req, &resp).error_code();
  return resp.status();
}

// Generic tools: health answers per service name, reflection serves the
// health service's file, GetServerInfo names the build.
TEST(ServerHealthTest, HealthPerServiceReflectionOfHealthAndServerInfo) {
  Cluster c;
  c.Start("");
  auto channel = grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials());
  for (const char* name :
       {"npuperf.v1.CollectionService", "npuperf.v1.QueryService", "npuperf.v1.AgentService", ""}) {
    grpc::StatusCode code;
    EXPECT_EQ(HealthOf(*channel, name, &code), grpc::health::v1::HealthCheckResponse::SERVING)
        << name;
    EXPECT_EQ(code, grpc::StatusCode::OK) << name;
  }
  grpc::StatusCode code;
  HealthOf(*channel, "npuperf.v1.NoSuchService", &code);
  EXPECT_EQ(code, grpc::StatusCode::NOT_FOUND);

  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
  auto stream = reflection->ServerReflectionInfo(&ctx);
  grpc::reflection::v1alpha::ServerReflectionRequest req;
  req.set_file_containing_symbol("grpc.health.v1.Health");
  ASSERT_TRUE(stream->Write(req));
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  EXPECT_FALSE(resp.has_error_response()) << resp.error_response().error_message();
  EXPECT_EQ(resp.file_descriptor_response().file_descriptor_proto_size(), 1);
  EXPECT_TRUE(stream->Finish().ok());

  grpc::ClientContext info_ctx;
  info_ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(v1::QueryService::NewStub(channel)
                  ->GetServerInfo(&info_ctx, v1::GetServerInfoRequest(), &info)
                  .ok());
  EXPECT_FALSE(info.version().empty());
  EXPECT_FALSE(info.commit().empty());
  EXPECT_GE(info.schema_version(), 7);
  EXPECT_EQ(info.database(), "sqlite");
  EXPECT_GE(info.features_size(), 1);
  // The CLI prints both sides; without a server it says so and exits 5.
  auto version = c.Cli({"version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_NE(version.out.find("client   npuperf "), std::string::npos) << version.out;
  EXPECT_NE(version.out.find(absl::StrCat("schema ", info.schema_version(), " (sqlite)")),
            std::string::npos)
      << version.out;
  EXPECT_EQ(c.server->Stop(), 0);
  auto down = c.Cli({"version"});
  EXPECT_EQ(down.exit_code, 5) << down.out << down.err;
  EXPECT_NE(down.out.find("client   npuperf "), std::string::npos) << down.out;
  EXPECT_NE(down.err.find("unreachable"), std::string::npos) << down.err;
}

// Every RPC is implemented; a malformed comparison names its bad fields.
TEST(ServerHealthTest, CompareRoundsNamesItsBadFields) {
  Cluster c;
  c.Start("");
  auto channel = grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials());
  auto queries = npuperf::v1::QueryService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
  npuperf::v1::CompareRoundsResponse resp;
  auto s = queries->CompareRounds(&ctx, npuperf::v1::CompareRoundsRequest(), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("baseline_round_id"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("candidate_round_id"), std::string::npos) << s.error_message();
}

// TLS on the gRPC port (--tls-cert/--tls-key): the CLI and the agent connect
// with --tls-ca (or NPUPERF_TLS_CA); a plaintext client gets nowhere.
TEST(ServerTlsTest, TlsClientsConnectAndPlaintextClientsFail) {
  Cluster c;
  const std::string cert = (c.dir.path() / "server.crt").string();
  const std::string key = (c.dir.path() / "server.key").string();
  auto gen = RunCommand({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                         "-subj", "/CN=localhost", "-addext",
                         "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert},
                        c.dir.path());
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  c.Start("", {"--tls-cert", cert, "--tls-key", key});
  auto tls = c.Cli({"--tls-ca", cert, "list"});
  EXPECT_EQ(tls.exit_code, 0) << tls.err;
  auto plain = c.Cli({"--timeout", "5", "list"});
  EXPECT_NE(plain.exit_code, 0) << plain.out;
  EXPECT_NE(plain.err.find("UNAVAILABLE"), std::string::npos) << plain.err;
  auto agent =
      c.StartAgent("0-1", "agent", {{"NPUPERF_TLS_CA", cert}});  // waits for "registered as"
  ASSERT_NE(agent, nullptr);
  auto metrics = HttpGet(c.metrics_address, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(
      metrics->find("npuperf_server_grpc_requests_total{code=\"OK\",method=\"RegisterAgent\"} 1"),
      std::string::npos)
      << *metrics;
  EXPECT_NE(
      metrics->find("npuperf_server_grpc_requests_total{code=\"OK\",method=\"ListCollections\"} 1"),
      std::string::npos);
  agent->Stop();
  EXPECT_EQ(c.server->Stop(), 0);
}

// The web pages (/ui, issue 19) are on the metrics port of the real binary:
// without a session a page redirects to the login form, which answers 200;
// --no-ui leaves the port with /metrics and /healthz only.
TEST(ServerHealthTest, UiIsOnTheMetricsPortUnlessNoUi) {
  Cluster c;
  c.Start("");
  auto page = HttpGetResponse(c.metrics_address, "/ui/");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 303) << page->body;
  auto login = HttpGetResponse(c.metrics_address, "/ui/login");
  ASSERT_TRUE(login.ok()) << login.status();
  EXPECT_EQ(login->status, 200);
  EXPECT_NE(login->body.find("data-page=\"login\""), std::string::npos) << login->body;
  EXPECT_EQ(c.server->Stop(), 0);

  Cluster off;
  off.Start("", {"--no-ui"});
  auto none = HttpGetResponse(off.metrics_address, "/ui/login");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->status, 404);
  EXPECT_EQ(off.server->Stop(), 0);
}

// GET /healthz on the metrics port mirrors the gRPC health for probes that
// cannot speak the gRPC port's TLS: 200 SERVING, 503 NOT_SERVING while
// draining. The port serves nothing else but /metrics (no gRPC).
TEST(ServerHealthTest, HealthzOnTheMetricsPortFollowsTheDrain) {
  Cluster c;
  c.Start("");
  auto ok = HttpGetResponse(c.metrics_address, "/healthz");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->status, 200);
  EXPECT_NE(ok->body.find("\"SERVING\""), std::string::npos) << ok->body;
  auto other = HttpGetResponse(c.metrics_address, "/debug");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->status, 404) << other->body;
  auto on_metrics = grpc::CreateChannel(c.metrics_address, grpc::InsecureChannelCredentials());
  grpc::StatusCode code;
  HealthOf(*on_metrics, "", &code);
  EXPECT_NE(code, grpc::StatusCode::OK);

  // An AgentSession that sends nothing holds the drain open (up to the 10 s
  // grace): /healthz says 503 meanwhile.
  auto agents =
      v1::AgentService::NewStub(grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext session;
  auto stream = agents->AgentSession(&session);
  ASSERT_TRUE(c.server->WaitForLine("listening on", std::chrono::seconds(1)).ok());
  {  // the call is in flight once a unary call after it has been answered
    grpc::StatusCode served;
    HealthOf(*grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials()), "", &served);
    ASSERT_EQ(served, grpc::StatusCode::OK);
  }
  ASSERT_EQ(::kill(c.server->pid(), SIGTERM), 0);
  int status = 0;
  const auto deadline = WallClock().MonotonicNow() + std::chrono::seconds(8);
  while (status != 503 && WallClock().MonotonicNow() < deadline) {
    auto r = HttpGetResponse(c.metrics_address, "/healthz");
    if (r.ok()) status = r->status;
    WallClock().SleepFor(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(status, 503);
  session.TryCancel();
  stream->Finish();
  EXPECT_EQ(c.server->Stop(), 0);
}

TEST(ServerTlsTest, CertWithoutKeyIsAFlagError) {
  TempDir dir;
  auto r = RunCommand({(BuildDir() / "bin/npuperf-server").string(), "--tls-cert", "x.pem", "--db",
                       "sqlite:" + (dir.path() / "s.db").string()},
                      dir.path(), {}, std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find("--tls-key"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace npuperf::testing
