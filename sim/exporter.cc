#include "sim/exporter.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

#include "absl/strings/str_cat.h"
#include "sim/device_model.h"
#include "sim/opprof_writer.h"
#include "sim/pmu_columns.h"
#include "sim/report_writer.h"
#include "sim/rng.h"
#include "sim/sample_db.h"
#include "sim/timeline_writer.h"
#include "sim/unified_db.h"

namespace npuperf::sim {
namespace {

constexpr int kControlStream = 46;
constexpr int kComputeStream = 48;
constexpr int64_t kRuntimeInitNs = 30'000'000;  // first kernel >= 30 ms after start
constexpr int64_t kSubmitLatencyNs = 12'000;    // host launch call -> device start

double RunFrequency(const ExportInput& in, Rng& rng) {
  double freq = in.soc.freq_mhz;
  if (in.env.dvfs_mhz > 0 && rng.Uniform() < in.env.dvfs_probability) freq = in.env.dvfs_mhz;
  if (const Fault* f = FindFault(in.faults, FaultKind::kDvfs)) freq = f->mhz;
  return freq;
}

void ForceRatioAboveOne(KernelResult& r) {
  for (CoreStats* c : {&r.aiv, &r.aic}) {
    if (c->blocks == 0) continue;
    c->pipe[kPipeMte2] = 1.37 * c->total_cycles;
    if (c == &r.aiv)
      c->vec_fp16 = 1.37 * c->total_cycles;
    else
      c->mac_fp16 = 1.37 * c->total_cycles;
  }
}

// A contended device (fault slow:<factor>): the clock stays rated, so no
// DVFS check notices; every task's busy cycles stretch, and its duration
// with them.
void Slow(KernelResult& r, double factor) {
  r.duration_us *= factor;
  for (CoreStats* c : {&r.aiv, &r.aic}) {
    c->total_cycles *= factor;
    c->makespan_cycles *= factor;
    for (double& v : c->core_cycles) v *= factor;
    for (double& v : c->block_cycles) v *= factor;
  }
}

absl::StatusOr<std::vector<PmuColumn>> Columns(const ExportInput& in) {
  std::vector<PmuColumn> out;
  bool pmu = in.options.ai_core && in.options.mode == AicMode::kTaskBased &&
             in.options.task_time != TaskTimeLevel::kOff;
  if (!pmu) return out;
  for (const std::string& name : PmuHeader(in.options.group, in.soc.family)) {
    absl::StatusOr<PmuColumn> c = ResolvePmuColumn(name);
    if (!c.ok()) return c.status();
    out.push_back(*std::move(c));
  }
  return out;
}

ReportConfig MakeReportConfig(const ExportInput& in, std::vector<PmuColumn> pmu) {
  ReportConfig cfg;
  cfg.output_dir = TablesDir(in.env, in.prof_dir);
  cfg.table_suffix = TableSuffix(in.env, in.ts14);
  cfg.device = in.env.physical_device;
  cfg.options = in.options;
  cfg.pmu = std::move(pmu);
  cfg.rated_mhz = in.soc.freq_mhz;
  cfg.block_dim_naming = in.env.block_dim_naming;
  cfg.torch_npu = in.env.torch_npu_layout;
  cfg.cann9 = in.env.cann9_layout;
  cfg.garbage_row = FindFault(in.faults, FaultKind::kGarbage) != nullptr;
  cfg.truncate = FindFault(in.faults, FaultKind::kTruncate) != nullptr;
  return cfg;
}

// Host-side API calls that accompany one kernel launch.
// `w` null: the same draws, nothing recorded (msprof op).
void AddLaunchApis(ReportWriter* w, Rng& rng, bool first) {
  double launch = 14.0 + 6.0 * rng.Uniform() + (first ? 110.0 : 0.0);
  double node = launch + 7.0 + 2.0 * rng.Uniform();
  if (w == nullptr) return;
  w->AddApiCall("runtime", "KernelLaunch", launch);
  w->AddApiCall("node", "launch", node);
}

void AddSessionApis(ReportWriter& w, Rng& rng, int64_t tasks, size_t lines) {
  for (int64_t i = 0; i < std::max<int64_t>(1, tasks / 16); ++i) {
    w.AddApiCall("acl", "aclrtSynchronizeStream", 9.5 + 2.0 * rng.Uniform());
  }
  for (size_t i = 0; i < std::max<size_t>(1, lines); ++i) {
    w.AddApiCall("acl", "aclrtMalloc", 3.0 + 4.0 * rng.Uniform());
    w.AddApiCall("acl", "aclrtMemcpy", 40.0 + 20.0 * rng.Uniform());
  }
  w.AddApiCall("runtime", "StreamCreate", 1500.0 + 50.0 * rng.Uniform());
}

absl::Status WriteSampleJson(const ExportInput& in, const std::filesystem::path& device_dir) {
  std::ofstream out(device_dir / "sample.json");
  bool sample = in.options.mode == AicMode::kSampleBased;
  std::string group(MetricGroupName(in.options.group));
  // On A2/A3 the AIC side of PipeUtilization is programmed with the "Exct" set.
  bool exct =
      in.options.group == MetricGroup::kPipeUtilization && in.soc.family == SocFamily::kA2A3;
  out << "{\n  \"ai_core_profiling\": \"" << (in.options.ai_core ? "on" : "off") << "\",\n"
      << "  \"ai_core_profiling_mode\": \"" << (sample ? "sample-based" : "task-based") << "\",\n"
      << "  \"ai_core_metrics\": \"" << group << (exct ? "Exct" : "") << "\",\n"
      << "  \"aiv_metrics\": \"" << group << "\",\n";
  if (sample || in.options.group == MetricGroup::kPipeUtilization) {  // the sampled event sets
    out << "  \"ai_core_profiling_events\": \"0x416,0x417,0x9,0x302,0xc,0x303,0x54,0x55\",\n"
        << "  \"aiv_profiling_events\": \"0x8,0xa,0x9,0xb,0xc,0xd,0x54,0x55\",\n";
  }
  out << "  \"aic_sampling_interval\": " << 1000 / in.options.aic_freq_hz << ",\n"
      << "  \"soc\": \"" << in.soc.name << "\",\n  \"simulator\": \"msprof-sim\"\n}\n";
  return out ? absl::OkStatus() : absl::InternalError("cannot write sample.json");
}

// torch_npu's experimental_config aic_metrics value of a group ("" when it has none).
std::string AclMetric(MetricGroup g) {
  switch (g) {
    case MetricGroup::kPipeUtilization: return "ACL_AICORE_PIPE_UTILIZATION";
    case MetricGroup::kArithmeticUtilization: return "ACL_AICORE_ARITHMETIC_UTILIZATION";
    case MetricGroup::kMemory: return "ACL_AICORE_MEMORY_BANDWIDTH";
    case MetricGroup::kMemoryL0: return "ACL_AICORE_L0B_AND_WIDTH";
    case MetricGroup::kMemoryUB: return "ACL_AICORE_MEMORY_UB";
    case MetricGroup::kL2Cache: return "ACL_AICORE_L2_CACHE";
    case MetricGroup::kResourceConflictRatio: return "ACL_AICORE_RESOURCE_CONFLICT_RATIO";
    default: return "";
  }
}

// profiler_info_0.json of a torch_npu export: the profiler's config (Level1, the aic-metrics
// group, or ACL_AICORE_NONE when AI Core PMU is off) and the rank.
absl::Status WriteProfilerInfo(const ExportInput& in) {
  std::ofstream out(in.prof_dir.parent_path() / "profiler_info_0.json");
  std::string acl = in.options.ai_core && in.options.mode == AicMode::kTaskBased
                        ? AclMetric(in.options.group)
                        : "ACL_AICORE_NONE";
  out << "{\n    \"config\": {\n        \"experimental_config\": {\n"
      << "            \"_profiler_level\": \"Level1\",\n"
      << "            \"_aic_metrics\": \"" << acl << "\",\n"
      << "            \"_export_type\": \"text\"\n        }\n    },\n"
      << "    \"rank_id\": 0,\n    \"simulator\": \"msprof-sim\"\n}\n";
  return out ? absl::OkStatus() : absl::InternalError("cannot write profiler_info_0.json");
}

// The device timeline: tasks run back to back in launch order, never before
// their host launch time plus the submit latency. msprof op runs the same
// timeline (the same random draws) with no writer, db or sampler, only `sink`.
struct Timeline {
  const DeviceModel& model;
  ReportWriter* writer;      // null in msprof op mode
  SampleCollector* sampler;  // null unless sample-based
  UnifiedDb* db;             // null in msprof op mode
  const Fault* ratio_fault;  // null unless ratio_gt1 is active
  const Fault* slow_fault;   // null unless slow is active
  Rng& rng;
  ExportSummary& summary;
  int64_t device_free_ns;
  std::function<void(const TaskRecord&)> sink = nullptr;

  void Run(const Launch& l) {
    for (int rep = 0; rep < l.count; ++rep) {
      int64_t earliest = l.host_ns > 0 ? l.host_ns + kSubmitLatencyNs : 0;
      int64_t gap = 1500 + static_cast<int64_t>(800 * rng.Uniform());
      int64_t start = std::max(earliest, device_free_ns + gap);
      KernelResult r = model.Run(l, summary.freq_mhz, rng);
      if (ratio_fault && (ratio_fault->op_name.empty() || ratio_fault->op_name == l.op_name)) {
        ForceRatioAboveOne(r);
      }
      if (slow_fault) Slow(r, slow_fault->factor);
      TaskRecord task{&l, &r, start, kComputeStream, static_cast<int>(summary.tasks % 65536)};
      if (writer) writer->AddTask(task);
      if (db) db->AddTask(task);
      if (sampler) sampler->Add(start, r);
      if (sink) sink(task);
      AddLaunchApis(writer, rng, summary.tasks == 0);
      device_free_ns = start + std::llround(r.duration_us * 1000.0);
      ++summary.tasks;
    }
  }
};

absl::Status WriteSamples(const ExportInput& in, const SampleCollector& sampler,
                          int64_t device_free_ns, ExportSummary& summary) {
  bool omit = FindFault(in.faults, FaultKind::kNoAicoreDb) != nullptr;
  int64_t end = std::max(in.process_end_ns, device_free_ns);
  std::filesystem::path device_dir = in.prof_dir / absl::StrCat("device_", in.env.physical_device);
  absl::StatusOr<int64_t> rows =
      sampler.Write(device_dir, TablesDir(in.env, in.prof_dir), TableSuffix(in.env, in.ts14),
                    in.env.physical_device, end, omit);
  if (!rows.ok()) return rows.status();
  summary.samples = *rows;
  return absl::OkStatus();
}

// What both exports start from: the device model (every launch checked
// against its SoC), the seeded draws and the clock of the run.
struct RunStart {
  DeviceModel model;
  Rng rng;
  ExportSummary summary;
};

absl::StatusOr<RunStart> Begin(const ExportInput& in, const std::vector<Launch>& launches) {
  RunStart out{DeviceModel(in.soc, in.env.noise), Rng(in.seed), ExportSummary{}};
  for (const Launch& l : launches) {
    absl::Status s = out.model.Check(l);
    if (!s.ok()) return s;
  }
  out.summary.freq_mhz = RunFrequency(in, out.rng);
  return out;
}

// --instr-profiling=on: the instruction timeline writer, opened (null when off).
absl::StatusOr<std::unique_ptr<TimelineWriter>> OpenTimeline(const ExportInput& in) {
  if (!in.options.instr_profiling) return nullptr;
  TimelineConfig cfg{
      TablesDir(in.env, in.prof_dir) / absl::StrCat("msprof_", in.ts14, ".json"),
      in.prof_dir / absl::StrCat("device_", in.env.physical_device) / "sqlite" / "biu_perf.db",
      in.env.physical_device, TimelineLayout::kFromWorkload};
  if (const Fault* f = FindFault(in.faults, FaultKind::kTimeline)) {
    cfg.layout = f->layout == "serial" ? TimelineLayout::kSerial : TimelineLayout::kPipelined;
  }
  auto w = std::make_unique<TimelineWriter>(std::move(cfg));
  absl::Status s = w->Open();
  if (!s.ok()) return s;
  return w;
}

}  // namespace

absl::StatusOr<ExportSummary> ExportProfile(const ExportInput& in,
                                            const std::vector<Launch>& launches) {
  absl::StatusOr<RunStart> start = Begin(in, launches);
  if (!start.ok()) return start.status();
  auto& [model, rng, summary] = *start;
  absl::StatusOr<std::vector<PmuColumn>> columns = Columns(in);
  if (!columns.ok()) return columns.status();
  std::vector<PmuColumn> pmu = *columns;
  ReportWriter writer(MakeReportConfig(in, *std::move(columns)));
  absl::Status s = writer.Open(in.process_start_ns + kRuntimeInitNs / 2, kControlStream);
  if (!s.ok()) return s;
  bool sample = in.options.ai_core && in.options.mode == AicMode::kSampleBased;
  SampleCollector sampler(in.soc, in.options.group, in.options.aic_freq_hz, in.process_start_ns);
  UnifiedDb db(in.prof_dir / absl::StrCat("msprof_", in.ts14, ".db"), in.soc,
               in.env.physical_device, std::move(pmu), in.soc.freq_mhz, in.env.cann9_layout,
               in.env.cann9_layout && in.options.task_time == TaskTimeLevel::kL0);
  Timeline timeline{model,
                    &writer,
                    sample ? &sampler : nullptr,
                    &db,
                    FindFault(in.faults, FaultKind::kRatioAboveOne),
                    FindFault(in.faults, FaultKind::kSlow),
                    rng,
                    summary,
                    in.process_start_ns + kRuntimeInitNs};
  absl::StatusOr<std::unique_ptr<TimelineWriter>> instr = OpenTimeline(in);
  if (!instr.ok()) return instr.status();
  if (*instr) timeline.sink = [w = instr->get()](const TaskRecord& t) { w->AddTask(t); };
  for (const Launch& l : launches) timeline.Run(l);
  AddSessionApis(writer, rng, summary.tasks, launches.size());
  s = *instr ? (*instr)->Finish() : absl::OkStatus();
  if (s.ok()) s = writer.Finish();
  if (s.ok())
    s = db.Finish(in.process_start_ns, std::max(in.process_end_ns, timeline.device_free_ns),
                  summary.freq_mhz);
  std::error_code ec;
  std::filesystem::create_directories(
      in.prof_dir / absl::StrCat("device_", in.env.physical_device) / "sqlite", ec);
  if (s.ok())
    s = WriteSampleJson(in, in.prof_dir / absl::StrCat("device_", in.env.physical_device));
  if (s.ok() && sample) s = WriteSamples(in, sampler, timeline.device_free_ns, summary);
  if (s.ok() && in.env.torch_npu_layout) s = WriteProfilerInfo(in);
  if (!s.ok()) return s;
  if (in.options.db_only) {  // --type=db: the unified db is the only export
    std::filesystem::remove_all(TablesDir(in.env, in.prof_dir), ec);
    if (ec) return absl::InternalError(absl::StrCat("--type=db: ", ec.message()));
  }
  return summary;
}

absl::StatusOr<ExportSummary> ExportOpprof(const ExportInput& in,
                                           const std::vector<Launch>& launches) {
  absl::StatusOr<RunStart> start = Begin(in, launches);
  if (!start.ok()) return start.status();
  auto& [model, rng, summary] = *start;
  std::optional<Launch> target;
  std::optional<KernelResult> result;
  auto sink = [&](const TaskRecord& t) {
    if (result || t.launch->task_type == TaskType::kAiCpu) return;
    if (!in.options.kernel_name.empty() && KernelName(*t.launch) != in.options.kernel_name) return;
    target = *t.launch;
    result = *t.result;
  };
  Timeline timeline{model,
                    nullptr,
                    nullptr,
                    nullptr,
                    FindFault(in.faults, FaultKind::kRatioAboveOne),
                    FindFault(in.faults, FaultKind::kSlow),
                    rng,
                    summary,
                    in.process_start_ns + kRuntimeInitNs,
                    sink};
  for (const Launch& l : launches) timeline.Run(l);
  if (!result) {
    return absl::NotFoundError(in.options.kernel_name.empty()
                                   ? std::string("the application launched no AI Core kernel")
                                   : absl::StrCat("the application launched no kernel named '",
                                                  in.options.kernel_name, "' (--kernel-name)"));
  }
  absl::Status s = WriteOpprof(OpprofConfig{in.prof_dir, in.options.op_groups, in.soc,
                                            in.env.physical_device, summary.freq_mhz},
                               *target, *result);
  if (!s.ok()) return s;
  summary.tasks = 1;
  return summary;
}

}  // namespace npuperf::sim
