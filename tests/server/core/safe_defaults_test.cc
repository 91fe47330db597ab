#include "server/core/safe_defaults.h"

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

TEST(SafeDefaultsTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackListen("127.0.0.1:50051"));
  EXPECT_TRUE(IsLoopbackListen("127.1.2.3:0"));
  EXPECT_TRUE(IsLoopbackListen("localhost:1"));
  EXPECT_TRUE(IsLoopbackListen("[::1]:50051"));
  EXPECT_FALSE(IsLoopbackListen("0.0.0.0:50051"));
  EXPECT_FALSE(IsLoopbackListen("[::]:50051"));
  EXPECT_FALSE(IsLoopbackListen(":50051"));
  EXPECT_FALSE(IsLoopbackListen("10.0.0.5:50051"));
  EXPECT_FALSE(IsLoopbackListen("127example.com:1"));
}

// Authentication is on without the explicit flag, tokens or not; the flag
// only works on loopback.
TEST(SafeDefaultsTest, AuthIsOnUnlessInsecureNoAuthOnLoopback) {
  SafetyInputs in;
  in.listen = "127.0.0.1:0";
  auto none = DecideSafety(in);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->auth_required);
  EXPECT_EQ(none->warnings.size(), 1u);  // no tokens yet
  in.tokens = 2;
  EXPECT_TRUE(DecideSafety(in)->auth_required);
  EXPECT_TRUE(DecideSafety(in)->warnings.empty());
  in.insecure_no_auth = true;
  EXPECT_FALSE(DecideSafety(in)->auth_required);
  in.listen = "0.0.0.0:50051";
  in.tls = true;
  auto remote = DecideSafety(in);
  EXPECT_TRUE(absl::IsInvalidArgument(remote.status()));
  EXPECT_NE(remote.status().message().find("--insecure-no-auth"), std::string::npos);
}

TEST(SafeDefaultsTest, PlaintextOffLoopbackNeedsAllowPlaintext) {
  SafetyInputs in;
  in.listen = "0.0.0.0:50051";
  in.tokens = 1;
  auto refused = DecideSafety(in);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_NE(refused.status().message().find("--allow-plaintext"), std::string::npos);
  in.allow_plaintext = true;
  auto allowed = DecideSafety(in);
  ASSERT_TRUE(allowed.ok());
  EXPECT_TRUE(allowed->plaintext_exposed);
  EXPECT_EQ(allowed->warnings.size(), 1u);
  in.allow_plaintext = false;
  in.tls = true;
  EXPECT_FALSE(DecideSafety(in)->plaintext_exposed);
  in.tls = false;
  in.listen = "127.0.0.1:50051";
  EXPECT_FALSE(DecideSafety(in)->plaintext_exposed);
}

}  // namespace
}  // namespace npuperf::server
