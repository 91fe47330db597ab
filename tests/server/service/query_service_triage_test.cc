// TriageRegression and GetRegression through a real gRPC server on port 0 (the Serve wrapper:
// bearer tokens, status mapping, metrics): a caller without a token is UNAUTHENTICATED, another
// team's regression is NOT_FOUND, the loser of a race FAILED_PRECONDITION naming the current
// state, and bad fields INVALID_ARGUMENT naming each field.
#include <memory>

#include "absl/strings/match.h"
#include "common/sha256.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/triage_rules.h"
#include "server/service/query_service.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {
namespace {

constexpr char kAlphaToken[] = "alpha-token";
constexpr char kBetaToken[] = "beta-token";

class QueryServiceTriageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::QueryService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
    auto opened = store_->ObserveRegressions(
        {{{"alpha", "add", "p0", "branch=main", kDurationRule}, true, 10}}, 1000);
    ASSERT_TRUE(opened.ok()) << opened.status();
    id_ = (*opened)[0].id;
  }

  void TearDown() override { server_->Shutdown(); }

  // A context with team token `token` (none when empty) and a deadline.
  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    ctx->set_deadline(real_clock_.SystemNow() + std::chrono::seconds(10));
    return ctx;
  }

  grpc::Status Triage(const std::string& token, int64_t id, v1::RegressionState expected,
                      v1::RegressionState next, v1::TriageRegressionResponse* resp) {
    v1::TriageRegressionRequest req;
    req.set_id(id);
    req.set_expected_state(expected);
    req.set_new_state(next);
    req.set_note("seen");
    return stub_->TriageRegression(As(token).get(), req, resp);
  }

  std::unique_ptr<SqliteStore> store_ = *SqliteStore::Open(":memory:");
  Authenticator auth_{*store_,
                      {{Sha256Hex(kAlphaToken), {PrincipalKind::kTeam, "alpha"}},
                       {Sha256Hex(kBetaToken), {PrincipalKind::kTeam, "beta"}}},
                      /*required=*/true};
  prometheus::Registry registry_;
  ServerMetrics metrics_{registry_};
  testing::FakeClock clock_;  // the server's
  RealClock real_clock_;      // the client calls' deadlines
  ReadQueries reads_{*store_};
  ComparisonQueries comparisons_{*store_, clock_};
  QueryServiceImpl service_{reads_, comparisons_, ServiceContext{auth_, metrics_, clock_},
                            v1::GetServerInfoResponse()};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
  int64_t id_ = 0;
};

TEST_F(QueryServiceTriageTest, ATeamTriagesItsRegressionAndSeesTheTransitions) {
  v1::TriageRegressionResponse moved;
  const grpc::Status s = Triage(kAlphaToken, id_, v1::REGRESSION_STATE_DETECTED,
                                v1::REGRESSION_STATE_ACKNOWLEDGED, &moved);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(moved.regression().state(), v1::REGRESSION_STATE_ACKNOWLEDGED);
  v1::GetRegressionRequest get;
  get.set_id(id_);
  v1::GetRegressionResponse got;
  ASSERT_TRUE(stub_->GetRegression(As(kAlphaToken).get(), get, &got).ok());
  ASSERT_EQ(got.transitions_size(), 2);
  EXPECT_EQ(got.transitions(1).actor(), "alpha");
  EXPECT_EQ(got.transitions(1).note(), "seen");
  EXPECT_EQ(got.transitions(1).at().seconds(), ToUnixMillis(clock_.SystemNow()) / 1000);
}

TEST_F(QueryServiceTriageTest, WithoutATokenTheCallIsUnauthenticated) {
  v1::TriageRegressionResponse resp;
  EXPECT_EQ(Triage("", id_, v1::REGRESSION_STATE_DETECTED, v1::REGRESSION_STATE_WONT_FIX, &resp)
                .error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::GetRegressionRequest get;
  get.set_id(id_);
  v1::GetRegressionResponse got;
  EXPECT_EQ(stub_->GetRegression(As("").get(), get, &got).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(QueryServiceTriageTest, AnotherTeamsRegressionIsNotFound) {
  v1::TriageRegressionResponse resp;
  EXPECT_EQ(
      Triage(kBetaToken, id_, v1::REGRESSION_STATE_DETECTED, v1::REGRESSION_STATE_WONT_FIX, &resp)
          .error_code(),
      grpc::StatusCode::NOT_FOUND);
  v1::GetRegressionRequest get;
  get.set_id(id_);
  v1::GetRegressionResponse got;
  EXPECT_EQ(stub_->GetRegression(As(kBetaToken).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(QueryServiceTriageTest, TheLoserOfARaceIsToldTheCurrentState) {
  v1::TriageRegressionResponse resp;
  ASSERT_TRUE(Triage(kAlphaToken, id_, v1::REGRESSION_STATE_DETECTED,
                     v1::REGRESSION_STATE_ACKNOWLEDGED, &resp)
                  .ok());
  const grpc::Status lost = Triage(kAlphaToken, id_, v1::REGRESSION_STATE_DETECTED,
                                   v1::REGRESSION_STATE_FALSE_POSITIVE, &resp);
  EXPECT_EQ(lost.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(lost.error_message(), "is ACKNOWLEDGED, not DETECTED"))
      << lost.error_message();
}

TEST_F(QueryServiceTriageTest, BadFieldsAreInvalidArgumentNamingEachField) {
  v1::TriageRegressionRequest req;
  req.set_id(-1);
  req.set_expected_state(static_cast<v1::RegressionState>(77));
  req.set_new_state(v1::REGRESSION_STATE_UNSPECIFIED);
  req.set_note(std::string(2000, 'x'));
  v1::TriageRegressionResponse resp;
  const grpc::Status s = stub_->TriageRegression(As(kAlphaToken).get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  for (const char* field : {"id", "expected_state", "new_state", "note"}) {
    EXPECT_TRUE(absl::StrContains(s.error_message(), field)) << field << ": " << s.error_message();
  }
  v1::GetRegressionResponse got;
  EXPECT_EQ(
      stub_->GetRegression(As(kAlphaToken).get(), v1::GetRegressionRequest(), &got).error_code(),
      grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace npuperf::server
