#include "evidence/archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "evidence/evidence_json.h"
#include "evidence/layout.h"
#include "evidence/parallel.h"
#include "evidence/per_core.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

absl::Status PosixError(const fs::path& path, std::string_view op) {
  int err = errno;
  std::string msg = Cat(op, " ", path.string(), ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EEXIST) return absl::AlreadyExistsError(msg);
  return absl::InternalError(msg);
}

absl::Status CopyFile(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec)
    return absl::InternalError(
        Cat("copy ", from.string(), " -> ", to.string(), ": ", ec.message()));
  return absl::OkStatus();
}

// One file of the archive: where it comes from and goes, and the context an
// error names.
struct Copy {
  fs::path from;
  fs::path to;
  std::string context;
};

// The slices of one table of one run as <table>_<tag>[_slice_<k>].csv.
void PlanParts(const std::vector<fs::path>& parts, std::string_view table, const std::string& tag,
               const fs::path& round_dir, std::string_view context, std::vector<Copy>* plan) {
  for (size_t k = 0; k < parts.size(); ++k) {
    std::string dest = parts.size() == 1 ? Cat(table, "_", tag, ".csv")
                                         : Cat(table, "_", tag, "_slice_", k, ".csv");
    plan->push_back({parts[k], round_dir / dest, std::string(context)});
  }
}

// The four tables of one run (layout.h), tagged with its metric group.
void PlanRun(const RunLayout& run, const std::string& tag, const fs::path& round_dir,
             std::vector<Copy>* plan) {
  bool torch = run.kind == RunLayoutKind::kAscendProfilerOutput;
  struct Table {
    std::string_view name;
    const std::vector<fs::path>* parts;
  };
  for (Table t : {Table{torch ? "kernel_details" : "op_summary", &run.op_summary},
                  Table{"op_statistic", &run.op_statistic}, Table{"task_time", &run.task_time},
                  Table{"api_statistic", &run.api_statistic}}) {
    PlanParts(*t.parts, t.name, tag, round_dir, Cat("archive ", tag), plan);
  }
}

// Copies the planned files on DefaultFileThreads() threads (parallel.h): at
// 200,000 rows the copies are most of a summarize's time. Returns the number
// copied, or the error of the first failing copy in plan order.
absl::StatusOr<int> RunCopies(const std::vector<Copy>& plan) {
  std::vector<absl::Status> results(plan.size());
  ForEachIndex(plan.size(), DefaultFileThreads(),
               [&](size_t i) { results[i] = CopyFile(plan[i].from, plan[i].to); });
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!results[i].ok()) {
      return plan[i].context.empty() ? results[i] : internal::Annotate(results[i], plan[i].context);
    }
  }
  return static_cast<int>(plan.size());
}

}  // namespace

bool IsValidRoundName(std::string_view name) {
  if (!internal::ConsumePrefix(&name, "round_") || name.empty()) return false;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

absl::StatusOr<fs::path> ReserveRound(const fs::path& ops_dir, std::string_view round_name) {
  std::error_code ec;
  if (!fs::is_directory(ops_dir, ec)) {
    return absl::NotFoundError(Cat("'", ops_dir.string(), "' is not a directory."));
  }
  fs::path perf = ops_dir / "docs" / "perf";
  fs::create_directories(perf, ec);
  if (ec) return absl::InternalError(Cat("create ", perf.string(), ": ", ec.message()));
  if (!round_name.empty()) {
    if (!IsValidRoundName(round_name)) {
      return absl::InvalidArgumentError(
          Cat("--round-name must match round_NNN; got '", round_name, "'"));
    }
    fs::path dir = perf / std::string(round_name);
    if (::mkdir(dir.c_str(), 0755) != 0) {
      if (errno == EEXIST) {
        return absl::AlreadyExistsError(Cat("round directory already exists: ", dir.string()));
      }
      return PosixError(dir, "mkdir");
    }
    return dir;
  }
  for (int i = 1; i < 1000000; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "round_%03d", i);
    fs::path dir = perf / name;
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) return PosixError(dir, "mkdir");
  }
  return absl::ResourceExhaustedError(Cat("no free round under ", perf.string()));
}

absl::Status WriteFileAtomic(const fs::path& path, std::string_view content) {
  fs::path tmp = path.parent_path() / Cat(".", path.filename().string(), ".", ::getpid(), ".tmp");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return PosixError(tmp, "open");
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = PosixError(tmp, "write");
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return PosixError(tmp, "fsync/close");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status s = PosixError(path, "rename");
    ::unlink(tmp.c_str());
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ArchiveGroupCsvs(const fs::path& prof_group, const fs::path& round_dir) {
  std::vector<Copy> plan;
  for (const std::string& metric : SevenMetrics()) {
    std::string why;
    absl::StatusOr<std::optional<RunLayout>> run = DetectGroupRun(prof_group, metric, -1, &why);
    if (!run.ok() || !run->has_value()) continue;  // BuildEvidence reported it
    PlanRun(**run, metric, round_dir, &plan);
  }
  return RunCopies(plan);
}

absl::StatusOr<int> ArchiveInputCsvs(const Evidence& ev, const fs::path& round_dir) {
  absl::StatusOr<DetectedInput> in = DetectInput(ev.prof_group);
  if (!in.ok()) return in.status();
  const std::string tag = ev.metrics.empty() ? "run" : ev.metrics.front().group;
  std::vector<Copy> plan;
  switch (in->kind) {
    case InputKind::kProfGroup: return ArchiveGroupCsvs(in->path, round_dir);
    case InputKind::kProfRun:
    case InputKind::kAscendPt: {
      absl::StatusOr<RunLayout> run = DetectRun(in->path);
      if (!run.ok()) return run.status();
      PlanRun(*run, tag, round_dir, &plan);
      break;
    }
    case InputKind::kOpprof:
      for (const MetricGroup& g : ev.metrics) {
        PlanParts({g.source}, "opprof", g.group, round_dir, "", &plan);
      }
      break;
  }
  return RunCopies(plan);
}

absl::StatusOr<int> WriteRound(const Evidence& ev, const fs::path& round_dir, Lang lang) {
  absl::StatusOr<int> copied = ArchiveInputCsvs(ev, round_dir);
  if (!copied.ok()) return copied.status();
  if (!ev.per_core.cores.empty()) {
    absl::Status s =
        WriteFileAtomic(round_dir / "per_core_cycles.csv", FormatCoreCyclesCsv(ev.per_core));
    if (!s.ok()) return s;
    ++*copied;  // a CSV of the round like the others (issue 15: 29 written, 28 counted)
  }
  SummaryOptions options{lang, round_dir};
  for (const auto& [name, content] :
       {std::pair<const char*, std::string>{"summary.txt", RenderSummary(ev, options)},
        {"evidence.json", ToJson(ev)},
        {"evidence_status.json", ToStatusJson(ev)}}) {
    absl::Status s = WriteFileAtomic(round_dir / name, content);
    if (!s.ok()) return s;
  }
  return *copied;
}

}  // namespace npuperf::evidence
