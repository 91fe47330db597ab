// fleet_bench: a simulated fleet of up to 1,000 devices against two
// npuperf-server replicas on one PostgreSQL (issue 18 benchmarks).
//
//   deploy/with-postgres.sh build/bin/fleet_bench [--quick] [--devices=100,250,500,1000]
//       [--durations=10,1] [--window=S] [--devices-per-agent=4] [--progress=1] [--replicas=2]
//
// Starts two real npuperf-server processes (tests/integration Cluster) on
// NPUPERF_TEST_PG_URL, captures one quick-mode evidence from msprof-sim
// (fleet/evidence_capture.h), uploads the example operator's bundle once
// (`npuperf submit`), and then for every devices x job-duration point:
// submits enough collections (spread over both replicas, cap 8 running jobs
// each, so that at least 1.5 x devices/8 collections are runnable) to keep the
// fleet busy past the window, starts the virtual fleet (fleet/fleet.h: the
// real AgentService protocol, agents alternating between the replicas), lets
// it warm up, and measures over the window: jobs/s, device utilisation, the
// idle gap of a device between two jobs, the LeaseJob latency of a waiting
// device (fleet side, and the server's submit-to-lease histogram), CPU
// seconds per 1,000 jobs of the replicas, of PostgreSQL (postmaster and
// backends) and of the fleet process, the machine's CPU, and the mean server
// time per agent call. Then it stops leasing, drains and cancels what is left.
// Prints figures; not a ctest test. Docs: docs/operations.md "Fleet bench".
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection_service.grpc.pb.h"
#include "tests/bench/fleet/evidence_capture.h"
#include "tests/bench/fleet/fleet.h"
#include "tests/bench/fleet/host_stats.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";
constexpr char kRunner[] = "test_inplace_add_rmsnorm.py";
constexpr int kCap = 8;  // CollectionSpec.max_concurrent_jobs, the most allowed

struct BenchFlags {
  std::vector<int> devices = {100, 250, 500, 1000};
  std::vector<int> durations_s = {10, 1};
  int window_s = 0;  // 0: 40 s for 10 s jobs, 15 s for 1 s jobs (quick: 20 and 8)
  int devices_per_agent = 4;
  int progress = 1;
  int replicas = 2;  // server processes on the one PostgreSQL
  bool quick = false;
};
BenchFlags& Flags() {
  static BenchFlags f;
  return f;
}

std::vector<int> IntList(absl::string_view text) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int v = 0;
    if (absl::SimpleAtoi(part, &v) && v > 0) out.push_back(v);
  }
  return out;
}

// Everything one point measures.
struct Point {
  int devices = 0;
  int duration_s = 0;
  double submit_s = 0;
  int64_t jobs_submitted = 0;
  fleet::WindowFigures f;
  double server_cpu = 0, pg_cpu = 0, fleet_cpu = 0;  // seconds over the window
  double machine_busy = 0, machine_total = 0;
  double s2l_p99_ms = 0;                 // the servers' submit-to-lease histogram (bucket bound)
  std::map<std::string, double> scrape;  // both replicas' deltas, summed
  std::vector<fleet::Statement> statements;  // the window's, most execution time first
  bool statements_known = false;             // pg_stat_statements loaded
  fleet::FleetErrors errors;
};

// Both replicas' /metrics, summed series by series.
std::map<std::string, double> ScrapeBoth(const std::vector<std::string>& metrics) {
  std::map<std::string, double> sum;
  for (const auto& address : metrics) {
    auto body = HttpGet(address, "/metrics");
    if (!body.ok()) continue;
    for (const auto& [k, v] : fleet::ParseScrape(*body)) sum[k] += v;
  }
  return sum;
}

struct Snapshot {
  double server = 0, pg = 0, self = 0;
  fleet::MachineCpu machine;
  std::map<std::string, double> scrape;
};

class Bench {
 public:
  Bench(Cluster& c, std::string pg_url, std::vector<int> server_pids, int postmaster,
        std::vector<std::string> addresses, std::vector<std::string> metrics,
        v1::CollectionSpec templ, v1::Evidence evidence)
      : c_(c),
        pg_url_(std::move(pg_url)),
        server_pids_(std::move(server_pids)),
        postmaster_(postmaster),
        addresses_(std::move(addresses)),
        metrics_(std::move(metrics)),
        templ_(std::move(templ)),
        evidence_(std::move(evidence)) {
    for (const auto& a : addresses_) {
      stubs_.push_back(v1::CollectionService::NewStub(
          grpc::CreateChannel(a, grpc::InsecureChannelCredentials())));
    }
  }

  Point Run(int devices, int duration_s, int window_s);

 private:
  Snapshot Take() {
    Snapshot s;
    for (int pid : server_pids_) s.server += fleet::ProcessCpuSeconds(pid);
    s.pg = postmaster_ > 0 ? fleet::ProcessCpuSeconds(postmaster_, /*with_children=*/true) : 0;
    s.self = fleet::SelfCpuSeconds();
    s.machine = fleet::ReadMachineCpu();
    s.scrape = ScrapeBoth(metrics_);
    return s;
  }
  // Submits `jobs` jobs in `collections` collections, alternating replicas,
  // from four threads; returns the ids.
  std::vector<std::string> Submit(int64_t jobs, int collections, int tag);
  void CancelAll(const std::vector<std::string>& ids);

  Cluster& c_;
  std::string pg_url_;
  std::vector<int> server_pids_;
  int postmaster_;
  std::vector<std::string> addresses_;
  std::vector<std::string> metrics_;
  v1::CollectionSpec templ_;
  v1::Evidence evidence_;
  std::vector<std::unique_ptr<v1::CollectionService::Stub>> stubs_;
};

std::vector<std::string> Bench::Submit(int64_t jobs, int collections, int tag) {
  std::vector<std::string> ids(static_cast<size_t>(collections));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < collections; i += 4) {
        v1::SubmitCollectionRequest req;
        *req.mutable_spec() = templ_;
        auto* ops = req.mutable_spec()->mutable_operators();
        const v1::OperatorSpec op = ops->Get(0);
        ops->Clear();
        const int64_t n = jobs / collections + (i < jobs % collections ? 1 : 0);
        for (int64_t k = 0; k < n; ++k) {
          auto* o = ops->Add();
          *o = op;
          o->set_name(absl::StrCat("fleet-", k));
        }
        req.mutable_spec()->set_max_concurrent_jobs(kCap);
        req.set_idempotency_key(absl::StrCat("fleet-", tag, "-", i));
        grpc::ClientContext ctx;
        ctx.set_deadline(WallClock().SystemNow() + std::chrono::minutes(2));
        v1::SubmitCollectionResponse resp;
        grpc::Status s =
            stubs_[static_cast<size_t>(i) % stubs_.size()]->SubmitCollection(&ctx, req, &resp);
        if (!s.ok()) std::fprintf(stderr, "submit %d: %s\n", i, s.error_message().c_str());
        ids[static_cast<size_t>(i)] = resp.collection().id();
      }
    });
  }
  for (auto& t : threads) t.join();
  return ids;
}

void Bench::CancelAll(const std::vector<std::string>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].empty()) continue;
    grpc::ClientContext ctx;
    ctx.set_deadline(WallClock().SystemNow() + std::chrono::minutes(2));
    v1::CancelCollectionRequest req;
    req.set_collection_id(ids[i]);
    req.set_reason("fleet_bench point over");
    v1::CancelCollectionResponse resp;
    (void)stubs_[i % stubs_.size()]->CancelCollection(&ctx, req, &resp);
  }
}

Point Bench::Run(int devices, int duration_s, int window_s) {
  static int tag = 0;
  Point p;
  p.devices = devices;
  p.duration_s = duration_s;
  const int warm_s = std::max(2 * duration_s, 5);
  // Enough jobs for warm-up, window and drain with 15 % to spare, in
  // collections that together allow 1.5 x the devices to run.
  const double cycles = static_cast<double>(warm_s + window_s) / duration_s + 2;
  p.jobs_submitted = static_cast<int64_t>(std::ceil(devices * cycles * 1.15));
  const int collections = static_cast<int>(std::max<int64_t>(
      (devices * 3 + 2 * kCap - 1) / (2 * kCap), (p.jobs_submitted + 999) / 1000));
  const auto t0 = WallClock().MonotonicNow();
  const std::vector<std::string> ids = Submit(p.jobs_submitted, collections, ++tag);
  p.submit_s = SecondsBetween(t0, WallClock().MonotonicNow());

  fleet::FleetOptions o;
  o.servers = addresses_;
  o.devices_per_agent = std::min(Flags().devices_per_agent, devices);
  o.agents = devices / o.devices_per_agent;
  o.job_duration = std::chrono::seconds(duration_s);
  o.progress_per_job = Flags().progress;
  o.evidence = evidence_;
  // One reporter per two devices: a real agent reports from the job's own
  // thread, so a slow ReportResult must not queue results behind it.
  o.reporters = std::clamp(devices / 2, 32, 512);
  fleet::Fleet fleet(o, WallClock());
  if (absl::Status s = fleet.Start(); !s.ok()) {
    ADD_FAILURE() << s;
    return p;
  }
  WallClock().SleepFor(std::chrono::seconds(warm_s));
  const Snapshot a = Take();
  p.statements_known = fleet::ResetStatements(pg_url_);
  const auto from = WallClock().MonotonicNow();
  WallClock().SleepFor(std::chrono::seconds(window_s));
  const Snapshot b = Take();
  const auto to = WallClock().MonotonicNow();
  if (p.statements_known) p.statements = fleet::TopStatements(pg_url_, 0);
  p.f = fleet.log().Window(from, to);
  p.server_cpu = b.server - a.server;
  p.pg_cpu = b.pg - a.pg;
  p.fleet_cpu = b.self - a.self;
  p.machine_busy = b.machine.busy - a.machine.busy;
  p.machine_total = b.machine.total - a.machine.total;
  p.scrape = fleet::Delta(a.scrape, b.scrape);
  p.s2l_p99_ms =
      1e3 * fleet::HistogramQuantile(p.scrape, "npuperf_server_submit_to_lease_seconds", 0.99);
  fleet.StopLeasing();
  fleet.Drain(std::chrono::seconds(duration_s + 15));
  p.errors = fleet.errors();
  fleet.Stop();
  CancelAll(ids);
  return p;
}

// The servers' per-method handler-time histogram.
constexpr char kHandling[] = "npuperf_server_grpc_handling_seconds";

// Mean server time (ms) and calls of one agent method over the window.
std::string MethodFigures(const Point& p, const std::string& method) {
  const std::string base = kHandling;
  const std::string labels = absl::StrCat("{method=\"", method, "\"}");
  auto get = [&](const std::string& k) {
    auto it = p.scrape.find(k);
    return it == p.scrape.end() ? 0.0 : it->second;
  };
  const double n = get(base + "_count" + labels);
  const double sum = get(base + "_sum" + labels);
  return absl::StrFormat("%s %.0f/s %.1f ms", method, n / p.f.seconds, n > 0 ? 1e3 * sum / n : 0);
}

void Print(const Point& p) {
  const double k = p.f.jobs_done > 0 ? 1000.0 / static_cast<double>(p.f.jobs_done) : 0;
  const double busy_pct = p.machine_total > 0 ? 100 * p.machine_busy / p.machine_total : 0;
  const double ours = (p.server_cpu + p.pg_cpu + p.fleet_cpu) / p.f.seconds;
  std::printf(
      "%5d dev %3d s jobs | %7.1f jobs/s (ideal %6.1f) | util %5.1f %% | idle p50 %6.1f p99 %7.1f "
      "ms | lease p50 %5.1f p99 %6.1f ms (server p99 <= %s ms) | cpu/1k jobs: servers %5.2f s, "
      "postgres %5.2f s, fleet %5.2f s | machine %3.0f %% busy (ours %.2f of 2 cores)\n",
      p.devices, p.duration_s, p.f.jobs_per_s, static_cast<double>(p.devices) / p.duration_s,
      100 * p.f.utilisation, p.f.idle_p50_ms, p.f.idle_p99_ms, p.f.lease_p50_ms, p.f.lease_p99_ms,
      p.s2l_p99_ms > 1e6 ? "inf" : absl::StrFormat("%.0f", p.s2l_p99_ms).c_str(), p.server_cpu * k,
      p.pg_cpu * k, p.fleet_cpu * k, busy_pct, ours);
  std::printf(
      "      submit %lld jobs in %.1f s | server time: %s, %s, %s | errors: lease %lld report %lld "
      "progress %lld sessions %lld cancels %lld kills %lld (of running jobs %lld)\n",
      static_cast<long long>(p.jobs_submitted), p.submit_s,
      MethodFigures(p, "ReportResult").c_str(), MethodFigures(p, "ReportProgress").c_str(),
      MethodFigures(p, "RegisterAgent").c_str(), static_cast<long long>(p.errors.lease_errors),
      static_cast<long long>(p.errors.report_errors),
      static_cast<long long>(p.errors.progress_errors),
      static_cast<long long>(p.errors.session_ends), static_cast<long long>(p.errors.cancels),
      static_cast<long long>(p.errors.kills), static_cast<long long>(p.errors.kills_running));
  if (p.errors.progress_in_heartbeats > 0) {
    std::printf("      progress in heartbeats: %lld reports over the run, no ReportProgress call\n",
                static_cast<long long>(p.errors.progress_in_heartbeats));
  }
  if (!p.errors.first_error.empty()) {
    std::printf("      first error: %s\n", p.errors.first_error.substr(0, 300).c_str());
  }
  const char* first = busy_pct >= 90 ? "CPU (both cores busy)" : "none (CPU below 90 %)";
  std::printf(
      "      first to saturate: %s; of our %.2f cores: servers %.0f %%, postgres %.0f %%, "
      "fleet %.0f %%\n",
      first, ours, 100 * p.server_cpu / p.f.seconds / std::max(ours, 1e-9),
      100 * p.pg_cpu / p.f.seconds / std::max(ours, 1e-9),
      100 * p.fleet_cpu / p.f.seconds / std::max(ours, 1e-9));
  std::fflush(stdout);
}

// Where a job's time goes (issue 36): every server method's calls and server
// time per job, then PostgreSQL's statements of the most execution time per
// job (pg_stat_statements; deploy/with-postgres.sh loads it with
// NPUPERF_PG_STATEMENTS=1, as tests/bench/run.sh does).
void PrintBreakdown(const Point& p) {
  if (p.f.jobs_done <= 0) return;
  const double jobs = static_cast<double>(p.f.jobs_done);
  const std::string count = absl::StrCat(kHandling, "_count{method=\"");
  std::vector<std::pair<double, std::string>> methods;  // ms per job, line
  for (const auto& [series, n] : p.scrape) {
    if (!absl::StartsWith(series, count) || n <= 0) continue;
    const std::string method = series.substr(count.size(), series.size() - count.size() - 2);
    auto sum = p.scrape.find(absl::StrCat(kHandling, "_sum{method=\"", method, "\"}"));
    const double ms = sum == p.scrape.end() ? 0 : 1e3 * sum->second;
    methods.emplace_back(
        ms / jobs, absl::StrFormat("%-16s %5.2f calls %6.2f ms", method, n / jobs, ms / jobs));
  }
  std::sort(methods.rbegin(), methods.rend());
  std::printf("      per job, server methods (calls, wall time in the handler):\n");
  for (const auto& [ms, line] : methods) std::printf("        %s\n", line.c_str());
  if (!p.statements_known) {
    std::printf("      per job, statements: unknown (pg_stat_statements not loaded)\n");
    return;
  }
  // Every statement is a round trip; BEGIN, COMMIT and the pool's statement
  // timeouts carry no work of their own.
  double calls = 0, total = 0, begins = 0, commits = 0, sets = 0;
  for (const auto& st : p.statements) {
    calls += st.calls;
    total += st.total_ms;
    if (st.query == "BEGIN") begins += st.calls;
    if (st.query == "COMMIT") commits += st.calls;
    if (absl::StartsWith(st.query, "SET statement_timeout")) sets += st.calls;
  }
  const size_t shown = std::min<size_t>(p.statements.size(), 12);
  std::printf(
      "      per job, top %zu statements (calls, execution ms; all %zu: %.1f calls, %.2f ms):\n",
      shown, p.statements.size(), calls / jobs, total / jobs);
  for (size_t i = 0; i < shown; ++i) {
    const fleet::Statement& st = p.statements[i];
    std::printf("        %5.2f calls %6.3f ms  %s\n", st.calls / jobs, st.total_ms / jobs,
                st.query.substr(0, 110).c_str());
  }
  std::printf(
      "      per job, round trips: %.1f statements, of which BEGIN %.2f, COMMIT %.2f, SET "
      "statement_timeout %.2f\n",
      calls / jobs, begins / jobs, commits / jobs, sets / jobs);
  // The same figure again, named by its curve, for tests/bench/baseline.json
  // (figures.py reads one line per figure).
  std::printf("      statements per job at %d dev %d s jobs: %.1f\n", p.devices, p.duration_s,
              calls / jobs);
  std::fflush(stdout);
}

// The evidence every fleet job reports: one msprof-sim task-time run.
v1::Evidence Evidence(const Cluster& c) {
  fleet::CaptureOptions o;
  o.msprof = (BuildDir() / "sim-bin/msprof").string();
  o.operator_dir = SourceDir() / "examples/ops/inplace_add_rmsnorm";
  o.runner = kRunner;
  o.op_name = kKernel;
  o.work_dir = c.dir.path() / "capture";
  o.env = {{"PATH", std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin"},
           {"HOME", c.dir.path().string()},
           {"ASCEND_RT_VISIBLE_DEVICES", "0"},
           {"MSPROF_SIM_STATE_DIR", (c.dir.path() / "sim-state").string()}};
  auto e = fleet::CaptureEvidence(o, WallClock());
  if (!e.ok()) {
    ADD_FAILURE() << e.status();
    return {};
  }
  return *e;
}

// The example operator's bundle, uploaded once by `npuperf submit` (a
// collection nobody can run, cancelled at once): its spec is the template of
// every fleet collection (quick mode, one job per operator).
v1::CollectionSpec Template(Cluster& c) {
  auto r = c.Cli({"--format", "json", "submit", "--quick",
                  (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(), "--op-name", kKernel,
                  "--soc", "NoSuchSoc", "--no-wait"});
  v1::Collection col;
  if (r.exit_code != 0 || !google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) {
    ADD_FAILURE() << "submit failed: " << r.out << r.err;
    return {};
  }
  (void)c.Cli({"cancel", col.id()});
  v1::CollectionSpec spec = col.spec();
  spec.clear_constraints();
  spec.set_kind(v1::COLLECTION_KIND_BATCH);
  auto* op = spec.mutable_operators(0);
  op->clear_case_ids();
  op->clear_op_name_map();
  op->clear_launch_map();
  op->set_op_name(kKernel);
  return spec;
}

TEST(FleetBench, Curve) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  const char* url = std::getenv("NPUPERF_TEST_PG_URL");
  ASSERT_NE(url, nullptr) << "run under deploy/with-postgres.sh (NPUPERF_TEST_PG_URL unset)";
  Cluster c;
  c.db = url;
  c.Start("", {"--max-jobs-per-collection", "100000"});
  ASSERT_FALSE(c.address.empty());
  std::vector<std::unique_ptr<Process>> replicas;
  std::vector<int> pids = {c.server->pid()};
  std::vector<std::string> addresses = {c.address}, metrics = {c.metrics_address};
  for (int r = 1; r < Flags().replicas; ++r) {
    std::string address;
    auto replica = c.StartReplica(absl::StrCat("replica", r == 1 ? "" : absl::StrCat(r)), &address);
    ASSERT_NE(replica, nullptr);
    auto line = replica->WaitForLine("listening on", std::chrono::seconds(5));
    ASSERT_TRUE(line.ok()) << line.status();
    pids.push_back(replica->pid());
    addresses.push_back(address);
    metrics.push_back(AddressAfter(*line, "metrics"));
    replicas.push_back(std::move(replica));
  }
  const v1::Evidence evidence = Evidence(c);
  const v1::CollectionSpec spec = Template(c);
  ASSERT_GT(evidence.ByteSizeLong(), 0u);
  ASSERT_EQ(spec.operators_size(), 1);
  Bench bench(c, url, pids, fleet::PostmasterPid(url), addresses, metrics, spec, evidence);
  std::printf(
      "fleet_bench: %d replicas on one PostgreSQL, %d devices per agent, %d progress "
      "report(s) per job, evidence %zu bytes, %u cores\n",
      Flags().replicas, Flags().devices_per_agent, Flags().progress, evidence.ByteSizeLong(),
      std::thread::hardware_concurrency());
  for (int duration : Flags().durations_s) {
    for (int devices : Flags().devices) {
      int window = Flags().window_s;
      if (window == 0)
        window = duration >= 10 ? (Flags().quick ? 20 : 40) : (Flags().quick ? 8 : 15);
      const Point p = bench.Run(devices, duration, window);
      Print(p);
      PrintBreakdown(p);
    }
  }
}

}  // namespace
}  // namespace npuperf::testing

// Flags after gtest's own; an unknown one is an error.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto& f = npuperf::testing::Flags();
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    int v = 0;
    if (a == "--quick") {
      f.quick = true;
      f.devices = {100, 1000};
    } else if (absl::ConsumePrefix(&a, "--devices=")) {
      f.devices = npuperf::testing::IntList(a);
    } else if (absl::ConsumePrefix(&a, "--durations=")) {
      f.durations_s = npuperf::testing::IntList(a);
    } else if (absl::ConsumePrefix(&a, "--window=") && absl::SimpleAtoi(a, &v) && v > 0) {
      f.window_s = v;
    } else if (absl::ConsumePrefix(&a, "--devices-per-agent=") && absl::SimpleAtoi(a, &v) &&
               v > 0 && v <= 64) {
      f.devices_per_agent = v;
    } else if (absl::ConsumePrefix(&a, "--replicas=") && absl::SimpleAtoi(a, &v) && v >= 1 &&
               v <= 8) {
      f.replicas = v;
    } else if (absl::ConsumePrefix(&a, "--progress=") && absl::SimpleAtoi(a, &v) && v >= 0) {
      f.progress = v;
    } else {
      std::fprintf(stderr, "fleet_bench: unknown or bad flag %s\n", argv[i]);
      return 2;
    }
  }
  return RUN_ALL_TESTS();
}
