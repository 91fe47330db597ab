// store_bench: Store throughput and scheduler latency on both backends (issue 5 benchmarks).
//
//   store_bench [--jobs=2000] [--threads=2] [--claim-batch=8] [--latency-iters=200]
//               [--xreplica-iters=50] [--big=10000,100000] [--waiting=100000]
//               [--backends=sqlite,postgres]
//
// Claims: `jobs` queued jobs in collections of 8 (cap 8), claimed by
// `threads` threads for agents with 8 idle devices each, until every job is
// leased (each claim sees every collection as a candidate), each claim
// asking for up to --claim-batch jobs (8: every free device of the agent, as
// the server asks; 1: one job per claim, as before issue 36's batching). Ingest: each
// leased job then reports success with realistic evidence (about 100 metric
// figures, 8 KB of evidence JSON, 10 repeat samples): one round and its
// metrics per transaction. Submit-to-lease: an in-process Scheduler with one
// idle agent (8 devices) long-polling in LeaseJob; the bench submits a
// one-job collection and times Submit() -> LeaseJob() returning, then the
// agent reports the result and polls again; p50/p99 over `latency-iters`.
// On PostgreSQL also across replicas: the agent polls replica B, the
// submission goes to replica A (LISTEN/NOTIFY). SQLite runs on a temporary
// file; PostgreSQL runs when NPUPERF_TEST_PG_URL is set
// (deploy/with-postgres.sh), in a fresh schema. Big collections: one
// collection of each `--big` size inserted, then cancelled. Then the claims
// and the ingest again, beside a collection of `--waiting` queued jobs of a
// lower priority (0: not run), and the state gauges' counts of all those jobs.
// Prints figures; not a ctest test.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/sha256.h"
#include "prometheus/registry.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/scheduler.h"
#include "server/store/store.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>

#include "server/backends/postgres/postgres_store.h"
#endif

namespace npuperf::server {
namespace {

RealClock& BenchClock() {
  static RealClock clock;
  return clock;
}

struct Figures {
  int claims = 0;
  double claim_s = 0;
  int rounds = 0;
  double ingest_s = 0;
};

double Since(Clock::MonotonicTime t0) {
  return std::chrono::duration<double>(BenchClock().MonotonicNow() - t0).count();
}

void Queue(Store& store, int jobs, const std::string& prefix, int priority) {
  for (int c = 0; c * 8 < jobs; ++c) {
    NewCollection n;
    n.id = absl::StrCat(prefix, c);
    n.team = absl::StrCat("team", c % 4);
    n.spec.set_max_concurrent_jobs(8);
    auto* op = n.spec.add_operators();
    op->set_name("op");
    op->set_bundle_sha256(std::string(64, 'a'));
    op->set_runner("run.py");
    for (int j = 0; j < 8 && c * 8 + j < jobs; ++j)
      n.jobs.push_back({"op", absl::StrCat("c", j), "K"});
    n.now_ms = 1;
    n.spec.set_priority(priority);
    if (!store.InsertCollection(n).ok()) std::abort();
  }
}

// A claimed job and the agent that holds it.
struct Leased {
  std::string agent_id;
  v1::JobAssignment assignment;
};

AttemptResult Evidence(const Leased& l) {
  const v1::JobAssignment& a = l.assignment;
  AttemptResult r;
  r.agent_id = l.agent_id;
  r.ref = {a.job_id(), a.attempt(), a.fencing_token(), a.lease_secret()};
  r.update_uuid = absl::StrCat("u-", a.job_id());
  r.outcome = v1::ATTEMPT_OUTCOME_SUCCEEDED;
  for (int i = 0; i < 10; ++i) r.evidence.mutable_duration()->add_samples_us(10.0 + i);
  r.evidence.mutable_duration()->set_aggregate_us(14.5);
  r.evidence.mutable_bound()->set_label("data_movement");
  r.evidence.set_evidence_json(std::string(8192, 'x'));
  for (int i = 0; i < 100; ++i) r.metrics.emplace_back(absl::StrCat("Group.metric_", i), i * 0.5);
  r.now_ms = 2;
  return r;
}

// Claims every job with `threads` threads; thread t serves agents t, t +
// threads, ... with 8 devices each, moving on when an agent is full. Each
// claim asks for up to `batch` jobs (Store::ClaimJobs; the server asks for
// one per free device of the agent).
std::vector<Leased> ClaimAll(Store& store, int jobs, int threads, int batch) {
  std::vector<std::vector<Leased>> got(threads);
  std::atomic<int> claimed{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int agent = t; claimed.load() < jobs; agent += threads) {
        ClaimRequest req;
        req.agent_id = absl::StrCat("agent-", agent);
        req.host = req.agent_id;
        for (int d = 0; d < 8; ++d) req.devices.push_back({d, "Ascend910B2"});
        req.now_ms = 1;
        req.lease_ttl_ms = 3'600'000;
        req.lease_secret = std::string(32, 'b');
        for (int k = 1; k < batch; ++k) req.more_lease_secrets.push_back(std::string(32, 'b'));
        for (int d = 0; d < 8 && claimed.load() < jobs;) {
          auto a = store.ClaimJobs(req, ChooseClaim);
          if (!a.ok() && absl::IsAborted(a.status())) continue;
          if (!a.ok()) {  // a broken bench must not spin over ever more agents
            std::fprintf(stderr, "claim: %s\n", a.status().ToString().c_str());
            std::abort();
          }
          if (a->empty()) break;
          for (auto& lease : *a) got[t].push_back({req.agent_id, std::move(lease)});
          claimed += static_cast<int>(a->size());
          d += static_cast<int>(a->size());
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  std::vector<Leased> all;
  for (auto& v : got) all.insert(all.end(), v.begin(), v.end());
  return all;
}

Figures Run(Store& store, int jobs, int threads, int batch, const std::string& prefix = "bench-",
            int priority = 0) {
  Queue(store, jobs, prefix, priority);
  Figures f;
  auto t0 = BenchClock().MonotonicNow();
  std::vector<Leased> leased = ClaimAll(store, jobs, threads, batch);
  f.claim_s = Since(t0);
  f.claims = static_cast<int>(leased.size());
  std::atomic<size_t> next{0};
  std::atomic<int> stored{0};
  t0 = BenchClock().MonotonicNow();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < leased.size(); i = next++) {
        auto ack = store.RecordResult(Evidence(leased[i]));
        if (!ack.ok()) {  // a refused result means the bench measures nothing
          std::fprintf(stderr, "ingest: %s\n", ack.status().ToString().c_str());
          std::abort();
        }
        if (ack->round_id > 0) ++stored;
      }
    });
  }
  for (auto& th : pool) th.join();
  f.ingest_s = Since(t0);
  f.rounds = stored.load();
  return f;
}

// ---- Submit-to-lease latency with an idle agent waiting ----

struct Latency {
  int samples = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
};

Latency Percentiles(std::vector<double> ms) {
  Latency l;
  l.samples = static_cast<int>(ms.size());
  if (ms.empty()) return l;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size())))];
  };
  l.p50_ms = at(0.50);
  l.p99_ms = at(0.99);
  l.max_ms = ms.back();
  return l;
}

v1::SubmitCollectionRequest OneJob(const std::string& sha, int i) {
  v1::SubmitCollectionRequest req;
  auto* spec = req.mutable_spec();
  spec->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  auto* op = spec->add_operators();
  op->set_name("op");
  op->set_bundle_sha256(sha);
  op->set_runner("run.py");
  op->set_op_name("K");
  op->add_case_ids(absl::StrCat("c", i));
  spec->mutable_case_selector()->set_case_arg("--case-id");
  return req;
}

// `iters` times: the agent long-polls `poll` (wait 30 s); once it waits, the
// bench submits one job through `submit`; the latency is Submit() called ->
// LeaseJob() returned. The agent then reports success (freeing the device).
Latency SubmitToLease(Store& store, Scheduler& submit, Scheduler& poll, int iters) {
  const std::string sha = Sha256Hex("bench-bundle");
  if (!store.PutBundle("team", "op", sha, "bench-bundle", 0).ok()) std::abort();
  v1::RegisterAgentRequest reg;
  reg.set_host("bench-host");
  reg.set_boot_id("boot");
  reg.set_instance_id("i-1");
  for (int d = 0; d < 8; ++d) {
    auto* dev = reg.add_devices();
    dev->set_device_id(d);
    dev->set_soc("Ascend910B2");
    dev->set_state(v1::DEVICE_STATE_IDLE);
  }
  const AgentIdentity who = AgentIdentity::ForHost("bench-host");
  auto agent = poll.RegisterAgent(who, reg);
  if (!agent.ok()) std::abort();
  v1::LeaseJobRequest lease;
  lease.set_agent_id(agent->agent_id());
  lease.set_wait_ms(30'000);
  for (int d = 0; d < 8; ++d) {
    auto* dev = lease.add_free_devices();
    dev->set_device_id(d);
    dev->set_soc("Ascend910B2");
  }
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    Clock::MonotonicTime submitted;
    absl::Notification polling, stamped;
    std::optional<v1::JobAssignment> got;
    std::thread agent_thread([&] {
      polling.Notify();
      auto a = poll.LeaseJob(who, lease, [] { return false; });
      const auto leased = BenchClock().MonotonicNow();
      stamped.WaitForNotification();
      if (a.ok() && a->has_value()) {
        got = **a;
        ms.push_back(std::chrono::duration<double, std::milli>(leased - submitted).count());
      }
    });
    polling.WaitForNotification();
    BenchClock().SleepFor(std::chrono::milliseconds(20));  // inside LeaseJob's wait
    submitted = BenchClock().MonotonicNow();
    stamped.Notify();
    if (!submit.Submit("team", OneJob(sha, i)).ok()) std::abort();
    agent_thread.join();
    if (!got) continue;
    v1::ReportResultRequest r;
    r.set_agent_id(agent->agent_id());
    r.set_job_id(got->job_id());
    r.set_attempt(got->attempt());
    r.set_fencing_token(got->fencing_token());
    r.set_lease_secret(got->lease_secret());
    r.set_update_uuid(absl::StrCat("lat-", got->job_id()));
    r.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
    r.mutable_evidence()->mutable_duration()->add_samples_us(10);
    r.mutable_evidence()->mutable_duration()->set_aggregate_us(10);
    if (!poll.ReportResult(who, r).ok()) std::abort();
  }
  return Percentiles(ms);
}

void PrintLatency(const char* what, const Latency& l) {
  std::printf("%-10s submit-to-lease %-14s n=%4d  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", "",
              what, l.samples, l.p50_ms, l.p99_ms, l.max_ms);
}

// One scheduler per store; `b` may be `a` (same replica).
void LatencyBench(Store& a, Store& b, int iters, const char* what) {
  RealClock clock;
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  Scheduler sa(a, clock, metrics, SchedulerOptions());
  if (&a == &b) {
    PrintLatency(what, SubmitToLease(a, sa, sa, iters));
    return;
  }
  Scheduler sb(b, clock, metrics, SchedulerOptions());
  BenchClock().SleepFor(std::chrono::milliseconds(300));  // listeners connected
  PrintLatency(what, SubmitToLease(a, sa, sb, iters));
}

// `what`: between the backend and the figures ("" for the first run).
void Print(const char* backend, const Figures& f, const std::string& what = "") {
  std::printf(
      "%-10s %sclaims %5d in %6.2f s = %8.0f claims/s | rounds %5d in %6.2f s = %8.0f rounds/s\n",
      backend, what.c_str(), f.claims, f.claim_s, f.claims / f.claim_s, f.rounds, f.ingest_s,
      f.rounds / f.ingest_s);
}

// A collection of `jobs` cases of one operator, queued at 1 ms.
NewCollection OneOperatorCollection(const std::string& id, const std::string& team, int jobs) {
  NewCollection n;
  n.id = id;
  n.team = team;
  auto* op = n.spec.add_operators();
  op->set_name("op");
  op->set_bundle_sha256(std::string(64, 'a'));
  op->set_runner("run.py");
  for (int j = 0; j < jobs; ++j) n.jobs.push_back({"op", absl::StrCat("case-", j), "K"});
  n.now_ms = 1;
  return n;
}

// The claims and results of Run again, beside one collection of `waiting`
// queued jobs of a lower priority that no claim reaches (issue 36: SQLite's
// queue heads grouped every queued job, so each lease of a small collection
// slowed down with a big one waiting; a manifest of 100,000 cases is one).
void RunBesideAQueue(Store& store, const char* backend, int jobs, int threads, int batch,
                     int waiting) {
  const NewCollection n = OneOperatorCollection("waiting", "waiting", waiting);
  if (!store.InsertCollection(n).ok()) std::abort();
  const Figures f = Run(store, jobs, threads, batch, "again-", /*priority=*/1);
  // Out of the way of the latency bench's one-job collections.
  if (!store.CancelCollection(n.team, n.id, "bench", 2).ok()) std::abort();
  Print(backend, f, absl::StrFormat("beside %7d queued jobs: ", waiting));
}

// Store::CountByState, what each metrics refresh (every 5 s) runs: the first
// call of this store, then the best of the next three (issue 36: it counted every job ever
// stored; on SQLite under the store's lock).
void StateCountsBench(Store& store, const char* backend) {
  auto t0 = BenchClock().MonotonicNow();
  auto first = store.CountByState();
  const double first_s = Since(t0);
  // The best of three: a PostgreSQL call on a connection new to the bench
  // prepares every statement first.
  double next_s = 1e9;
  absl::StatusOr<StateCounts> next;
  for (int i = 0; i < 3; ++i) {
    t0 = BenchClock().MonotonicNow();
    next = store.CountByState();
    next_s = std::min(next_s, Since(t0));
  }
  if (!first.ok() || !next.ok()) std::abort();
  int64_t stored = 0;
  for (const auto& [state, n] : next->jobs) stored += n;
  std::printf("%-10s state counts of %7lld jobs: first %8.2f ms, then %8.2f ms\n", backend,
              static_cast<long long>(stored), first_s * 1e3, next_s * 1e3);
}

#if NPUPERF_WITH_POSTGRES
// One collection of `jobs` jobs: InsertCollection, then CancelCollection of
// all of them queued (issue 18: 10,000 jobs <= 1 s and 100,000 <= 5 s to
// submit, <= 2 s to cancel, on PostgreSQL).
void BigCollection(Store& store, const char* backend, int jobs) {
  const NewCollection n = OneOperatorCollection(absl::StrCat("big-", jobs), "big", jobs);
  auto t0 = BenchClock().MonotonicNow();
  if (!store.InsertCollection(n).ok()) std::abort();
  const double submit_s = Since(t0);
  t0 = BenchClock().MonotonicNow();
  auto cancelled = store.CancelCollection("big", n.id, "bench", 2);
  if (!cancelled.ok()) std::abort();
  const double cancel_s = Since(t0);
  std::printf("%-10s one collection of %7d jobs: submit %7.3f s (%8.0f jobs/s), cancel %7.3f s\n",
              backend, jobs, submit_s, jobs / submit_s, cancel_s);
}

void BenchPostgres(const std::string& base, int jobs, int threads, int batch, int latency_iters,
                   int xreplica_iters, const std::vector<int>& big_sizes, int waiting) {
  const std::string schema =
      absl::StrFormat("bench_%016x", absl::Uniform<uint64_t>(absl::BitGen()));
  auto exec = [&](const std::string& sql) {
    pqxx::connection conn(base);
    pqxx::work tx(conn);
    tx.exec(sql);
    tx.commit();
  };
  exec("CREATE SCHEMA " + schema);
  {
    const std::string url = absl::StrCat(base, base.find('?') == std::string::npos ? "?" : "&",
                                         "options=-csearch_path%3D", schema);
    RealClock clock;
    auto store = PostgresStore::Open(url, clock, threads + 1);
    auto replica = PostgresStore::Open(url, clock, 2);
    if (!store.ok() || !replica.ok()) {
      std::fprintf(stderr, "postgres: %s\n",
                   (store.ok() ? replica : store).status().ToString().c_str());
      std::exit(1);
    }
    Print("postgres", Run(**store, jobs, threads, batch));
    for (int big : big_sizes) BigCollection(**store, "postgres", big);
    if (waiting > 0) RunBesideAQueue(**store, "postgres", jobs, threads, batch, waiting);
    StateCountsBench(**store, "postgres");
    LatencyBench(**store, **store, latency_iters, "(one replica)");
    LatencyBench(**store, **replica, xreplica_iters, "(2 replicas)");
  }
  exec("DROP SCHEMA " + schema + " CASCADE");
}
#endif

}  // namespace
}  // namespace npuperf::server

int main(int argc, char** argv) {
  int jobs = 2000, threads = 2, batch = 8, latency_iters = 200, xreplica_iters = 50;
  std::vector<int> big_sizes = {10'000, 100'000};
  int waiting = 100'000;
  bool sqlite = true, postgres = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--backends=", 11) == 0) {  // --backends=postgres: one of them
      sqlite = absl::StrContains(argv[i] + 11, "sqlite");
      postgres = absl::StrContains(argv[i] + 11, "postgres");
    }
    if (std::strncmp(argv[i], "--jobs=", 7) == 0) jobs = std::atoi(argv[i] + 7);
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
    if (std::strncmp(argv[i], "--claim-batch=", 14) == 0) {
      batch = std::clamp(std::atoi(argv[i] + 14), 1, 8);
    }
    if (std::strncmp(argv[i], "--latency-iters=", 16) == 0) latency_iters = std::atoi(argv[i] + 16);
    if (std::strncmp(argv[i], "--xreplica-iters=", 17) == 0)
      xreplica_iters = std::atoi(argv[i] + 17);
    if (std::strncmp(argv[i], "--waiting=", 10) == 0) waiting = std::atoi(argv[i] + 10);
    if (std::strncmp(argv[i], "--big=", 6) == 0) {  // --big=10000,100000 (--big= for none)
      big_sizes.clear();
      for (absl::string_view n : absl::StrSplit(argv[i] + 6, ',', absl::SkipEmpty()))
        big_sizes.push_back(std::atoi(std::string(n).c_str()));
    }
  }
  if (!sqlite && !postgres) {  // a misspelt --backends must not run nothing and say nothing
    std::fprintf(stderr, "store_bench: --backends names neither sqlite nor postgres\n");
    return 2;
  }
  std::printf("claims ask for up to %d jobs each (--claim-batch, 1..8)\n", batch);
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("npuperf-store-bench-", getpid());
  fs::create_directories(dir);
  if (sqlite) {
    auto store = npuperf::server::SqliteStore::Open((dir / "bench.db").string());
    if (!store.ok()) return 1;
    npuperf::server::Print("sqlite", npuperf::server::Run(**store, jobs, threads, batch));
    for (int big : big_sizes) npuperf::server::BigCollection(**store, "sqlite", big);
    if (waiting > 0) {
      npuperf::server::RunBesideAQueue(**store, "sqlite", jobs, threads, batch, waiting);
    }
    npuperf::server::StateCountsBench(**store, "sqlite");
    npuperf::server::LatencyBench(**store, **store, latency_iters, "");
  }
  fs::remove_all(dir);
#if NPUPERF_WITH_POSTGRES
  const char* url = std::getenv("NPUPERF_TEST_PG_URL");
  if (!postgres) {
    // --backends without postgres: nothing to print
  } else if (url != nullptr && *url != '\0') {
    npuperf::server::BenchPostgres(url, jobs, threads, batch, latency_iters, xreplica_iters,
                                   big_sizes, waiting);
  } else {
    std::printf("postgres   skipped: NPUPERF_TEST_PG_URL is not set\n");
  }
#endif
  return 0;
}
