#include "sim/simulator.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "sim/child.h"
#include "sim/exporter.h"
#include "sim/launch.h"

namespace npuperf::sim {
namespace {

int64_t UnixNs(Clock::SystemTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string Random16() {
  static const char kAlnum[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 16; ++i) out += kAlnum[rd() % 36];
  return out;
}

std::tm LocalTm(Clock::SystemTime t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  return tm;
}

uint64_t FreshSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid());
}

std::string Rfc3339Utc(Clock::SystemTime t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void Error(const std::string& msg) {
  std::fprintf(stderr, "[ERROR] msprof-sim: %s\n", msg.c_str());
}

}  // namespace

std::string Timestamp14(Clock::SystemTime t) {
  std::tm tm = LocalTm(t);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &tm);
  return buf;
}

std::string ProfDirName(Clock::SystemTime t, const std::string& random16) {
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000);
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%03d", ms);
  return absl::StrCat("PROF_000001_", Timestamp14(t), buf, "_", random16);
}

absl::Status Simulator::Prepare() {
  absl::StatusOr<SocSpec> soc = FindSoc(env_.soc);
  if (!soc.ok()) return soc.status();
  soc_ = *soc;
  if (options_.ai_core) {
    absl::Status s = CheckGroupSupported(options_.group, soc_);
    if (!s.ok()) return s;
  }
  absl::StatusOr<std::vector<Fault>> faults = ParseFaults(env_.fault_spec);
  if (!faults.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("MSPROF_SIM_FAULT: ", faults.status().message()));
  faults_ = *std::move(faults);
  return absl::OkStatus();
}

int Simulator::ReportBusy(const absl::Status& busy) {
  std::string output =
      std::filesystem::absolute(options_.output.empty() ? "." : options_.output).string();
  Error(absl::StrCat(busy.message(), "; refusing a second profiling task on one device"));
  AppendLine(env_.conflict_log,
             absl::StrCat(Rfc3339Utc(clock_.SystemNow()), " conflict device=", env_.physical_device,
                          " pid=", getpid(), " output=", output, " ", busy.message()));
  return kExitDeviceBusy;
}

absl::Status Simulator::CreateTree() {
  std::filesystem::path out = options_.output.empty() ? std::filesystem::current_path()
                                                      : std::filesystem::path(options_.output);
  Clock::SystemTime now = clock_.SystemNow();
  start_ns_ = UnixNs(now);
  const std::string prof = ProfDirName(now, Random16());
  prof_dir_ = std::filesystem::absolute(out) / prof;
  if (env_.torch_npu_layout) {
    // torch_npu's tensorboard_trace_handler: <worker>_<ts17>_ascend_pt, worker = <host>_<pid>.
    char host[256] = "localhost";
    ::gethostname(host, sizeof(host) - 1);
    const std::string ts17 = prof.substr(std::string("PROF_000001_").size(), 17);
    prof_dir_ = std::filesystem::absolute(out) /
                absl::StrCat(host, "_", getpid(), "_", ts17, "_ascend_pt") / prof;
  }
  std::error_code ec;
  if (options_.op_mode) {  // msprof op: OPPROF_<ts14>_<16 upper>/, the channel and log in dump/
    prof_dir_ =
        std::filesystem::absolute(out) / absl::StrCat("OPPROF_", Timestamp14(now), "_", Random16());
    log_dir_ = prof_dir_ / "dump";
    std::filesystem::create_directories(log_dir_, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create ", log_dir_.string()));
    launch_file_ = log_dir_ / "msprof_sim_launches.txt";
    return absl::OkStatus();
  }
  log_dir_ = prof_dir_ / "mindstudio_profiler_log";
  std::filesystem::path device = prof_dir_ / absl::StrCat("device_", env_.physical_device);
  std::vector<std::filesystem::path> dirs = {
      prof_dir_ / "host" / "data", prof_dir_ / "host" / "sqlite", device / "data",
      device / "sqlite",           TablesDir(env_, prof_dir_),    log_dir_};
  for (const auto& d : dirs) {
    std::filesystem::create_directories(d, ec);
    if (ec)
      return absl::InternalError(absl::StrCat("cannot create ", d.string(), ": ", ec.message()));
  }
  launch_file_ = prof_dir_ / "host" / "data" / "msprof_sim_launches.txt";
  return absl::OkStatus();
}

std::map<std::string, std::string> Simulator::ChildEnv() const {
  std::map<std::string, std::string> env;
  env["MSPROF_SIM_LAUNCH_FILE"] = launch_file_.string();
  env["MSPROF_SIM_SOC"] = soc_.name;
  env["MSPROF_SIM_DEVICE"] = std::to_string(env_.physical_device);
  env["MSPROF_SIM_CUBE_CORES"] = std::to_string(soc_.cube_cores);
  env["MSPROF_SIM_VECTOR_CORES"] = std::to_string(soc_.vector_cores);
  const char* py = std::getenv("PYTHONPATH");
  env["PYTHONPATH"] = python_dir_.string() + (py && *py ? absl::StrCat(":", py) : "");
  return env;
}

int Simulator::RunApplication() {
  std::printf("[INFO] Start profiling....\n");
  std::fflush(stdout);
  absl::StatusOr<int> code = RunChild(options_.app, ChildEnv());
  end_ns_ = UnixNs(clock_.SystemNow());
  if (!code.ok()) {
    Error(std::string(code.status().message()));
    return kExitCannotRun;
  }
  if (*code != 0)
    Error(absl::StrCat("application '", options_.app[0], "' exited with status ", *code));
  return *code;
}

int Simulator::InjectPostRunFaults() {
  if (const Fault* f = FindFault(faults_, FaultKind::kCrash)) {
    Error(absl::StrCat("injected fault '", f->text, "': aborting"));
    std::abort();
  }
  if (const Fault* f = FindFault(faults_, FaultKind::kFail)) {
    Error(absl::StrCat("injected fault '", f->text, "': collection of ",
                       MetricGroupName(options_.group), " failed"));
    return f->exit_code;
  }
  if (const Fault* f = FindFault(faults_, FaultKind::kHang)) {
    clock_.SleepFor(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(f->seconds)));
  }
  return 0;
}

void Simulator::WriteLog(const std::string& text) const {
  std::ofstream log(log_dir_ / absl::StrCat("msprof_sim_", getpid(), ".log"), std::ios::app);
  log << text << "\n";
}

int Simulator::Export() {
  absl::StatusOr<std::vector<Launch>> launches = ReadLaunchFile(launch_file_);
  if (!launches.ok()) {
    Error(std::string(launches.status().message()));
    return 1;
  }
  std::printf("[INFO] Start export data in %s.\n", prof_dir_.filename().c_str());
  ExportInput in{options_,
                 env_,
                 soc_,
                 prof_dir_,
                 Timestamp14(clock_.SystemNow()),
                 start_ns_,
                 end_ns_,
                 faults_,
                 env_.seed.value_or(FreshSeed())};
  absl::StatusOr<ExportSummary> sum =
      options_.op_mode ? ExportOpprof(in, *launches) : ExportProfile(in, *launches);
  if (!sum.ok()) {
    Error(absl::StrCat("export failed: ", sum.status().message()));
    return 1;
  }
  WriteLog(absl::StrCat("soc=", soc_.name, " device=", env_.physical_device, " seed=", in.seed,
                        " freq_mhz=", sum->freq_mhz, " rated_mhz=", soc_.freq_mhz,
                        " tasks=", sum->tasks, " samples=", sum->samples,
                        " group=", options_.op_mode ? "op" : MetricGroupName(options_.group)));
  std::printf("[INFO] Export data in %s done.\n[INFO] Profiling finished.\n",
              prof_dir_.filename().c_str());
  std::printf("[INFO] Process profiling data complete. Data is saved in %s\n", prof_dir_.c_str());
  return 0;
}

int Simulator::Run() {
  absl::Status s = Prepare();
  if (!s.ok()) {
    Error(std::string(s.message()));
    return kExitUsage;
  }
  std::string holder = absl::StrCat(
      "pid=", getpid(), " output=",
      std::filesystem::absolute(options_.output.empty() ? "." : options_.output).string());
  absl::StatusOr<std::unique_ptr<DeviceLock>> lock =
      DeviceLock::Acquire(env_.state_dir, env_.physical_device, holder);
  if (absl::IsResourceExhausted(lock.status())) return ReportBusy(lock.status());
  if (!lock.ok()) {
    Error(std::string(lock.status().message()));
    return 1;
  }
  lock_ = *std::move(lock);
  faults_ =
      ActiveFaults(faults_, env_.physical_device, MetricGroupName(options_.group), env_.state_dir);
  s = CreateTree();
  if (!s.ok()) {
    Error(std::string(s.message()));
    return 1;
  }
  int code = RunApplication();
  if (code != 0) return code;
  code = InjectPostRunFaults();
  if (code != 0) return code;
  return Export();
}

}  // namespace npuperf::sim
