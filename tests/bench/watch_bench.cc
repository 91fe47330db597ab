// watch_bench: what idle WatchCollection streams and idle connections cost
// the real server (issue 13 benchmarks).
//
//   [WATCHERS=4000] [CONNECTIONS=2000] [WINDOW=10] [JOBS=5] watch_bench
//
// Starts npuperf-server (SQLite) and one npuperf-agent on msprof-sim
// (tests/integration Cluster). Baseline: the server's CPU over `window`
// seconds idle, its RSS, and the wall time of `jobs` normal quick jobs
// (`npuperf submit --quick`, one kernel, 3 repeats). Then `watchers` streams
// watch a collection that stays queued (a SoC no agent serves), spread over
// connections of 90 streams: CPU over the window (goal < 5 % of one core),
// RSS, and the same jobs beside them. Then the watchers go and `connections`
// idle gRPC connections (connected, no call) are opened: the same figures.
// Prints figures and ratios; not a ctest test.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection_service.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";
constexpr int kStreamsPerConnection = 90;  // under the server's 100

// utime + stime of pid, in seconds.
double CpuSeconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);
    if (i == 15) break;
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double RssMib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// Percent of one core the process used over `window` seconds of real time.
double CpuPercent(int pid, int window) {
  const double before = CpuSeconds(pid);
  WallClock().SleepFor(std::chrono::seconds(window));
  return (CpuSeconds(pid) - before) * 100.0 / window;
}

std::string Operator() { return (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(); }

// Median wall seconds of `jobs` quick jobs through the CLI.
double JobSeconds(Cluster& c, int jobs) {
  std::vector<double> s;
  for (int i = 0; i < jobs; ++i) {
    const auto t0 = WallClock().MonotonicNow();
    auto r = c.Cli({"submit", "--quick", Operator(), "--op-name", kKernel, "--repeats", "3"});
    if (r.exit_code != 0) std::fprintf(stderr, "job failed: %s\n", r.err.c_str());
    s.push_back(std::chrono::duration<double>(WallClock().MonotonicNow() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

// One stream, on gRPC's callback client API (no thread each).
class Watcher final : public grpc::ClientReadReactor<v1::WatchCollectionResponse> {
 public:
  Watcher(v1::CollectionService::Stub& stub, const std::string& id, std::atomic<int>& started,
          std::atomic<int>& done)
      : started_(started), done_(done) {
    req_.set_collection_id(id);
    stub.async()->WatchCollection(&ctx_, &req_, this);
    StartRead(&resp_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    if (!seen_) started_.fetch_add(1);
    seen_ = true;
    StartRead(&resp_);
  }
  void OnDone(const grpc::Status&) override { done_.fetch_add(1); }
  void Cancel() { ctx_.TryCancel(); }

 private:
  grpc::ClientContext ctx_;
  v1::WatchCollectionRequest req_;
  v1::WatchCollectionResponse resp_;
  bool seen_ = false;
  std::atomic<int>& started_;
  std::atomic<int>& done_;
};

// A channel on a connection of its own.
std::shared_ptr<grpc::Channel> OwnChannel(const std::string& address, int n) {
  grpc::ChannelArguments args;
  args.SetInt("npuperf.bench.connection", n);  // distinct args: no shared subchannel
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

struct Figures {
  double cpu_pct = 0;
  double rss_mib = 0;
  double job_s = 0;
};

void Print(const char* what, const Figures& f, const Figures& base) {
  std::printf("%-22s cpu %6.2f %% of one core  rss %7.1f MiB (x%.2f)  job %.3f s (x%.2f)\n", what,
              f.cpu_pct, f.rss_mib, f.rss_mib / base.rss_mib, f.job_s, f.job_s / base.job_s);
}

Figures Measure(Cluster& c, int window, int jobs) {
  Figures f;
  f.cpu_pct = CpuPercent(c.server->pid(), window);
  f.rss_mib = RssMib(c.server->pid());
  f.job_s = JobSeconds(c, jobs);
  return f;
}

// A collection no agent can serve: it stays queued while watched.
std::string QueuedCollection(Cluster& c) {
  auto r = c.Cli({"--format", "json", "submit", "--quick", Operator(), "--op-name", kKernel,
                  "--soc", "NoSuchSoc", "--no-wait"});
  v1::Collection col;
  if (!google::protobuf::util::JsonStringToMessage(r.out, &col).ok() || col.id().empty()) {
    std::fprintf(stderr, "submit failed: %s %s\n", r.out.c_str(), r.err.c_str());
    std::exit(1);
  }
  return col.id();
}

Figures WithWatchers(Cluster& c, int watchers, int window, int jobs) {
  const std::string id = QueuedCollection(c);
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::CollectionService::Stub>> stubs;
  std::vector<std::unique_ptr<Watcher>> streams;
  std::atomic<int> started{0}, done{0};
  for (int i = 0; i < watchers; ++i) {
    if (i % kStreamsPerConnection == 0) {
      channels.push_back(OwnChannel(c.address, i));
      stubs.push_back(v1::CollectionService::NewStub(channels.back()));
    }
    streams.push_back(std::make_unique<Watcher>(*stubs.back(), id, started, done));
  }
  while (started.load() + done.load() < watchers) {
    WallClock().SleepFor(std::chrono::milliseconds(100));
  }
  std::printf("%d watchers streaming (%d refused or ended) on %zu connections\n", started.load(),
              done.load(), channels.size());
  Figures f = Measure(c, window, jobs);
  for (auto& s : streams) s->Cancel();
  while (done.load() < watchers) WallClock().SleepFor(std::chrono::milliseconds(50));
  return f;
}

Figures WithIdleConnections(Cluster& c, int connections, int window, int jobs) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  int connected = 0;
  for (int i = 0; i < connections; ++i) {
    channels.push_back(OwnChannel(c.address, 1'000'000 + i));
    connected +=
        channels.back()->WaitForConnected(WallClock().SystemNow() + std::chrono::seconds(5));
  }
  std::printf("%d idle connections open\n", connected);
  return Measure(c, window, jobs);
}

// An integer from the environment (the bench runs as a gtest program:
// Cluster's temp dirs are named after the running test).
int Env(const char* name, int def) {
  const char* v = std::getenv(name);
  int out = 0;
  return v != nullptr && absl::SimpleAtoi(v, &out) ? out : def;
}

TEST(WatchBench, IdleWatchersAndIdleConnections) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  const int watchers = Env("WATCHERS", 4000);
  const int connections = Env("CONNECTIONS", 2000);
  const int window = Env("WINDOW", 10);
  const int jobs = Env("JOBS", 5);
  Cluster c;
  c.Start("0-3", {"--max-watches-per-team", std::to_string(watchers + 100)});
  ASSERT_FALSE(c.address.empty());
  JobSeconds(c, 1);  // warm up (first bundle upload, runner start)
  const Figures base = Measure(c, window, jobs);
  Print("idle server", base, base);
  Print(absl::StrCat(watchers, " idle watchers").c_str(), WithWatchers(c, watchers, window, jobs),
        base);
  Print(absl::StrCat(connections, " idle connections").c_str(),
        WithIdleConnections(c, connections, window, jobs), base);
}

}  // namespace
}  // namespace npuperf::testing
