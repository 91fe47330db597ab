// `npuperf version` against the gmock QueryService stub.
#include "client/version_command.h"

#include <sstream>

#include "common/version.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"

namespace npuperf::testing {
namespace {

using ::testing::_;
using ::testing::DoAll;
using ::testing::Return;
using ::testing::SetArgPointee;

v1::GetServerInfoResponse Info(const std::string& version) {
  v1::GetServerInfoResponse info;
  info.set_version(version);
  info.set_commit("abc123");
  info.set_schema_version(7);
  info.set_database("sqlite");
  info.add_features("watch");
  info.add_features("golden_report");
  return info;
}

TEST(VersionCommandTest, PrintsTheClientAndTheServer) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetServerInfo(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Info(std::string(Version()))), Return(grpc::Status::OK)));
  std::ostringstream out, err;
  EXPECT_EQ(client::RunVersion(m.session(), out, err), client::kExitOk);
  EXPECT_EQ(out.str(), absl::StrCat("client   ", VersionLine("npuperf"),
                                    "\nserver   npuperf-server ", Version(),
                                    " (commit abc123), schema 7 (sqlite)\n"
                                    "features watch, golden_report\n"));
  EXPECT_EQ(err.str(), "");
}

TEST(VersionCommandTest, WarnsWhenTheReleasesDiffer) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetServerInfo(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Info("9.9.9")), Return(grpc::Status::OK)));
  std::ostringstream out, err;
  EXPECT_EQ(client::RunVersion(m.session(), out, err), client::kExitOk);
  EXPECT_NE(err.str().find("the server runs 9.9.9"), std::string::npos) << err.str();
}

TEST(VersionCommandTest, JsonHasBothSides) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.queries(), GetServerInfo(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Info("0.0.1")), Return(grpc::Status::OK)));
  std::ostringstream out, err;
  EXPECT_EQ(client::RunVersion(m.session(), out, err), client::kExitOk);
  auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["client"]["version"], std::string(Version()));
  EXPECT_EQ(j["server"]["schema_version"], 7);
  EXPECT_EQ(j["server"]["features"][1], "golden_report");
}

TEST(VersionCommandTest, AnUnreachableServerExitsUnavailable) {
  MockSession m;
  EXPECT_CALL(m.queries(), GetServerInfo(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused")));
  std::ostringstream out, err;
  EXPECT_EQ(client::RunVersion(m.session(), out, err), client::kExitUnavailable);
  EXPECT_EQ(out.str(), absl::StrCat("client   ", VersionLine("npuperf"), "\n"));
  EXPECT_NE(err.str().find("unreachable"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("UNAVAILABLE"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace npuperf::testing
