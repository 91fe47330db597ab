#include "evidence/layout.h"

#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"
#include "evidence/unified_db.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;
using Json = nlohmann::json;

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string Base(const fs::path& p) { return p.filename().string(); }

std::optional<Json> ReadJson(const fs::path& file) {
  // nlohmann reads the stream buffer directly: a directory would throw from it.
  if (!IsFile(file)) return std::nullopt;
  std::ifstream in(file);
  if (!in) return std::nullopt;
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// device_<id> directories of a run that hold `sub` (a file or directory).
std::vector<std::pair<int, fs::path>> DeviceDirs(const fs::path& run, std::string_view sub) {
  std::vector<std::pair<int, fs::path>> out;
  std::error_code ec;
  for (const fs::path& p : SortedChildren(run, ec)) {
    const std::string name = p.filename().string();
    std::string_view base = name;
    int id = -1;
    if (!internal::ConsumePrefix(&base, "device_") ||
        !absl::SimpleAtoi(internal::ToAbsl(base), &id) || !IsDir(p)) {
      continue;
    }
    std::error_code missing;
    if (sub.empty() || fs::exists(p / std::string(sub), missing)) out.emplace_back(id, p);
  }
  return out;
}

std::string JsonText(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number()) return j.dump();
  return "";
}

// device_<id>/info.json.<id> and device_<id>/sample.json of the chosen device.
void ReadDeviceFiles(const fs::path& device_dir, int id, RunLayout* out) {
  fs::path info = device_dir / Cat("info.json.", id);
  if (std::optional<Json> j = ReadJson(info); j && j->contains("DeviceInfo") &&
                                              (*j)["DeviceInfo"].is_array() &&
                                              !(*j)["DeviceInfo"].empty()) {
    const Json& d = (*j)["DeviceInfo"][0];
    double mhz = 0;
    if (d.contains("aic_frequency") && absl::SimpleAtod(JsonText(d["aic_frequency"]), &mhz) &&
        mhz > 0) {
      out->device.aic_mhz = mhz;
    }
    if (d.contains("ai_core_num") && d["ai_core_num"].is_number_integer())
      out->device.cube_cores = d["ai_core_num"].get<int>();
    if (d.contains("aiv_num") && d["aiv_num"].is_number_integer())
      out->device.vector_cores = d["aiv_num"].get<int>();
    out->device.source = info;
    out->notes.push_back(Cat("device facts from ", info.string()));
  }
  if (std::optional<Json> j = ReadJson(device_dir / "sample.json");
      j && j->contains("ai_core_metrics") && (*j)["ai_core_metrics"].is_string()) {
    std::string group = (*j)["ai_core_metrics"].get<std::string>();
    if (internal::EndsWith(group, "Exct")) group.resize(group.size() - 4);
    out->metric_group = group;
  }
}

absl::Status ReadTables(RunLayout* out, bool torch) {
  struct Table {
    std::string_view name;
    std::vector<fs::path>* parts;
  };
  for (Table t : {Table{torch ? "kernel_details" : "op_summary", &out->op_summary},
                  Table{"task_time", &out->task_time}, Table{"op_statistic", &out->op_statistic},
                  Table{"api_statistic", &out->api_statistic}}) {
    absl::StatusOr<std::vector<fs::path>> parts = FindCsvParts(out->table_dir, t.name, &out->notes);
    if (!parts.ok()) return parts.status();
    *t.parts = *std::move(parts);
    if (!t.parts->empty()) {
      out->notes.push_back(
          Cat(t.name, ": ", Base(t.parts->front()),
              t.parts->size() > 1 ? Cat(" (+", t.parts->size() - 1, " slices)") : ""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RunLayout> TorchRun(const fs::path& run) {
  RunLayout out;
  out.kind = RunLayoutKind::kAscendProfilerOutput;
  out.run_dir = run;
  out.table_dir = run / "ASCEND_PROFILER_OUTPUT";
  out.notes.push_back(Cat("torch_npu profiler export: ", out.table_dir.string()));
  std::error_code ec;
  for (const fs::path& p : SortedChildren(run, ec)) {
    std::string base = Base(p);
    if (!internal::StartsWith(base, "profiler_info") || !internal::EndsWith(base, ".json"))
      continue;
    std::optional<Json> j = ReadJson(p);
    if (!j) continue;
    const Json* cfg = &*j;
    for (const char* key : {"config", "experimental_config", "_aic_metrics"}) {
      cfg = cfg->is_object() && cfg->contains(key) ? &(*cfg)[key] : nullptr;
      if (cfg == nullptr) break;
    }
    if (cfg != nullptr && cfg->is_string())
      out.metric_group = GroupOfAclMetric(cfg->get<std::string>());
  }
  absl::Status s = ReadTables(&out, /*torch=*/true);
  if (!s.ok()) return s;
  return out;
}

// The run's msprof_<ts>.db (empty when none); two is an error.
absl::StatusOr<fs::path> FindUnifiedDb(const fs::path& run) {
  std::vector<fs::path> dbs;
  std::error_code ec;
  for (const fs::path& p : SortedChildren(run, ec)) {
    if (IsUnifiedDbName(p) && IsFile(p)) dbs.push_back(p);
  }
  if (dbs.size() > 1) {
    return absl::FailedPreconditionError(
        Cat("several unified dbs in ", run.string(), ": ", dbs.front().filename().string(), ", ",
            dbs[1].filename().string(), " (one msprof export per PROF_* is expected)"));
  }
  return dbs.empty() ? fs::path() : dbs.front();
}

absl::StatusOr<RunLayout> ProfRun(const fs::path& run, int device_id) {
  RunLayout out;
  out.run_dir = run;
  absl::StatusOr<fs::path> db = FindUnifiedDb(run);
  if (!db.ok()) return db.status();
  out.unified_db = *db;
  if (!out.unified_db.empty()) out.notes.push_back(Cat("unified db: ", out.unified_db.string()));
  std::vector<std::pair<int, fs::path>> summaries = DeviceDirs(run, "summary");
  std::vector<std::pair<int, fs::path>> devices = DeviceDirs(run, "");
  if (IsDir(run / "mindstudio_profiler_output")) {
    out.kind = RunLayoutKind::kMindstudioOutput;
    out.table_dir = run / "mindstudio_profiler_output";
    out.notes.push_back(Cat("CANN 8.x export: ", out.table_dir.string()));
    if (!summaries.empty()) out.notes.push_back("device_<id>/summary also present; not read");
  } else {
    std::vector<std::pair<int, fs::path>> chosen;
    for (const auto& d : summaries) {
      if (device_id < 0 || d.first == device_id) chosen.push_back(d);
    }
    if (chosen.size() > 1) {
      return absl::FailedPreconditionError(Cat("several devices have a summary/ in ", run.string(),
                                               " (pre-8.0 layout); pass the device (--device)"));
    }
    if (chosen.empty() && !out.unified_db.empty()) {
      out.kind = RunLayoutKind::kUnifiedDbOnly;
      out.table_dir = run;
      out.notes.push_back("no text export: the unified db is the source");
      for (const auto& [id, dir] : devices) {
        if (devices.size() == 1 || id == device_id) ReadDeviceFiles(dir, id, &out);
      }
      return out;
    }
    if (chosen.empty()) {
      bool raw = IsDir(run / "host" / "data") || !devices.empty();
      return absl::NotFoundError(
          Cat("no mindstudio_profiler_output (CANN 8.x export) and no device_<id>/summary (before "
              "CANN 8.0) in ",
              run.string(),
              raw ? " (it holds raw data only: was msprof's export step run? msprof --export=on "
                    "--output=<PROF dir>; or --type=db for msprof_<ts>.db)"
                  : ""));
    }
    out.kind = RunLayoutKind::kDeviceSummary;
    out.device_id = chosen.front().first;
    out.table_dir = chosen.front().second / "summary";
    out.notes.push_back(Cat("pre-CANN-8.0 tree: ", out.table_dir.string()));
  }
  for (const auto& [id, dir] : devices) {
    if (out.device_id >= 0 ? id == out.device_id : devices.size() == 1 || id == device_id) {
      ReadDeviceFiles(dir, id, &out);
    }
  }
  absl::Status s = ReadTables(&out, /*torch=*/false);
  if (!s.ok()) return s;
  return out;
}

// msprof names a run PROF_<digits>_<time>_<random>; PROF_<Metric> is a group's.
bool IsMsprofRunName(std::string_view base) {
  return internal::ConsumePrefix(&base, "PROF_") && !base.empty() && base[0] >= '0' &&
         base[0] <= '9';
}

bool HasUnifiedDb(const fs::path& dir) {
  absl::StatusOr<fs::path> db = FindUnifiedDb(dir);
  return !db.ok() || !db->empty();
}

bool IsProfRun(const fs::path& dir) {
  return IsDir(dir / "mindstudio_profiler_output") || !DeviceDirs(dir, "summary").empty() ||
         internal::StartsWith(Base(dir), "PROF_") || HasUnifiedDb(dir);
}

bool IsAscendPt(const fs::path& dir) {
  return IsDir(dir / "ASCEND_PROFILER_OUTPUT") || internal::EndsWith(Base(dir), "_ascend_pt");
}

bool IsOpprof(const fs::path& dir) {
  return internal::StartsWith(Base(dir), "OPPROF_") || IsFile(dir / "OpBasicInfo.csv") ||
         IsFile(dir / "summary.jsonl");
}

bool IsGroup(const fs::path& dir) {
  if (IsDir(dir / "PROF_Sample")) return true;
  for (const std::string& m : SevenMetrics()) {
    if (IsDir(dir / ("PROF_" + m))) return true;
  }
  return false;
}

std::string JoinPaths(const std::vector<fs::path>& paths) {
  std::string out;
  for (const fs::path& p : paths) out += Cat(out.empty() ? "" : ", ", p.string());
  return out;
}

}  // namespace

std::string_view Name(InputKind k) {
  switch (k) {
    case InputKind::kProfGroup: return "prof_group";
    case InputKind::kProfRun: return "prof_run";
    case InputKind::kAscendPt: return "ascend_pt";
    case InputKind::kOpprof: return "opprof";
  }
  return "";
}

std::string_view Name(RunLayoutKind k) {
  switch (k) {
    case RunLayoutKind::kMindstudioOutput: return "mindstudio_profiler_output";
    case RunLayoutKind::kDeviceSummary: return "device_summary";
    case RunLayoutKind::kAscendProfilerOutput: return "ascend_profiler_output";
    case RunLayoutKind::kUnifiedDbOnly: return "msprof_db";
  }
  return "";
}

std::string GroupOfAclMetric(std::string_view acl) {
  static const std::pair<std::string_view, std::string_view> kGroups[] = {
      {"ACL_AICORE_PIPE_UTILIZATION", "PipeUtilization"},
      {"ACL_AICORE_ARITHMETIC_UTILIZATION", "ArithmeticUtilization"},
      {"ACL_AICORE_MEMORY_BANDWIDTH", "Memory"},
      {"ACL_AICORE_L0B_AND_WIDTH", "MemoryL0"},
      {"ACL_AICORE_MEMORY_UB", "MemoryUB"},
      {"ACL_AICORE_L2_CACHE", "L2Cache"},
      {"ACL_AICORE_RESOURCE_CONFLICT_RATIO", "ResourceConflictRatio"},
  };
  for (const auto& [k, v] : kGroups) {
    if (k == acl) return std::string(v);
  }
  return "";
}

absl::StatusOr<RunLayout> DetectRun(const fs::path& dir, int device_id) {
  if (!IsDir(dir)) return absl::NotFoundError(Cat("'", dir.string(), "' is not a directory."));
  if (IsDir(dir / "ASCEND_PROFILER_OUTPUT")) return TorchRun(dir);
  if (IsDir(dir / "mindstudio_profiler_output") || !DeviceDirs(dir, "").empty() ||
      IsMsprofRunName(Base(dir)) || HasUnifiedDb(dir)) {
    return ProfRun(dir, device_id);
  }
  std::vector<fs::path> runs;
  std::error_code ec;
  for (const fs::path& p : SortedChildren(dir, ec)) {
    if (IsDir(p) && (internal::StartsWith(Base(p), "PROF_") || IsAscendPt(p))) runs.push_back(p);
  }
  if (runs.size() == 1) return DetectRun(runs.front(), device_id);
  if (runs.size() > 1) {
    return absl::FailedPreconditionError(Cat("expected exactly one PROF_* (or *_ascend_pt) in ",
                                             dir.string(), "; found ", runs.size(), ": ",
                                             JoinPaths(runs)));
  }
  return absl::NotFoundError(
      Cat("no PROF_* directory in ", dir.string(),
          " (looked for PROF_*/mindstudio_profiler_output, "
          "PROF_*/device_<id>/summary and *_ascend_pt/ASCEND_PROFILER_OUTPUT)"));
}

absl::StatusOr<DetectedInput> DetectInput(const fs::path& dir) {
  if (dir.empty()) {
    return absl::InvalidArgumentError(
        "the input directory is empty (''): give a PROF_GROUP, a PROF_* run, an msprof --output, "
        "an OPPROF_* or a *_ascend_pt directory");
  }
  if (IsUnifiedDbName(dir) && IsFile(dir)) {
    absl::StatusOr<DetectedInput> in =
        DetectInput(dir.parent_path().empty() ? "." : dir.parent_path());
    if (in.ok()) in->notes.push_back(Cat(dir.string(), ": the unified db of that run"));
    return in;
  }
  if (!IsDir(dir)) return absl::NotFoundError(Cat("'", dir.string(), "' is not a directory."));
  // The export directory itself (what is often kept of a capture): its run.
  const fs::path plain = dir.filename().empty() ? dir.parent_path() : dir;
  if ((Base(plain) == "mindstudio_profiler_output" || Base(plain) == "ASCEND_PROFILER_OUTPUT") &&
      !plain.parent_path().empty()) {
    absl::StatusOr<DetectedInput> in = DetectInput(plain.parent_path());
    if (in.ok()) in->notes.push_back(Cat(dir.string(), ": the export directory of that run"));
    return in;
  }
  DetectedInput in;
  in.path = dir;
  auto found = [&](InputKind kind, std::string what) -> absl::StatusOr<DetectedInput> {
    in.kind = kind;
    in.notes.push_back(Cat(dir.string(), ": ", what));
    return in;
  };
  if (IsGroup(dir)) return found(InputKind::kProfGroup, "PROF_GROUP (PROF_<Metric> runs)");
  if (IsOpprof(dir)) return found(InputKind::kOpprof, "msprof op output");
  if (IsAscendPt(dir) && IsDir(dir / "ASCEND_PROFILER_OUTPUT"))
    return found(InputKind::kAscendPt, "torch_npu profiler export");
  if (IsProfRun(dir) && !internal::StartsWith(Base(dir), "OPPROF_"))
    return found(InputKind::kProfRun, "one msprof run");
  std::vector<fs::path> inner;
  std::error_code ec;
  for (const fs::path& p : SortedChildren(dir, ec)) {
    std::string base = Base(p);
    if (IsDir(p) && (internal::StartsWith(base, "PROF_") || internal::StartsWith(base, "OPPROF_") ||
                     IsAscendPt(p))) {
      inner.push_back(p);
    }
  }
  if (inner.size() == 1) {
    return DetectInput(inner.front());
  }
  if (inner.size() > 1) {
    return absl::FailedPreconditionError(Cat("expected one profiling output in ", dir.string(),
                                             "; found ", inner.size(), ": ", JoinPaths(inner),
                                             " (name the one to read)"));
  }
  return absl::NotFoundError(
      Cat("'", dir.string(),
          "' holds no profiling output: not a PROF_GROUP (PROF_<Metric>/), a PROF_* run "
          "(mindstudio_profiler_output/ or device_<id>/summary/), an OPPROF_* dir or a torch_npu "
          "*_ascend_pt dir (ASCEND_PROFILER_OUTPUT/)"));
}

absl::StatusOr<std::optional<RunLayout>> DetectGroupRun(const fs::path& group,
                                                        std::string_view metric, int device_id,
                                                        std::string* why) {
  fs::path dir = group / Cat("PROF_", metric);
  if (!IsDir(dir)) {
    *why = Cat(dir.string(), " missing");
    return std::optional<RunLayout>();
  }
  absl::StatusOr<RunLayout> run = DetectRun(dir, device_id);
  if (!run.ok()) {
    if (run.status().code() != absl::StatusCode::kNotFound) return run.status();
    *why = internal::Msg(run.status());
    return std::optional<RunLayout>();
  }
  return std::optional<RunLayout>(*std::move(run));
}

}  // namespace npuperf::evidence
