#include "server/core/auth.h"

#include <fstream>

#include "common/sha256.h"
#include "gtest/gtest.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::server {
namespace {

class AuthTest : public ::testing::Test {
 protected:
  AuthTest() : store_(*SqliteStore::Open(":memory:")) {}

  std::filesystem::path TokensFile(const std::string& text) {
    const auto path = dir_.path() / "tokens";
    std::ofstream(path) << text;
    return path;
  }

  testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(AuthTest, PrincipalKindsRoundTripThroughTheirNames) {
  for (auto kind : {PrincipalKind::kTeam, PrincipalKind::kAgent}) {
    EXPECT_EQ(ParsePrincipalKind(PrincipalKindName(kind)), kind);
  }
  EXPECT_STREQ(PrincipalKindName(PrincipalKind::kAgent), "agent");
  EXPECT_FALSE(ParsePrincipalKind("admin"));
  EXPECT_FALSE(ParsePrincipalKind("Team"));
}

TEST_F(AuthTest, TokensFileGivesKindAndName) {
  const std::string team_hash = Sha256Hex("t1");
  const std::string agent_hash = Sha256Hex("a1");
  auto tokens = LoadTokensFile(
      TokensFile("# comment\nteam alpha " + team_hash + "\n\nagent node7 " + agent_hash + "\n"));
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  Authenticator auth(*store_, *std::move(tokens), true);
  auto team = auth.Authenticate("Bearer t1");
  ASSERT_TRUE(team.ok()) << team.status();
  EXPECT_EQ(team->kind, PrincipalKind::kTeam);
  EXPECT_EQ(team->name, "alpha");
  auto agent = auth.Authenticate("Bearer a1");
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->kind, PrincipalKind::kAgent);
  EXPECT_EQ(agent->name, "node7");
}

TEST_F(AuthTest, ATokensFileLineOfAnotherKindNamesTheLine) {
  auto tokens =
      LoadTokensFile(TokensFile("team a " + Sha256Hex("x") + "\nadmin b " + Sha256Hex("y") + "\n"));
  ASSERT_TRUE(absl::IsInvalidArgument(tokens.status()));
  EXPECT_NE(tokens.status().message().find(":2:"), absl::string_view::npos) << tokens.status();
}

TEST_F(AuthTest, StoredTokensCarryTheirKind) {
  ASSERT_TRUE(store_->InsertToken(Sha256Hex("s1"), "agent", "node9", 1).ok());
  Authenticator auth(*store_, {}, true);
  auto agent = auth.Authenticate("Bearer s1");
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->kind, PrincipalKind::kAgent);
  EXPECT_EQ(agent->name, "node9");
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Authenticate("Bearer nope").status()));
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Authenticate("s1").status()));
}

TEST_F(AuthTest, WithoutTokensEveryCallerIsTheDefaultTeam) {
  Authenticator auth(*store_, {}, false);
  auto p = auth.Authenticate("");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PrincipalKind::kTeam);
  EXPECT_EQ(p->name, "default");
}

}  // namespace
}  // namespace npuperf::server
