// The one RPC wrapper: no exception leaves a handler (issue 13).
#include "server/service/serve.h"

#include <stdexcept>

#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {
namespace {

class ServeTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteStore> store_ = *SqliteStore::Open(":memory:");
  Authenticator auth_{*store_, {}, /*required=*/false};
  prometheus::Registry registry_;
  ServerMetrics metrics_{registry_};
  testing::FakeClock clock_;
  ServiceContext sc_{auth_, metrics_, clock_};
  grpc::ServerContext ctx_;
};

TEST_F(ServeTest, AnExceptionBecomesInternalWithoutItsTextAndIsCounted) {
  const grpc::Status s =
      Serve(sc_, "Boom", &ctx_, PrincipalKind::kTeam, [](const Principal&) -> absl::Status {
        throw std::invalid_argument("stoll: /var/lib/npuperf/secret.db");
      });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message().find("secret"), std::string::npos) << s.error_message();
  EXPECT_EQ(metrics_.handler_exceptions.Value(), 1);
}

TEST_F(ServeTest, AnythingThrownIsCaught) {
  const grpc::Status s = Serve(sc_, "Boom", &ctx_, PrincipalKind::kTeam,
                               [](const Principal&) -> absl::Status { throw 42; });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(metrics_.handler_exceptions.Value(), 1);
}

TEST_F(ServeTest, AStatusPassesThroughUncounted) {
  const grpc::Status s = Serve(sc_, "Fine", &ctx_, PrincipalKind::kTeam,
                               [](const Principal&) { return absl::InvalidArgumentError("bad"); });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(metrics_.handler_exceptions.Value(), 0);
}

}  // namespace
}  // namespace npuperf::server
