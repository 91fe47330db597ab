// store_bench: Store throughput on both backends (issue 5 benchmarks).
//
//   store_bench [--jobs=2000] [--threads=2]
//
// Claims: `jobs` queued jobs in collections of 8 (cap 8), claimed by
// `threads` threads for agents with 8 idle devices each, until every job is
// leased (each claim sees every collection as a candidate). Ingest: each
// leased job then reports success with realistic evidence (about 100 metric
// figures, 8 KB of evidence JSON, 10 repeat samples): one round and its
// metrics per transaction. SQLite runs on a temporary file; PostgreSQL runs
// when NPUPERF_TEST_PG_URL is set (deploy/with-postgres.sh), in a fresh
// schema. Prints figures; not a ctest test.
#include <unistd.h>

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
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/scheduler.h"
#include "server/sqlite_store.h"
#include "server/store.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>

#include "server/postgres_open.h"
#endif

namespace npuperf::server {
namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  int claims = 0;
  double claim_s = 0;
  int rounds = 0;
  double ingest_s = 0;
};

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void Queue(Store& store, int jobs) {
  for (int c = 0; c * 8 < jobs; ++c) {
    NewCollection n;
    n.id = absl::StrCat("bench-", c);
    n.team = absl::StrCat("team", c % 4);
    n.spec.set_max_concurrent_jobs(8);
    auto* op = n.spec.add_operators();
    op->set_name("op");
    op->set_bundle_sha256(std::string(64, 'a'));
    op->set_runner("run.py");
    for (int j = 0; j < 8 && c * 8 + j < jobs; ++j)
      n.jobs.push_back({"op", absl::StrCat("c", j), "K"});
    n.now_ms = 1;
    if (!store.InsertCollection(n).ok()) std::abort();
  }
}

AttemptResult Evidence(const v1::JobAssignment& a) {
  AttemptResult r;
  r.ref = {a.job_id(), a.attempt(), a.fencing_token()};
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
// threads, ... with 8 devices each, moving on when an agent is full.
std::vector<v1::JobAssignment> ClaimAll(Store& store, int jobs, int threads) {
  std::vector<std::vector<v1::JobAssignment>> got(threads);
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
        for (int d = 0; d < 8 && claimed.load() < jobs; ++d) {
          auto a = store.ClaimJob(req, ChooseClaim);
          if (!a.ok() && absl::IsAborted(a.status())) continue;
          if (!a.ok() || !a->has_value()) break;
          got[t].push_back(**a);
          ++claimed;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  std::vector<v1::JobAssignment> all;
  for (auto& v : got) all.insert(all.end(), v.begin(), v.end());
  return all;
}

Figures Run(Store& store, int jobs, int threads) {
  Queue(store, jobs);
  Figures f;
  auto t0 = Clock::now();
  std::vector<v1::JobAssignment> leased = ClaimAll(store, jobs, threads);
  f.claim_s = Since(t0);
  f.claims = static_cast<int>(leased.size());
  std::atomic<size_t> next{0};
  std::atomic<int> stored{0};
  t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < leased.size(); i = next++) {
        auto ack = store.RecordResult(Evidence(leased[i]));
        if (ack.ok() && ack->round_id > 0) ++stored;
      }
    });
  }
  for (auto& th : pool) th.join();
  f.ingest_s = Since(t0);
  f.rounds = stored.load();
  return f;
}

void Print(const char* backend, const Figures& f) {
  std::printf(
      "%-10s claims %5d in %6.2f s = %8.0f claims/s | rounds %5d in %6.2f s = %8.0f rounds/s\n",
      backend, f.claims, f.claim_s, f.claims / f.claim_s, f.rounds, f.ingest_s,
      f.rounds / f.ingest_s);
}

#if NPUPERF_WITH_POSTGRES
void BenchPostgres(const std::string& base, int jobs, int threads) {
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
    auto store =
        OpenPostgresStore(absl::StrCat(base, base.find('?') == std::string::npos ? "?" : "&",
                                       "options=-csearch_path%3D", schema),
                          threads + 1);
    if (!store.ok()) {
      std::fprintf(stderr, "postgres: %s\n", store.status().ToString().c_str());
      std::exit(1);
    }
    Print("postgres", Run(**store, jobs, threads));
  }
  exec("DROP SCHEMA " + schema + " CASCADE");
}
#endif

}  // namespace
}  // namespace npuperf::server

int main(int argc, char** argv) {
  int jobs = 2000, threads = 2;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--jobs=", 7) == 0) jobs = std::atoi(argv[i] + 7);
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
  }
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("npuperf-store-bench-", getpid());
  fs::create_directories(dir);
  {
    auto store = npuperf::server::SqliteStore::Open((dir / "bench.db").string());
    if (!store.ok()) return 1;
    npuperf::server::Print("sqlite", npuperf::server::Run(**store, jobs, threads));
  }
  fs::remove_all(dir);
#if NPUPERF_WITH_POSTGRES
  if (const char* url = std::getenv("NPUPERF_TEST_PG_URL"); url != nullptr && *url != '\0') {
    npuperf::server::BenchPostgres(url, jobs, threads);
  } else {
    std::printf("postgres   skipped: NPUPERF_TEST_PG_URL is not set\n");
  }
#endif
  return 0;
}
