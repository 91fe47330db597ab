// compare_bench: CompareRounds latency (p50/p99) with many rounds stored,
// through ComparisonQueries on a real store — SQLite in a temp file, and
// PostgreSQL when NPUPERF_TEST_PG_URL is set (deploy/with-postgres.sh).
//
//   compare_bench [--rounds N] [--queries Q]     defaults 100000 and 2000
//
// Rounds carry realistic evidence: 7 duration samples, 7 metric groups of 24
// fields, 48 per-core entries, a 16 KB evidence_json and a 4 KB summary.
// Goal (issue #5): CompareRounds p99 <= 20 ms with 100,000 rounds stored.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "server/backends/factory.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/compare/comparison_queries.h"
#include "server/core/scheduler.h"

namespace npuperf::server {
namespace {

RealClock& BenchClock() {
  static RealClock clock;
  return clock;
}

constexpr const char* kGroups[] = {
    "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB",
    "L2Cache",         "ResourceConflictRatio"};

AttemptResult MakeResult(const v1::JobAssignment& job, std::mt19937& gen, int64_t now_ms) {
  AttemptResult r;
  r.agent_id = "bench-agent";
  r.ref = {job.job_id(), job.attempt(), job.fencing_token(), job.lease_secret()};
  r.update_uuid = absl::StrCat("u-", job.job_id());
  r.outcome = v1::ATTEMPT_OUTCOME_SUCCEEDED;
  r.now_ms = now_ms;
  v1::Evidence& e = r.evidence;
  e.set_operator_name(job.operator_name());
  e.set_case_id(job.case_id());
  std::normal_distribution<double> noise(100, 1);
  double sum = 0;
  for (int i = 0; i < 7; ++i) {
    const double s = noise(gen);
    e.mutable_duration()->add_samples_us(s);
    sum += s;
  }
  e.mutable_duration()->set_aggregate_us(sum / 7);
  for (const char* g : kGroups) {
    auto* mg = e.add_metrics();
    mg->set_group(g);
    for (int f = 0; f < 24; ++f)
      (*mg->mutable_fields())[absl::StrCat("aiv_field_", f, "_ratio")] = f / 24.0;
  }
  for (int c = 0; c < 48; ++c) {
    auto* core = e.mutable_per_core()->add_cores();
    core->set_core_id(c);
    core->set_cycles(100000 + c);
    core->set_time_us(55.5);
  }
  e.mutable_per_core()->set_verdict("PASS");
  e.mutable_bound()->set_label("VEC_BOUND");
  e.mutable_fingerprint()->set_soc("Ascend910B2");
  e.set_evidence_json(std::string(16 << 10, 'j'));
  e.set_summary_text(std::string(4 << 10, 's'));
  r.metrics = {{"duration", sum / 7}};
  return r;
}

// Stores `rounds` succeeded rounds (1,000 per collection; 50 operators x 20
// cases, so each (operator, case) has many rounds). Returns their ids, or
// nothing after printing why.
std::optional<std::vector<int64_t>> Fill(const std::string& name, Store& store, int rounds,
                                         std::mt19937& gen) {
  constexpr int kPerCollection = 1000;
  std::vector<int64_t> ids;
  for (int c = 0; c * kPerCollection < rounds; ++c) {
    NewCollection nc;
    nc.id = absl::StrCat("bench-", c);
    nc.team = "bench";
    nc.spec.set_max_concurrent_jobs(8);
    for (int j = 0; j < kPerCollection && c * kPerCollection + j < rounds; ++j) {
      const int k = c * kPerCollection + j;
      nc.jobs.push_back(
          {absl::StrCat("op", k % 50), absl::StrCat("case", (k / 50) % 20), "kernel"});
    }
    nc.now_ms = 1;
    if (auto s = store.InsertCollection(nc); !s.ok()) {
      std::fprintf(stderr, "%s: insert: %s\n", name.c_str(), s.status().ToString().c_str());
      return std::nullopt;
    }
    for (size_t j = 0; j < nc.jobs.size(); ++j) {
      ClaimRequest req;
      req.agent_id = "bench-agent";
      req.host = "bench";
      req.devices = {{0, "Ascend910B2"}};
      req.now_ms = 2 + static_cast<int64_t>(ids.size());
      req.lease_ttl_ms = 3'600'000;
      auto job = store.ClaimJob(req, ChooseClaim);
      if (!job.ok() || !job->has_value()) {
        std::fprintf(stderr, "%s: claim %zu failed: %s\n", name.c_str(), ids.size(),
                     job.ok() ? "no job offered" : job.status().ToString().c_str());
        return std::nullopt;
      }
      auto ack = store.RecordResult(MakeResult(**job, gen, req.now_ms));
      if (!ack.ok()) {
        std::fprintf(stderr, "%s: result: %s\n", name.c_str(), ack.status().ToString().c_str());
        return std::nullopt;
      }
      ids.push_back(ack->round_id);
    }
  }
  return ids;
}

int Run(const std::string& name, Store& store, int rounds, int queries) {
  const auto fill_start = BenchClock().MonotonicNow();
  std::mt19937 gen(7);
  auto ids = Fill(name, store, rounds, gen);
  if (!ids) return 1;
  const double fill_s = SecondsBetween(fill_start, BenchClock().MonotonicNow());
  ComparisonQueries queries_api(store, BenchClock());
  std::uniform_int_distribution<size_t> pick(0, ids->size() - 1);
  std::vector<double> ms;
  for (int q = 0; q < queries; ++q) {
    v1::CompareRoundsRequest req;
    req.set_baseline_round_id((*ids)[pick(gen)]);
    req.set_candidate_round_id((*ids)[pick(gen)]);
    const auto t0 = BenchClock().MonotonicNow();
    auto out = queries_api.CompareRounds("bench", req);
    ms.push_back(1e3 * SecondsBetween(t0, BenchClock().MonotonicNow()));
    if (!out.ok()) {
      std::fprintf(stderr, "%s: compare: %s\n", name.c_str(), out.status().ToString().c_str());
      return 1;
    }
  }
  std::sort(ms.begin(), ms.end());
  const double p50 = ms[ms.size() / 2], p99 = ms[ms.size() * 99 / 100];
  std::printf(
      "%-10s %7d rounds stored (%.0f s, %.0f rounds/s)  CompareRounds p50 %.2f ms  p99 %.2f ms "
      "(goal p99 <= 20 ms: %s, ratio %.2f)\n",
      name.c_str(), rounds, fill_s, rounds / fill_s, p50, p99, p99 <= 20 ? "met" : "MISSED",
      p99 / 20);
  return 0;
}

}  // namespace
}  // namespace npuperf::server

int main(int argc, char** argv) {
  int rounds = 100000, queries = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (flag == "--queries") queries = std::atoi(argv[i + 1]);
  }
  if (rounds <= 0 || queries <= 0) {
    std::fprintf(stderr, "usage: compare_bench [--rounds N>0] [--queries Q>0]\n");
    return 2;
  }
  const auto dir =
      std::filesystem::temp_directory_path() / absl::StrCat("npuperf-compare-bench-", getpid());
  std::filesystem::create_directories(dir);
  int rc = 0;
  npuperf::RealClock clock;
  {
    auto store =
        npuperf::server::OpenStore(absl::StrCat("sqlite:", (dir / "bench.db").string()), clock);
    if (!store.ok()) {
      std::fprintf(stderr, "sqlite: %s\n", store.status().ToString().c_str());
      return 1;
    }
    rc |= npuperf::server::Run("sqlite", **store, rounds, queries);
  }
  std::filesystem::remove_all(dir);
  if (const char* url = std::getenv("NPUPERF_TEST_PG_URL"); url != nullptr && *url != '\0') {
    auto store = npuperf::server::OpenStore(url, clock);
    if (!store.ok()) {
      std::fprintf(stderr, "postgres: %s\n", store.status().ToString().c_str());
      return 1;
    }
    rc |= npuperf::server::Run("postgres", **store, rounds, queries);
  }
  return rc;
}
