#include "tests/integration/process_harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/job_environment.h"

namespace npuperf::testing {
namespace fs = std::filesystem;

fs::path BuildDir() {
  const char* b = std::getenv("NPUPERF_BUILD_DIR");
  return b != nullptr ? fs::path(b) : fs::current_path();
}

fs::path SourceDir() {
  const char* s = std::getenv("NPUPERF_SOURCE_DIR");
  return s != nullptr ? fs::path(s) : fs::current_path();
}

Clock& WallClock() {
  static RealClock clock;
  return clock;
}

namespace {

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

agent::ProfilerSpec Spec(const std::vector<std::string>& argv, const fs::path& out,
                         const fs::path& err, const std::map<std::string, std::string>& env) {
  agent::ProfilerSpec spec;
  spec.argv = argv;
  spec.env = agent::CurrentEnvironment();
  for (const auto& [k, v] : env) spec.env[k] = v;
  spec.cwd = out.parent_path().string();
  spec.stdout_path = out.string();
  spec.stderr_path = err.string();
  return spec;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Process>> Process::Start(
    const std::vector<std::string>& argv, const fs::path& log,
    const std::map<std::string, std::string>& env) {
  static agent::SubprocessRunner runner(WallClock());
  auto p = runner.Start(Spec(argv, log, log, env));
  if (!p.ok()) return p.status();
  return std::unique_ptr<Process>(new Process(*std::move(p), log));
}

Process::~Process() {
  if (!stopped_) Stop(std::chrono::seconds(5));
}

std::string Process::Log() const { return ReadFile(log_); }

absl::StatusOr<std::string> Process::WaitForLine(const std::string& needle,
                                                 std::chrono::seconds timeout) {
  const auto deadline = WallClock().MonotonicNow() + timeout;
  while (WallClock().MonotonicNow() < deadline) {
    std::istringstream in(Log());
    for (std::string line; std::getline(in, line);) {
      if (line.find(needle) != std::string::npos) return line;
    }
    WallClock().SleepFor(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat("no '", needle, "' in log:\n", Log()));
}

int Process::Stop(std::chrono::seconds grace) {
  stopped_ = true;
  ::kill(process_->pid(), SIGTERM);
  agent::ExitStatus s = process_->Wait(WallClock().MonotonicNow() + grace);
  if (s.timed_out) s = process_->Terminate(std::chrono::milliseconds(100));
  return s.signal != 0 ? -s.signal : s.exit_code;
}

void Process::Kill() {
  stopped_ = true;
  ::kill(process_->pid(), SIGKILL);
  process_->Wait(WallClock().MonotonicNow() + std::chrono::seconds(10));
}

CommandResult RunCommand(const std::vector<std::string>& argv, const fs::path& dir,
                         const std::map<std::string, std::string>& env,
                         std::chrono::seconds timeout) {
  static std::atomic<int> counter{0};
  const int n = counter++;
  const fs::path out = dir / absl::StrCat("cmd", n, ".out");
  const fs::path err = dir / absl::StrCat("cmd", n, ".err");
  agent::SubprocessRunner runner(WallClock());
  auto p = runner.Start(Spec(argv, out, err, env));
  CommandResult r;
  if (!p.ok()) {
    r.err = std::string(p.status().message());
    return r;
  }
  agent::ExitStatus s = (*p)->Wait(WallClock().MonotonicNow() + timeout);
  if (s.timed_out) s = (*p)->Terminate(std::chrono::seconds(1));
  r.exit_code = s.signal != 0 ? -s.signal : s.exit_code;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

std::string AddressAfter(const std::string& line, const std::string& marker) {
  const auto at = line.find(marker);
  if (at == std::string::npos) return "";
  std::string rest = line.substr(at + marker.size());
  rest.erase(0, rest.find_first_not_of(' '));
  return rest.substr(0, rest.find_first_of(" ,"));
}

int RestartablePort() {
  int low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low;
  if (low <= 2048) return 0;
  std::mt19937 pick(std::random_device{}());
  std::uniform_int_distribution<int> port(std::max(1024, low - 16384), low - 1);
  for (int tries = 0; tries < 50; ++tries) {
    const int p = port(pick);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(p));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (free) return p;
  }
  return 0;
}

int ConnectTcp(const std::string& address) {
  const auto colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

absl::StatusOr<HttpResponse> HttpGetResponse(const std::string& address, const std::string& path) {
  const int fd = ConnectTcp(address);
  if (fd < 0) return absl::UnavailableError("connect " + address);
  const std::string req = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", address, "\r\n\r\n");
  (void)!::write(fd, req.data(), req.size());
  std::string resp;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) resp.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const auto body = resp.find("\r\n\r\n");
  if (body == std::string::npos) return absl::DataLossError("no HTTP body");
  HttpResponse out;
  // "HTTP/1.x NNN reason"
  const auto space = resp.find(' ');
  if (space != std::string::npos) out.status = std::atoi(resp.c_str() + space + 1);
  out.body = resp.substr(body + 4);
  return out;
}

absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& path) {
  auto r = HttpGetResponse(address, path);
  if (!r.ok()) return r.status();
  return std::move(r->body);
}

}  // namespace npuperf::testing
