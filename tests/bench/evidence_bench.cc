// evidence_bench: wall time and peak RSS of a standard-mode summarize
// (BuildEvidence + round archive + summary/evidence files) on generated
// PROF_GROUPs whose seven op_summary files have N rows each.
//
//   evidence_bench [--rows=10,10000,200000] [--workdir=DIR] [--python=SCRIPT] [--keep]
//
// Each measurement runs in a fresh child process (this binary re-executed
// with --run-one), so peak RSS is that of the summarize alone (wait4
// ru_maxrss). With --python, tests/bench/evidence_bench_reference.py (a
// re-implementation of the reference script's standard mode) runs on the same
// group for comparison. Not a ctest test.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "common/clock.h"
#include "evidence/archive.h"
#include "evidence/evidence.h"

namespace {

npuperf::RealClock& BenchClock() {
  static npuperf::RealClock clock;
  return clock;
}

namespace fs = std::filesystem;
namespace ev = npuperf::evidence;

constexpr char kTarget[] = "bench_target_kernel";
constexpr char kBase[] =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
    "Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes,"
    "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID";

struct Metric {
  const char* name;
  const char* pmu;
};

// A2/A3 task-based PMU columns (msprof-output.md §3.4).
const Metric kMetrics[] = {
    {"PipeUtilization",
     "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
     "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
     "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,"
     "aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),"
     "aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)"},
    {"ArithmeticUtilization",
     "aicore_time(us),aic_total_cycles,aic_mac_fp16_ratio,aic_mac_int8_ratio,aic_cube_fops,"
     "aiv_time(us),aiv_total_cycles,aiv_vec_fp32_ratio,aiv_vec_fp16_ratio,aiv_vec_int32_ratio,"
     "aiv_vec_misc_ratio,aiv_vector_fops"},
    {"Memory",
     "aicore_time(us),aic_total_cycles,aic_l1_read_bw(GB/s),aic_l1_write_bw(GB/s),"
     "aic_main_mem_read_bw(GB/s),aic_main_mem_write_bw(GB/s),aic_l2_read_bw(GB/s),"
     "aic_l2_write_bw(GB/s),aiv_time(us),aiv_total_cycles,aiv_ub_read_bw(GB/s),"
     "aiv_ub_write_bw(GB/s),aiv_main_mem_read_bw(GB/s),aiv_main_mem_write_bw(GB/s),"
     "aiv_l2_read_bw(GB/s),aiv_l2_write_bw(GB/s)"},
    {"MemoryL0",
     "aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/s),"
     "aic_l0b_read_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),"
     "aic_l0c_write_bw_cube(GB/s),aiv_time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s),"
     "aiv_l0c_write_bw(GB/s)"},
    {"MemoryUB",
     "aicore_time(us),aic_total_cycles,aic_ub_read_bw_scalar(GB/s),aic_ub_write_bw_scalar(GB/s),"
     "aiv_time(us),aiv_total_cycles,aiv_ub_read_bw_vector(GB/s),aiv_ub_write_bw_vector(GB/s),"
     "aiv_ub_read_bw_scalar(GB/s),aiv_ub_write_bw_scalar(GB/s)"},
    {"L2Cache",
     "aicore_time(us),aic_total_cycles,aic_write_cache_hit,aic_write_cache_miss_allocate,"
     "aic_r0_read_cache_hit,aic_r0_read_cache_miss_allocate,aic_r1_read_cache_hit,"
     "aic_r1_read_cache_miss_allocate,aiv_time(us),aiv_total_cycles,aiv_write_cache_hit,"
     "aiv_write_cache_miss_allocate,aiv_r0_read_cache_hit,aiv_r0_read_cache_miss_allocate,"
     "aiv_r1_read_cache_hit,aiv_r1_read_cache_miss_allocate"},
    {"ResourceConflictRatio",
     "aicore_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,aiv_vec_bankgroup_cflt_ratio,"
     "aiv_vec_bank_cflt_ratio,aiv_vec_resc_cflt_ratio"},
};

size_t CountColumns(const char* csv) {
  size_t n = 1;
  for (const char* p = csv; *p; ++p) n += *p == ',';
  return n;
}

// One op_summary row; ratios stay in [0, 1], times and cycles are positive.
void WriteRow(std::ofstream& out, size_t i, size_t n_pmu, bool target) {
  std::string name = target ? kTarget : "op_" + std::to_string(i % 997);
  const char* type = target ? "MIX_AIV" : (i % 3 == 0 ? "AI_CORE" : "AI_VECTOR_CORE");
  char buf[256];
  std::snprintf(
      buf, sizeof(buf),
      "0,4294967295,%zu,1756,%s,%s,dynamic,%s,%zu.000\t,%.3f,0,48,24,NO,\"1,4096;1,4096\","
      "DT_FLOAT16;DT_FLOAT16,ND;ND,\"1,4096\",DT_FLOAT16,ND,0",
      i, name.c_str(), name.c_str(), type, 1780676244313289 + i * 100,
      target ? 123.456 : 1.0 + static_cast<double>(i % 50));
  out << buf;
  for (size_t c = 0; c < n_pmu; ++c) {
    std::snprintf(buf, sizeof(buf), ",%.3f",
                  c < 2 ? 100.0 + c : 0.001 * static_cast<double>((i + c) % 900));
    out << buf;
  }
  out << '\n';
}

void WriteSampleDb(const fs::path& path, int cores) {
  fs::create_directories(path.parent_path());
  SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(
      "CREATE TABLE AICoreOriginalData(mode INTEGER, replayid INTEGER, timestamp NUMERIC,"
      " coreid INTEGER, task_cyc TEXT, event1 TEXT, event2 TEXT, event3 TEXT, event4 TEXT,"
      " event5 TEXT, event6 TEXT, event7 TEXT, event8 TEXT)");
  SQLite::Transaction tx(db);
  SQLite::Statement ins(
      db,
      "INSERT INTO AICoreOriginalData(mode, replayid, timestamp, coreid, task_cyc)"
      " VALUES (0, 0, ?, ?, ?)");
  for (int s = 0; s < 200; ++s) {
    for (int c = 0; c < cores; ++c) {
      ins.bind(1, static_cast<int64_t>(s) * 10000000);
      ins.bind(2, c);
      ins.bind(3, std::to_string(1000000 + 1000 * c + s));
      ins.exec();
      ins.reset();
    }
  }
  tx.commit();
}

void GenerateGroup(const fs::path& group, size_t rows) {
  for (const Metric& m : kMetrics) {
    fs::path out_dir = group / (std::string("PROF_") + m.name) /
                       "PROF_000001_20260605161708478_BENCHBENCHBENCHBE" /
                       "mindstudio_profiler_output";
    fs::create_directories(out_dir);
    std::ofstream out(out_dir / "op_summary_20260605161737.csv", std::ios::binary);
    out << kBase << ',' << m.pmu << '\n';
    size_t n_pmu = CountColumns(m.pmu);
    for (size_t i = 0; i < rows; ++i) WriteRow(out, i, n_pmu, i == rows / 2);
    std::ofstream tt(out_dir / "task_time_20260605161737.csv", std::ios::binary);
    tt << "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),"
          "task_stop(us)\n0,"
       << kTarget << ",MIX_AIV,1756,0,123.456,1.000\t,2.000\t\n";
  }
  fs::path sample = group / "PROF_Sample" / "PROF_000001_20260605161800000_SAMPLESAMPLESAMP";
  WriteSampleDb(sample / "device_0" / "sqlite" / "aicore.db", 24);
  WriteSampleDb(sample / "device_0" / "sqlite" / "ai_vector_core.db", 48);
}

int RunOne(const fs::path& group, const fs::path& ops) {
  ev::BuildOptions options;
  options.op_name = kTarget;
  options.soc = "Ascend910B2";
  absl::StatusOr<ev::Evidence> e = ev::BuildEvidence(group, options);
  if (!e.ok()) {
    std::fprintf(stderr, "%s\n", std::string(e.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<fs::path> round = ev::ReserveRound(ops, "");
  absl::StatusOr<int> n = round.ok() ? ev::WriteRound(*e, *round, ev::Lang::kEn) : round.status();
  if (!n.ok()) {
    std::fprintf(stderr, "%s\n", std::string(n.status().message()).c_str());
    return 1;
  }
  return 0;
}

struct Measured {
  double wall_s = 0;
  double cpu_s = 0;  // user + system
  long max_rss_kb = 0;
  int status = -1;
};

Measured Spawn(const std::vector<std::string>& argv) {
  auto start = BenchClock().MonotonicNow();
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  Measured m;
  m.wall_s = std::chrono::duration<double>(BenchClock().MonotonicNow() - start).count();
  m.max_rss_kb = usage.ru_maxrss;
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  m.cpu_s = secs(usage.ru_utime) + secs(usage.ru_stime);
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return m;
}

std::vector<size_t> ParseRows(const std::string& list) {
  std::vector<size_t> out;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    out.push_back(std::stoul(list.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return out;
}

void BenchOne(const fs::path& work, size_t rows, const std::string& python) {
  fs::path group = work / ("group_" + std::to_string(rows));
  fs::path ops = work / ("ops_" + std::to_string(rows));
  fs::create_directories(ops);
  if (!fs::exists(group)) GenerateGroup(group, rows);
  std::string self = fs::read_symlink("/proc/self/exe").string();
  Measured cc = Spawn({self, "--run-one", group.string(), ops.string()});
  std::printf("%-8zu  npuperf  wall %8.3f s  cpu %8.3f s  peak RSS %8.1f MB  exit %d\n", rows,
              cc.wall_s, cc.cpu_s, static_cast<double>(cc.max_rss_kb) / 1024, cc.status);
  if (python.empty()) return;
  fs::path py_ops = work / ("py_ops_" + std::to_string(rows));
  fs::create_directories(py_ops);
  Measured py = Spawn({"python3", python, group.string(), py_ops.string(), kTarget});
  if (py.status != 0) std::fprintf(stderr, "python reference failed (exit %d)\n", py.status);
  std::printf(
      "%-8zu  python   wall %8.3f s  cpu %8.3f s  peak RSS %8.1f MB  exit %d  "
      "(npuperf %.1fx faster wall, %.1fx cpu)\n",
      rows, py.wall_s, py.cpu_s, static_cast<double>(py.max_rss_kb) / 1024, py.status,
      py.wall_s / std::max(cc.wall_s, 1e-9), py.cpu_s / std::max(cc.cpu_s, 1e-9));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "--run-one") return RunOne(args[1], args[2]);
  std::string rows = "10,10000,200000", python;
  fs::path work;
  bool keep = false;
  for (const std::string& a : args) {
    if (a.rfind("--rows=", 0) == 0)
      rows = a.substr(7);
    else if (a.rfind("--workdir=", 0) == 0)
      work = a.substr(10);
    else if (a.rfind("--python=", 0) == 0)
      python = a.substr(9);
    else if (a == "--keep")
      keep = true;
    else {
      std::fprintf(
          stderr,
          "usage: evidence_bench [--rows=N,...] [--workdir=DIR] [--python=SCRIPT] [--keep]\n");
      return 2;
    }
  }
  bool temp = work.empty();
  if (temp)
    work = fs::temp_directory_path() / ("npuperf_evidence_bench_" + std::to_string(::getpid()));
  fs::create_directories(work);
  std::printf(
      "rows/op_summary (x7 metrics), summarize = parse + merge + per-core + archive + outputs\n");
  for (size_t n : ParseRows(rows)) BenchOne(work, n, python);
  if (temp && !keep) fs::remove_all(work);
  return 0;
}
