#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/subprocess_runner.h"
#include "common/clock.h"

namespace npuperf::testing {

// The real clock of the end-to-end tests: they run real binaries in real time.
Clock& WallClock();

// Build and source trees, from the environment ctest sets.
std::filesystem::path BuildDir();
std::filesystem::path SourceDir();

// A real binary run by a test: its own process group, stdout+stderr in a log
// file, SIGTERM on Stop() or destruction.
class Process {
 public:
  // argv[0] is a path; env adds to (or overrides) the test's environment.
  static absl::StatusOr<std::unique_ptr<Process>> Start(
      const std::vector<std::string>& argv, const std::filesystem::path& log,
      const std::map<std::string, std::string>& env = {});
  ~Process();

  // Waits for a log line containing needle; returns that line.
  absl::StatusOr<std::string> WaitForLine(const std::string& needle, std::chrono::seconds timeout);
  // SIGTERM, then SIGKILL after grace; returns the exit code (-signal if killed).
  int Stop(std::chrono::seconds grace = std::chrono::seconds(15));
  // SIGKILL to the process itself (a crash), then reap it.
  void Kill();
  int pid() const { return process_->pid(); }
  std::string Log() const;

 private:
  Process(std::unique_ptr<agent::ProfilerProcess> p, std::filesystem::path log)
      : process_(std::move(p)), log_(std::move(log)) {}
  std::unique_ptr<agent::ProfilerProcess> process_;
  std::filesystem::path log_;
  bool stopped_ = false;
};

// Runs a command to completion; returns exit code, stdout and stderr.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
CommandResult RunCommand(const std::vector<std::string>& argv, const std::filesystem::path& dir,
                         const std::map<std::string, std::string>& env = {},
                         std::chrono::seconds timeout = std::chrono::seconds(300));

// The "HOST:PORT" that follows `marker` in a log line ("listening on 127.0.0.1:4242 ...").
std::string AddressAfter(const std::string& line, const std::string& marker);

// A free loopback port below the kernel's ephemeral range, for a server a
// test restarts on the same port; 0 (let the server pick) when none is
// found. A port the server picks itself (":0") is in that range, and while
// the server is down, any process's outbound connection (another test's
// database or gRPC client) may be given it as its own: the restart then
// fails with "address already in use" (seen in CI). Ports below the range are
// never handed out that way. Another test may still bind it first: a caller
// that can, tries again with another.
int RestartablePort();

// A TCP connection to an IPv4 "HOST:PORT"; its fd, or -1.
int ConnectTcp(const std::string& address);

// GET http://address/path over a plain socket; the body.
absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& path);

// The same with the status code of the response.
struct HttpResponse {
  int status = 0;
  std::string body;
};
absl::StatusOr<HttpResponse> HttpGetResponse(const std::string& address, const std::string& path);

}  // namespace npuperf::testing
