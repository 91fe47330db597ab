// client/plumbing_commands.cc: `bundle pack` prints the sha256 and size of
// exactly the bytes submit uploads and writes them with --out; `config show`
// prints the settings without the token. The Python package's tests compare
// themselves with these through the real binary (tests/python).
#include "client/plumbing_commands.h"

#include <fstream>
#include <sstream>

#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "gmock/gmock.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/temp_dir.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::TempDir;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(BundlePackTest, PrintsTheSha256AndSizeOfTheSubmittedBytesAndWritesThem) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "op" / "__pycache__");
  std::ofstream(dir.path() / "op" / "test_op.py") << "print(1)\n";
  std::ofstream(dir.path() / "op" / "__pycache__" / "x.pyc") << "skipped";
  const auto want = PackBundle(dir.path() / "op", kMaxBundleBytes);
  ASSERT_TRUE(want.ok()) << want.status();
  std::ostringstream out, err;
  ASSERT_EQ(RunBundlePack(dir.path() / "op", dir.path() / "b.tar", out, err), kExitOk) << err.str();
  EXPECT_EQ(out.str(), Sha256Hex(*want) + " " + std::to_string(want->size()) + "\n");
  EXPECT_EQ(ReadFile(dir.path() / "b.tar"), *want);
  std::ostringstream only;
  EXPECT_EQ(RunBundlePack(dir.path() / "op", "", only, err), kExitOk);
  EXPECT_EQ(only.str(), out.str());
}

TEST(BundlePackTest, WhatCannotBePackedIsAnError) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "op");
  std::filesystem::create_symlink("/etc/passwd", dir.path() / "op" / "link");
  std::ostringstream out, err;
  EXPECT_EQ(RunBundlePack(dir.path() / "op", "", out, err), kExitError);
  EXPECT_EQ(RunBundlePack(dir.path() / "missing", "", out, err), kExitError);
  EXPECT_EQ(out.str(), "");
  EXPECT_THAT(err.str(),
              ::testing::HasSubstr("npuperf bundle pack: INVALID_ARGUMENT: " +
                                   (dir.path() / "op" / "link").string() +
                                   ": bundles hold only regular files and directories\n"
                                   "npuperf bundle pack: NOT_FOUND: operator directory "));
}

TEST(ConfigShowTest, PrintsTheSettingsAndOnlyTheTokensHash) {
  ClientConfig c;
  c.server = "h:1";
  c.token = "secret-token";
  c.tls_ca = "/ca.pem";
  c.timeout = std::chrono::seconds(12);
  c.format = OutputFormat::kJson;
  std::ostringstream out;
  EXPECT_EQ(RunConfigShow(c, "/nonexistent/config", out), kExitOk);
  EXPECT_EQ(out.str().find("secret-token"), std::string::npos);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["config_file"], "/nonexistent/config");
  EXPECT_EQ(j["server"], "h:1");
  EXPECT_EQ(j["token_sha256"], Sha256Hex("secret-token"));
  EXPECT_EQ(j["tls_ca"], "/ca.pem");
  EXPECT_EQ(j["timeout_seconds"], 12);
  EXPECT_EQ(j["format"], "json");
  std::ostringstream none;
  RunConfigShow(ClientConfig(), "", none);
  EXPECT_EQ(nlohmann::json::parse(none.str())["token_sha256"], "");
}

}  // namespace
}  // namespace npuperf::client
