// npuperf-chaos: the chaos soak of issue #18 (docs/chaos.md). Two server
// replicas on one throwaway PostgreSQL of its own, four agents on
// msprof-sim, a batch of quick and standard collections of three teams and
// priorities, and faults at seeded random moments; then the invariant
// checker and the report. Exit 0: every invariant held; 1: a violation (the
// facts are printed); 2: the soak could not run.
//
//   npuperf-chaos [--minutes M] [--seed S] [--jobs N] [--agents N] [--dir D]
//                 [--lease-ttl-ms MS] [--drain-minutes M]
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <pqxx/pqxx>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "tests/chaos/checker.h"
#include "tests/chaos/faults.h"
#include "tests/chaos/fleet.h"
#include "tests/chaos/pg_cluster.h"
#include "tests/chaos/report.h"
#include "tests/chaos/workload.h"

namespace npuperf::chaos {
namespace {
namespace fs = std::filesystem;
using testing::WallClock;

// Set by SIGINT/SIGTERM: the soak undoes its faults, stops every process
// and unmounts before it exits (exit 2).
std::atomic<bool> g_abort{false};
extern "C" void OnSignal(int) { g_abort = true; }

struct Flags {
  double minutes = 10;
  uint64_t seed = 0;
  bool seed_given = false;
  int jobs = 500;
  int agents = 4;
  int lease_ttl_ms = 5'000;
  double drain_minutes = 5;
  std::string dir;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = value != nullptr;
    if (flag == "--minutes") {
      ok = ok && absl::SimpleAtod(value, &f->minutes) && f->minutes > 0;
    } else if (flag == "--seed") {
      ok = ok && absl::SimpleAtoi(value, &f->seed);
      f->seed_given = true;
    } else if (flag == "--jobs") {
      ok = ok && absl::SimpleAtoi(value, &f->jobs) && f->jobs > 0;
    } else if (flag == "--agents") {
      ok = ok && absl::SimpleAtoi(value, &f->agents) && f->agents >= 2 && f->agents <= 16;
    } else if (flag == "--lease-ttl-ms") {
      // The fleet heartbeats every second: the server wants a TTL of three at least.
      ok = ok && absl::SimpleAtoi(value, &f->lease_ttl_ms) && f->lease_ttl_ms >= 3000;
    } else if (flag == "--drain-minutes") {
      ok = ok && absl::SimpleAtod(value, &f->drain_minutes) && f->drain_minutes > 0;
    } else if (flag == "--dir") {
      if (ok) f->dir = value;
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << "npuperf-chaos: bad or unknown flag " << flag
                << " (--minutes M --seed S --jobs N --agents N --dir D --lease-ttl-ms MS "
                   "--drain-minutes M)\n";
      return false;
    }
    ++i;
  }
  return true;
}

// Jobs not yet terminal in the database (-1: unreachable).
int64_t OpenJobs(const std::string& url) {
  try {
    pqxx::connection c(url);
    pqxx::work tx(c);
    return tx.exec("SELECT COUNT(*) FROM jobs WHERE state NOT IN (4, 5, 6)")[0][0].as<int64_t>();
  } catch (const std::exception&) {
    return -1;
  }
}

bool SpoolsEmpty(Fleet& fleet) {
  for (const auto& a : fleet.agents()) {
    std::error_code ec;
    if (fs::directory_iterator(a.work_dir / "spool", ec) != fs::directory_iterator()) return false;
  }
  return true;
}

// Waits until every job is terminal and every spool drained (or the drain
// time passed: the checker then names what is left).
void Drain(Fleet& fleet, const std::string& url, double minutes) {
  const auto deadline =
      WallClock().MonotonicNow() + std::chrono::milliseconds(static_cast<int64_t>(minutes * 60e3));
  int64_t open = -1;
  while (WallClock().MonotonicNow() < deadline && !g_abort) {
    open = OpenJobs(url);
    if (open == 0 && SpoolsEmpty(fleet)) return;
    WallClock().SleepFor(std::chrono::milliseconds(500));
  }
  std::printf("chaos: drain timed out with %lld jobs open\n", static_cast<long long>(open));
}

absl::StatusOr<v1::Collection> GetCollection(Fleet& fleet, const Workload& w, const Submitted& s) {
  for (const auto& r : fleet.replicas()) {
    auto out =
        testing::RunCommand({(testing::BuildDir() / "bin/npuperf").string(), "--server", r.address,
                             "--token", w.TokenOf(s.team), "--format", "json", "get", s.id},
                            fleet.dir(), {}, std::chrono::seconds(30));
    v1::Collection c;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    if (out.exit_code == 0 &&
        google::protobuf::util::JsonStringToMessage(out.out, &c, options).ok()) {
      return c;
    }
  }
  return absl::UnavailableError("no replica answered GetCollection " + s.id);
}

// The checker over the drained fleet, then the report; the exit code.
int CheckAndReport(Fleet& fleet, Workload& work, const std::string& url,
                   const std::vector<FaultRecord>& faults, uint64_t seed, double wall_s) {
  CheckInput in;
  in.db_url = url;
  for (const auto& a : fleet.agents()) {
    const fs::path log = fleet.ConflictLog(a.host);
    if (std::find(in.conflict_logs.begin(), in.conflict_logs.end(), log) == in.conflict_logs.end())
      in.conflict_logs.push_back(log);
    in.spools.push_back(a.work_dir / "spool");
  }
  in.submitted = work.submitted();
  in.get = [&](const Submitted& s) { return GetCollection(fleet, work, s); };
  auto check = Check(in);
  if (!check.ok()) {
    std::cerr << "npuperf-chaos: checker: " << check.status() << "\n";
    return 2;
  }
  PrintReport(std::cout, faults, fleet, *check, wall_s);
  std::printf("chaos: seed %llu; logs and database in %s\n", static_cast<unsigned long long>(seed),
              fleet.dir().parent_path().c_str());
  fleet.Stop();
  int rc = check->violations.empty() ? 0 : 1;
  if (work.submit_failures() > 0) {
    std::printf("chaos: %d collections could not be submitted within 90 s\n",
                work.submit_failures());
    rc = 1;
  }
  return rc;
}

int Soak(const Flags& f) {
  const auto t0 = WallClock().MonotonicNow();
  const fs::path dir = f.dir;
  std::printf(
      "chaos: seed %llu (rerun with --seed %llu), %.1f minutes of faults, %d jobs, %d "
      "agents, lease TTL %d ms, in %s\n",
      static_cast<unsigned long long>(f.seed), static_cast<unsigned long long>(f.seed), f.minutes,
      f.jobs, f.agents, f.lease_ttl_ms, dir.c_str());
  std::fflush(stdout);
  fs::create_directories(dir / "pg");
  PgCluster pg(dir / "pg");
  if (absl::Status s = pg.Start(); !s.ok()) {
    std::cerr << "npuperf-chaos: PostgreSQL: " << s << "\n";
    return 2;
  }
  Fleet fleet(dir / "fleet", {pg.url(), f.agents, 2, f.lease_ttl_ms, 1'000, 64});
  if (absl::Status s = fleet.Start(); !s.ok()) {
    std::cerr << "npuperf-chaos: fleet: " << s << "\n";
    return 2;
  }
  if (!fleet.all_tmpfs()) {
    std::printf(
        "chaos: *** WARNING: the agents' work dirs are not tmpfs mounts: NO full-disk "
        "faults are injected ***\n");
    if (std::getenv("CI") != nullptr) {
      std::cerr << "npuperf-chaos: under CI the full-disk fault is required (mount failed)\n";
      return 2;
    }
  }
  const auto window = std::chrono::seconds(static_cast<int64_t>(f.minutes * 60));
  Workload work(fleet, dir / "cli", f.seed, f.jobs, window * 7 / 10);
  work.Start();
  Injector injector(fleet, pg, 60);  // the submissions' --job-timeout
  std::vector<FaultRecord> faults = injector.Run(
      PlanFaults(f.seed, window, f.agents, std::chrono::milliseconds(f.lease_ttl_ms)), g_abort);
  injector.ResolveSimFaults(faults);
  if (g_abort) work.RequestStop();
  work.Join();
  std::printf(
      "chaos: faults over; %zu collections submitted (%d submissions failed), "
      "draining\n",
      work.submitted().size(), work.submit_failures());
  std::fflush(stdout);
  Drain(fleet, pg.url(), f.drain_minutes);
  if (g_abort) {
    std::cerr << "npuperf-chaos: interrupted; logs in " << dir << "\n";
    return 2;
  }
  injector.ResolveSimFaults(faults);
  return CheckAndReport(fleet, work, pg.url(), faults, f.seed,
                        std::chrono::duration<double>(WallClock().MonotonicNow() - t0).count());
}

}  // namespace
}  // namespace npuperf::chaos

int main(int argc, char** argv) {
  npuperf::chaos::Flags flags;
  if (!npuperf::chaos::ParseFlags(argc, argv, &flags)) return 2;
  ::signal(SIGINT, npuperf::chaos::OnSignal);
  ::signal(SIGTERM, npuperf::chaos::OnSignal);
  if (!flags.seed_given) {
    flags.seed = static_cast<uint64_t>(npuperf::chaos::NowMs()) % 1'000'000;
  }
  if (flags.dir.empty()) {
    char tmpl[] = "/tmp/npuperf-chaos.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return 2;
    ::chmod(tmpl, 0755);
    flags.dir = tmpl;
  }
  return npuperf::chaos::Soak(flags);
}
