// CompareImplementations through a real gRPC server on port 0 (the Serve wrapper: bearer tokens,
// team scoping, status mapping) over rounds stored the way agents store them (collection ->
// claim -> result) in SQLite: the pairs and the two scopes, another team's collection NOT_FOUND,
// an unfinished one FAILED_PRECONDITION, bad pairs and a 10,000-line pair map INVALID_ARGUMENT.
#include <map>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/assignment.h"
#include "server/service/query_service.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {
namespace {

constexpr char kAlphaToken[] = "alpha-token";
constexpr char kBetaToken[] = "beta-token";

// What one operator measured: Task Duration mean and AI Core time, per case.
struct Measured {
  double task_us = 0;
  double core_us = 0;
  std::string shape = "8x1024";
};
using Operators = std::map<std::string, std::map<std::string, Measured>>;

class QueryServiceImplementationsTest : public ::testing::Test {
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
  }

  void TearDown() override { server_->Shutdown(); }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    ctx->set_deadline(real_clock_.SystemNow() + std::chrono::seconds(10));
    return ctx;
  }

  // A collection of team alpha with one job per operator and case; `finish`
  // runs them all (else they stay queued).
  void AddCollection(const std::string& id, const Operators& ops, bool finish = true) {
    NewCollection c;
    c.id = id;
    c.team = "alpha";
    c.spec.set_max_concurrent_jobs(64);
    for (const auto& [op, cases] : ops) {
      auto* spec = c.spec.add_operators();
      spec->set_name(op);
      spec->set_bundle_sha256("sha-" + op);
      spec->set_runner("run.py");
      for (const auto& [case_id, m] : cases) c.jobs.push_back({op, case_id, "kernel_" + op});
    }
    c.now_ms = NowMs();
    ASSERT_TRUE(store_->InsertCollection(c).ok());
    for (size_t i = 0; finish && i < c.jobs.size(); ++i) {
      clock_.Advance(std::chrono::seconds(1));
      auto a = store_->ClaimJob(Claim(), ChooseClaim);
      ASSERT_TRUE(a.ok() && a->has_value()) << a.status();
      const v1::JobAssignment& job = **a;
      const Measured m = ops.at(job.operator_name()).at(job.case_id());
      ASSERT_TRUE(store_->RecordResult(Success(job, m)).ok());
    }
  }

  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }

  ClaimRequest Claim() {
    ClaimRequest req;
    req.agent_id = "agent-1";
    req.host = "host-1";
    req.devices = {{0, "Ascend910B2"}};
    req.now_ms = NowMs();
    req.lease_ttl_ms = 60'000;
    req.lease_secret = "secret";
    return req;
  }

  // Seven samples at task_us x (1 +- up to 0.6 %), mean task_us.
  AttemptResult Success(const v1::JobAssignment& job, const Measured& m) {
    AttemptResult r;
    r.agent_id = "agent-1";
    r.ref = {job.job_id(), job.attempt(), job.fencing_token(), job.lease_secret()};
    r.update_uuid = absl::StrCat("u-", job.job_id());
    r.outcome = v1::ATTEMPT_OUTCOME_SUCCEEDED;
    v1::Evidence& e = r.evidence;
    e.set_operator_name(job.operator_name());
    e.set_case_id(job.case_id());
    e.set_op_name(job.op_name());
    for (double f : {1.0, 1.002, 0.998, 1.004, 0.996, 1.006, 0.994}) {
      e.mutable_duration()->add_samples_us(m.task_us * f);
    }
    e.mutable_duration()->set_aggregate_us(m.task_us);
    e.set_aicore_time_us(m.core_us);
    e.mutable_fingerprint()->set_soc("Ascend910B2");
    e.mutable_fingerprint()->set_mode("standard");
    e.mutable_fingerprint()->set_case_shape(m.shape);
    r.metrics = {{"duration", m.task_us}};
    r.now_ms = NowMs();
    return r;
  }

  grpc::Status Compare(const std::string& token, const v1::CompareImplementationsRequest& req,
                       v1::CompareImplementationsResponse* resp) {
    return stub_->CompareImplementations(As(token).get(), req, resp);
  }

  std::unique_ptr<SqliteStore> store_ = *SqliteStore::Open(":memory:");
  Authenticator auth_{*store_,
                      {{Sha256Hex(kAlphaToken), {PrincipalKind::kTeam, "alpha"}},
                       {Sha256Hex(kBetaToken), {PrincipalKind::kTeam, "beta"}}},
                      /*required=*/true};
  prometheus::Registry registry_;
  ServerMetrics metrics_{registry_};
  testing::FakeClock clock_;
  RealClock real_clock_;
  ReadQueries reads_{*store_};
  ComparisonQueries comparisons_{*store_, clock_};
  QueryServiceImpl service_{reads_, comparisons_, ServiceContext{auth_, metrics_, clock_},
                            v1::GetServerInfoResponse()};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

v1::CompareImplementationsRequest Request(const std::string& map) {
  v1::CompareImplementationsRequest req;
  req.set_base_collection_id("asc");
  req.set_candidate_collection_id("pto");
  req.set_pair_map(map);
  return req;
}

TEST_F(QueryServiceImplementationsTest, PairsOperatorsAndReportsBothScopes) {
  AddCollection("asc", {{"rms_ascendc", {{"p0", {100, 80}}, {"p1", {200, 150}}}},
                        {"rope_ascendc", {{"p0", {50, 40}}}},
                        {"apply_adam", {{"p0", {30, 20}}}}});
  AddCollection("pto", {{"rms", {{"p0", {50, 40}}, {"p1", {150, 75}}}},
                        {"rope", {{"p0", {60, 20}}, {"wide", {10, 5}}}},
                        {"apply_adam", {{"p0", {30, 20}}}}});
  v1::CompareImplementationsResponse resp;
  const grpc::Status s = Compare(
      kAlphaToken, Request("# PyPTO=Ascend C\nrms=rms_ascendc\nrope=rope_ascendc\n"), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.base_collection_id(), "asc");
  ASSERT_EQ(resp.operators_size(), 2);
  const auto& rms = resp.operators(0);
  EXPECT_EQ(rms.base_operator(), "rms_ascendc");
  EXPECT_EQ(rms.scenarios(), 2);
  EXPECT_NEAR(rms.task_duration_ratio(), std::sqrt(0.5 * 0.75), 1e-9);
  EXPECT_NEAR(rms.core_ratio(), std::sqrt(0.5 * 0.5), 1e-9);
  EXPECT_EQ(rms.task_duration_counts().improved(), 2);
  const auto& rope = resp.operators(1);
  EXPECT_EQ(rope.scenarios(), 1);
  EXPECT_EQ(rope.not_compared(), 1);  // "wide" has no base round
  EXPECT_NEAR(rope.task_duration_ratio(), 1.2, 1e-9);
  EXPECT_NEAR(rope.core_ratio(), 0.5, 1e-9);
  EXPECT_EQ(rope.task_duration_counts().regressed(), 1);
  EXPECT_EQ(resp.counts().regressed(), 1);
  EXPECT_EQ(resp.counts().unmatched(), 1);
  EXPECT_NEAR(resp.arithmetic_mean().task_duration_ratio(), (std::sqrt(0.375) + 1.2) / 2, 1e-9);
  EXPECT_NEAR(resp.geometric_mean().core_ratio(), std::sqrt(0.5 * 0.5), 1e-9);
  // apply_adam is in both collections but named by no pair: listed on both sides.
  ASSERT_EQ(resp.unpaired_size(), 2);
  EXPECT_EQ(resp.unpaired(0).operator_name(), "apply_adam");
  // Without pairs, namesakes pair: apply_adam only.
  ASSERT_TRUE(Compare(kAlphaToken, Request(""), &resp).ok());
  ASSERT_EQ(resp.operators_size(), 1);
  EXPECT_EQ(resp.operators(0).candidate_operator(), "apply_adam");
  EXPECT_NEAR(resp.operators(0).task_duration_ratio(), 1.0, 1e-9);
}

TEST_F(QueryServiceImplementationsTest, OneCollectionHoldingBothImplementations) {
  AddCollection("both", {{"rms_ascendc", {{"p0", {100, 80}}}},
                         {"rms", {{"p0", {50, 40}}}},
                         {"other", {{"p0", {5, 4}}}}});
  v1::CompareImplementationsRequest req = Request("rms=rms_ascendc");
  req.set_base_collection_id("both");
  req.set_candidate_collection_id("both");
  v1::CompareImplementationsResponse resp;
  ASSERT_TRUE(Compare(kAlphaToken, req, &resp).ok());
  ASSERT_EQ(resp.operators_size(), 1);
  EXPECT_NEAR(resp.operators(0).task_duration_ratio(), 0.5, 1e-9);
  EXPECT_EQ(resp.unpaired_size(), 0);
  req.clear_pair_map();
  const grpc::Status s = Compare(kAlphaToken, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "needs pairs")) << s.error_message();
}

TEST_F(QueryServiceImplementationsTest, ShapeMismatchIsListedNeverCompared) {
  AddCollection("asc", {{"rms_ascendc", {{"p0", {100, 80}}}}});
  AddCollection("pto", {{"rms", {{"p0", {10, 5, "16x4096"}}}}});
  v1::CompareImplementationsResponse resp;
  ASSERT_TRUE(Compare(kAlphaToken, Request("rms=rms_ascendc"), &resp).ok());
  ASSERT_EQ(resp.cases_size(), 1);
  EXPECT_EQ(resp.cases(0).status(), v1::IMPLEMENTATION_CASE_SHAPE_MISMATCH);
  EXPECT_TRUE(absl::StrContains(resp.cases(0).reason(), "case_shape (8x1024 vs 16x4096)"))
      << resp.cases(0).reason();
  EXPECT_FALSE(resp.cases(0).has_task_duration());
  EXPECT_EQ(resp.counts().not_comparable(), 1);
  EXPECT_EQ(resp.operators(0).scenarios(), 0);
  EXPECT_EQ(resp.operators(0).not_compared(), 1);
  EXPECT_EQ(resp.arithmetic_mean().task_duration_operators(), 0);
}

TEST_F(QueryServiceImplementationsTest, AnotherTeamsCollectionIsNotFound) {
  AddCollection("asc", {{"rms_ascendc", {{"p0", {100, 80}}}}});
  AddCollection("pto", {{"rms", {{"p0", {50, 40}}}}});
  v1::CompareImplementationsResponse resp;
  EXPECT_EQ(Compare(kBetaToken, Request("rms=rms_ascendc"), &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Compare("", Request("rms=rms_ascendc"), &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(QueryServiceImplementationsTest, AnUnfinishedCollectionIsRefused) {
  AddCollection("asc", {{"rms_ascendc", {{"p0", {100, 80}}}}});
  AddCollection("pto", {{"rms", {{"p0", {50, 40}}}}}, /*finish=*/false);
  v1::CompareImplementationsResponse resp;
  const grpc::Status s = Compare(kAlphaToken, Request("rms=rms_ascendc"), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "candidate_collection_id")) << s.error_message();
}

TEST_F(QueryServiceImplementationsTest, BadRequestsNameTheirFields) {
  v1::CompareImplementationsResponse resp;
  grpc::Status s = Compare(kAlphaToken, v1::CompareImplementationsRequest(), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "base_collection_id")) << s.error_message();
  std::string map;
  for (int i = 0; i < 10'000; ++i) absl::StrAppend(&map, "op", i, "=op", i, "_ascendc\n");
  s = Compare(kAlphaToken, Request(map), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "pair_map")) << s.error_message();
  v1::CompareImplementationsRequest alpha = Request("");
  alpha.mutable_options()->set_alpha(3);
  s = Compare(kAlphaToken, alpha, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "options.alpha")) << s.error_message();
}

}  // namespace
}  // namespace npuperf::server
