// The server process: what it checks at start, and how it ends when its gRPC
// listener dies (gRPC 1.51 stops accepting for good once accept4 fails with
// EMFILE, grpc/grpc#33656): it drains and exits 75 for its supervisor.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

TEST(ServerProcessTest, ADeadListenerEndsTheServerWithExit75AndARestartServesAgain) {
  Cluster c;
  // 64 descriptors (soft = hard, so the server cannot raise it): the store,
  // gRPC's threads and /metrics leave a few dozen for connections.
  c.server_wrapper = {"/usr/bin/prlimit", "--nofile=64:64", "--"};
  c.Start("");
  std::vector<int> idle;  // unauthenticated connections that never speak
  for (int i = 0; i < 100; ++i) {
    const int fd = ConnectTcp(c.address);
    if (fd >= 0) idle.push_back(fd);
  }
  auto died = c.server->WaitForLine("stopped accepting", std::chrono::seconds(30));
  ASSERT_TRUE(died.ok()) << c.server->Log();
  EXPECT_NE(died->find("ERROR server"), std::string::npos) << *died;
  EXPECT_NE(c.server->Log().find("ERROR grpc: tcp_server_posix.cc"), std::string::npos)
      << "gRPC's own line is routed into the server's log format:\n"
      << c.server->Log();
  ASSERT_TRUE(c.server->WaitForLine("INFO server: stopped", std::chrono::seconds(30)).ok());
  EXPECT_EQ(c.server->Stop(), 75);
  for (int fd : idle) ::close(fd);

  // What systemd's Restart=on-failure does: the same database and address.
  c.server_wrapper.clear();
  c.RestartServer();
  auto list = c.Cli({"list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(c.server->Stop(), 0);
}

// A missing --upload-dir is created 0700; one that is not a directory fails
// the start naming the flag (it used to fail every upload later, with the
// server's path in the client's error).
TEST(ServerProcessTest, UploadDirIsCreatedPrivateOrRefusedAtStart) {
  Cluster c;
  const auto uploads = c.dir.path() / "spool" / "uploads";
  c.Start("", {"--upload-dir", uploads.string()});
  ASSERT_TRUE(std::filesystem::is_directory(uploads));
  EXPECT_EQ(std::filesystem::status(uploads).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  EXPECT_EQ(c.server->Stop(), 0);

  std::ofstream(c.dir.path() / "a-file") << "x";
  auto r = RunCommand(
      {(BuildDir() / "bin/npuperf-server").string(), "--listen", "127.0.0.1:0", "--metrics-listen",
       "127.0.0.1:0", "--insecure-no-auth", "--db", "sqlite:" + (c.dir.path() / "s2.db").string(),
       "--upload-dir", (c.dir.path() / "a-file").string()},
      c.dir.path(), {}, std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--upload-dir"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace npuperf::testing
