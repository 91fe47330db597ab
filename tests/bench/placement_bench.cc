// placement_bench: makespan of a batch before and after history-aware
// placement (issue 18; server/core/placement.h).
//
//   placement_bench [--devices=1..8] [--jobs=64] [--min-s=1] [--max-s=60] [--seed=18]
//                   [--durations=S,S,...]
//
// The real Scheduler over a real SQLite store, driven by a discrete-event
// loop on a FakeClock: one agent with `devices` devices leases a job the
// moment a device is free (the agent's behaviour since #18: a finished job
// ends its lease loop's pause), "runs" it for its duration and reports
// success. The batch is submitted twice with the same cases. The first
// submission has no history: jobs run in manifest order, which is what
// every submission got before placement. The second is queued from the
// first's device times, longest first. Durations: --durations, else `jobs`
// drawn once from a skewed distribution (many short, a few long) between
// min-s and max-s, in random manifest order. Prints both makespans, the
// lower bound max(sum/m, longest, p_m + p_(m+1)) and each one's ratio to it
// (goal: <= 1.05 after), and the device-seconds idle while work remained.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/sha256.h"
#include "prometheus/registry.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/scheduler.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {
namespace {

struct Options {
  int devices = 8;
  int jobs = 64;
  double min_s = 1, max_s = 60;
  unsigned seed = 18;
  std::vector<double> durations;  // seconds, manifest order
};

struct Run {
  double makespan_s = 0;
  double idle_device_s = 0;  // devices idle before the makespan
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "placement_bench: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Check(absl::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(absl::StrCat(what, ": ", v.status().ToString()));
  return *std::move(v);
}

class Bench {
 public:
  explicit Bench(const Options& o)
      : options_(o),
        store_(Check(SqliteStore::Open(":memory:"), "open store")),
        metrics_(registry_),
        scheduler_(*store_, clock_, metrics_, BenchOptions()) {
    sha_ = Sha256Hex("placement-bench");
    if (!store_->PutBundle("team", "op", sha_, "placement-bench", 0).ok()) Die("bundle");
    v1::RegisterAgentRequest reg;
    reg.set_host("bench-host");
    reg.set_boot_id("boot");
    reg.set_instance_id("i-1");
    for (int d = 0; d < o.devices; ++d) {
      auto* dev = reg.add_devices();
      dev->set_device_id(d);
      dev->set_soc("Ascend910B2");
      dev->set_state(v1::DEVICE_STATE_IDLE);
    }
    agent_ = Check(scheduler_.RegisterAgent(Who(), reg), "register").agent_id();
  }

  // Submits the batch and runs it to the end.
  Run RunBatch() {
    Check(scheduler_.Submit("team", Request()), "submit");
    using Event = std::pair<int64_t, int>;  // (finish ms, device)
    std::priority_queue<Event, std::vector<Event>, std::greater<>> running;
    std::map<int, v1::JobAssignment> on_device;
    const int64_t start = NowMs();
    int64_t busy_ms = 0;
    for (;;) {
      for (int d = 0; d < options_.devices; ++d) {
        if (on_device.contains(d)) continue;
        auto a = Lease(d);
        if (!a) break;  // the queue is empty
        const int64_t ms = DurationMs(a->case_id());
        busy_ms += ms;
        running.push({NowMs() + ms, d});
        on_device[d] = *a;
      }
      if (running.empty()) break;
      const auto [finish, device] = running.top();
      running.pop();
      clock_.Advance(std::chrono::milliseconds(finish - NowMs()));
      Succeed(on_device[device]);
      on_device.erase(device);
    }
    Run r;
    r.makespan_s = static_cast<double>(NowMs() - start) / 1000;
    r.idle_device_s = r.makespan_s * options_.devices - static_cast<double>(busy_ms) / 1000;
    return r;
  }

 private:
  // Leases outlive the longest job: the loop sends no heartbeats.
  static SchedulerOptions BenchOptions() {
    SchedulerOptions o;
    o.lease_ttl = std::chrono::hours(24);
    return o;
  }

  int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               clock_.SystemNow().time_since_epoch())
        .count();
  }

  AgentIdentity Who() const { return AgentIdentity::ForHost("bench-host"); }

  v1::SubmitCollectionRequest Request() const {
    v1::SubmitCollectionRequest req;
    auto* spec = req.mutable_spec();
    spec->mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
    spec->set_max_concurrent_jobs(options_.devices);
    spec->mutable_case_selector()->set_case_arg("--case-id");
    auto* op = spec->add_operators();
    op->set_name("op");
    op->set_bundle_sha256(sha_);
    op->set_op_name("K");
    for (size_t i = 0; i < options_.durations.size(); ++i) op->add_case_ids(absl::StrCat("c", i));
    return req;
  }

  int64_t DurationMs(const std::string& case_id) const {
    size_t i = 0;
    if (!absl::SimpleAtoi(case_id.substr(1), &i)) Die("case id " + case_id);
    return static_cast<int64_t>(options_.durations.at(i) * 1000);
  }

  std::optional<v1::JobAssignment> Lease(int device) {
    v1::LeaseJobRequest req;
    req.set_agent_id(agent_);
    auto* d = req.add_free_devices();
    d->set_device_id(device);
    d->set_soc("Ascend910B2");
    return Check(scheduler_.LeaseJob(Who(), req, [] { return false; }), "lease");
  }

  void Succeed(const v1::JobAssignment& a) {
    v1::ReportResultRequest r;
    r.set_agent_id(agent_);
    r.set_job_id(a.job_id());
    r.set_attempt(a.attempt());
    r.set_fencing_token(a.fencing_token());
    r.set_lease_secret(a.lease_secret());
    r.set_update_uuid(absl::StrCat("u-", a.job_id()));
    r.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
    r.mutable_evidence()->mutable_duration()->add_samples_us(10);
    r.mutable_evidence()->mutable_duration()->set_aggregate_us(10);
    Check(scheduler_.ReportResult(Who(), r), "report");
  }

  Options options_;
  testing::FakeClock clock_;
  prometheus::Registry registry_;
  std::unique_ptr<SqliteStore> store_;
  ServerMetrics metrics_;
  Scheduler scheduler_;
  std::string sha_;
  std::string agent_;
};

// max(sum / m, longest, p_m + p_(m+1)) with p sorted longest first.
double LowerBound(std::vector<double> p, int m) {
  std::sort(p.rbegin(), p.rend());
  double sum = 0;
  for (double x : p) sum += x;
  double bound = std::max(sum / m, p.empty() ? 0.0 : p[0]);
  if (static_cast<int>(p.size()) > m) bound = std::max(bound, p[m - 1] + p[m]);
  return bound;
}

std::vector<double> SkewedDurations(const Options& o) {
  std::mt19937 gen(o.seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> out;
  for (int i = 0; i < o.jobs; ++i) {
    const double x = u(gen);
    out.push_back(std::round((o.min_s + (o.max_s - o.min_s) * x * x * x) * 10) / 10);
  }
  return out;  // random manifest order: the generator's
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return a.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    bool ok = true;
    const char* v = nullptr;
    if ((v = value("--devices="))) {
      ok =
          absl::SimpleAtoi(v, &o.devices) && o.devices > 0 && o.devices <= 8;  // a collection's cap
    } else if ((v = value("--jobs="))) {
      ok = absl::SimpleAtoi(v, &o.jobs) && o.jobs > 0;
    } else if ((v = value("--min-s="))) {
      ok = absl::SimpleAtod(v, &o.min_s) && o.min_s > 0;
    } else if ((v = value("--max-s="))) {
      ok = absl::SimpleAtod(v, &o.max_s) && o.max_s >= o.min_s;
    } else if ((v = value("--seed="))) {
      ok = absl::SimpleAtoi(v, &o.seed);
    } else if ((v = value("--durations="))) {
      for (absl::string_view s : absl::StrSplit(v, ',')) {
        double d = 0;
        ok = ok && absl::SimpleAtod(s, &d) && d > 0;
        o.durations.push_back(d);
      }
    } else {
      ok = false;
    }
    if (!ok) Die("bad flag " + a);
  }
  if (o.durations.empty()) o.durations = SkewedDurations(o);
  return o;
}

}  // namespace
}  // namespace npuperf::server

int main(int argc, char** argv) {
  using namespace npuperf::server;
  const Options o = Parse(argc, argv);
  Bench bench(o);
  const Run before = bench.RunBatch();  // no history: manifest order
  const Run after = bench.RunBatch();   // the same cases, queued from the first run's times
  const double bound = LowerBound(o.durations, o.devices);
  double sum = 0;
  for (double d : o.durations) sum += d;
  std::printf("%zu jobs (%.1f s of work, longest %.1f s) on %d devices; lower bound %.1f s\n",
              o.durations.size(), sum, *std::max_element(o.durations.begin(), o.durations.end()),
              o.devices, bound);
  std::printf(
      "  manifest order (no history): makespan %7.1f s  x%.3f of the bound  idle %6.1f "
      "device-s\n",
      before.makespan_s, before.makespan_s / bound, before.idle_device_s);
  std::printf(
      "  longest first (history):     makespan %7.1f s  x%.3f of the bound  idle %6.1f "
      "device-s\n",
      after.makespan_s, after.makespan_s / bound, after.idle_device_s);
  return 0;
}
