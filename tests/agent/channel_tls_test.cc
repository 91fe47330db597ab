// LoadChannelTls (agent/channel_tls.h): the agent's TLS files, read once at
// start, with errors naming the flag.
#include "agent/channel_tls.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

namespace fs = std::filesystem;

class ChannelTlsTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text, fs::perms mode) {
    const fs::path p = dir_.path() / name;
    std::ofstream(p) << text;
    fs::permissions(p, mode);
    return p.string();
  }
  void SetUp() override {
    ca_ = Write("ca.pem", "-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n",
                fs::perms(0644));
    cert_ = Write("a.pem", "-----BEGIN CERTIFICATE-----\na\n-----END CERTIFICATE-----\n",
                  fs::perms(0644));
    key_ = Write("a.key", "-----BEGIN PRIVATE KEY-----\nk\n-----END PRIVATE KEY-----\n",
                 fs::perms(0600));
  }
  testing::TempDir dir_;
  std::string ca_, cert_, key_;
};

TEST_F(ChannelTlsTest, ReadsEveryFile) {
  auto none = LoadChannelTls({}, ::geteuid());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->root_pem.empty());
  auto server_only = LoadChannelTls({ca_, "", ""}, ::geteuid());
  ASSERT_TRUE(server_only.ok()) << server_only.status();
  EXPECT_NE(server_only->root_pem.find("ca"), std::string::npos);
  EXPECT_TRUE(server_only->cert_pem.empty());
  auto mtls = LoadChannelTls({ca_, cert_, key_}, ::geteuid());
  ASSERT_TRUE(mtls.ok()) << mtls.status();
  EXPECT_NE(mtls->cert_pem.find("\na\n"), std::string::npos);
  EXPECT_NE(mtls->key_pem.find("PRIVATE KEY"), std::string::npos);
}

TEST_F(ChannelTlsTest, ErrorsNameTheFlag) {
  auto half = LoadChannelTls({ca_, cert_, ""}, ::geteuid());
  EXPECT_EQ(half.status().message(), "--tls-cert needs --tls-key");
  auto no_ca = LoadChannelTls({"", cert_, key_}, ::geteuid());
  EXPECT_NE(no_ca.status().message().find("--tls-cert needs --tls-ca"), std::string::npos);
  auto missing = LoadChannelTls({ca_, (dir_.path() / "none.pem").string(), key_}, ::geteuid());
  EXPECT_NE(missing.status().message().find("--tls-cert "), std::string::npos) << missing.status();
  auto swapped = LoadChannelTls(
      {ca_, cert_, Write("k2", "-----BEGIN CERTIFICATE-----\n", fs::perms(0600))}, ::geteuid());
  EXPECT_NE(swapped.status().message().find("--tls-key"), std::string::npos) << swapped.status();
  EXPECT_NE(swapped.status().message().find("PRIVATE KEY"), std::string::npos);
  auto junk_ca = LoadChannelTls({Write("junk", "hello", fs::perms(0644)), "", ""}, ::geteuid());
  EXPECT_NE(junk_ca.status().message().find("--tls-ca"), std::string::npos);
}

// A key others can read is refused, and the message says why.
TEST_F(ChannelTlsTest, RefusesAKeyOthersCanRead) {
  fs::permissions(key_, fs::perms(0644));
  auto open = LoadChannelTls({ca_, cert_, key_}, ::geteuid());
  ASSERT_TRUE(absl::IsFailedPrecondition(open.status())) << open.status();
  EXPECT_NE(open.status().message().find("--tls-key"), std::string::npos);
  EXPECT_NE(open.status().message().find("mode 0644"), std::string::npos);
  EXPECT_NE(open.status().message().find("can act as this agent"), std::string::npos);
  fs::permissions(key_, fs::perms(0640));
  EXPECT_FALSE(LoadChannelTls({ca_, cert_, key_}, ::geteuid()).ok());
  fs::permissions(key_, fs::perms(0600));
  EXPECT_FALSE(LoadChannelTls({ca_, cert_, key_}, ::geteuid() + 1).ok());
}

}  // namespace
}  // namespace npuperf::agent
