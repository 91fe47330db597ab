// The server's standard grpc.health.v1 service and reflection.
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
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
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
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

TEST(ServerHealthTest, UnimplementedRpcsNameTheirIssue) {
  Cluster c;
  c.Start("");
  auto channel = grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials());
  auto queries = npuperf::v1::QueryService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  npuperf::v1::CompareRoundsResponse resp;
  auto s = queries->CompareRounds(&ctx, npuperf::v1::CompareRoundsRequest(), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_NE(s.error_message().find("comparisons"), std::string::npos);
}

}  // namespace
}  // namespace npuperf::testing
