#include "evidence/candidates.h"

#include <algorithm>
#include <cstdio>

#include "evidence/columns.h"
#include "evidence/csv_reader.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

constexpr size_t kShownLaunches = 8;

bool Listed(const std::vector<std::string_view>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// "aclnnCast_CastAiCore_Cast" -> "Cast"; "" when not an aclnn name.
std::string_view AclnnType(std::string_view name) {
  if (!internal::ConsumePrefix(&name, "aclnn")) return {};
  return name.substr(0, name.find('_'));
}

std::optional<int64_t> IntOf(absl::StatusOr<std::optional<double>> v) {
  if (!v.ok() || !v->has_value()) return std::nullopt;
  return static_cast<int64_t>(**v);
}

}  // namespace

const std::vector<std::string_view>& IncidentalKernels() {
  static const auto* const kList = new std::vector<std::string_view>{"StatelessNormal",
                                                                     "StatelessRandomNormalV2",
                                                                     "StatelessRandomUniformV2",
                                                                     "RandomNormal",
                                                                     "RandomUniform",
                                                                     "DSARandomNormal",
                                                                     "DSARandomUniform",
                                                                     "DropOutGenMask",
                                                                     "Cast",
                                                                     "IsClose",
                                                                     "ReduceAll",
                                                                     "Equal",
                                                                     "Fill",
                                                                     "ZerosLike",
                                                                     "MemSet",
                                                                     "TensorMove"};
  return *kList;
}

const std::vector<std::string_view>& NonComputeTaskTypes() {
  static const auto* const kList = new std::vector<std::string_view>{"AI_CPU",
                                                                     "HCCL",
                                                                     "HCCL_AI_CPU",
                                                                     "COMMUNICATION",
                                                                     "DSA_SQE",
                                                                     "EVENT_RECORD",
                                                                     "EVENT_WAIT",
                                                                     "PROFILING_ENABLE",
                                                                     "PROFILING_DISABLE",
                                                                     "TASK_TIMEOUT_SET",
                                                                     "WRITE_BACK",
                                                                     "MEMCPY_ASYNC",
                                                                     "N/A"};
  return *kList;
}

std::string IncidentalReason(std::string_view op_name, std::string_view op_type,
                             std::string_view task_type) {
  if (Listed(NonComputeTaskTypes(), task_type)) return Cat("task type ", task_type);
  for (std::string_view v : {op_type, op_name, AclnnType(op_name)}) {
    if (!v.empty() && Listed(IncidentalKernels(), v)) return Cat("incidental kernel ", v);
  }
  return "";
}

void CandidateTable::Add(const std::string& op_name, const std::string& task_type,
                         const std::string& op_type, LaunchInfo launch) {
  OpCandidate& g = groups_[{op_name, task_type}];
  if (g.count == 0) {
    g.op_name = op_name;
    g.task_type = task_type;
    g.op_type = op_type;
  }
  ++g.count;
  if (launch.duration_us > 0) g.total_duration_us += launch.duration_us;
  g.launches.push_back(std::move(launch));
}

std::vector<OpCandidate> CandidateTable::Finish() {
  std::vector<OpCandidate> out;
  out.reserve(groups_.size());
  for (auto& [key, g] : groups_) {
    OrderLaunches(&g.launches);
    g.incidental = IncidentalReason(g.op_name, g.op_type, g.task_type);
    out.push_back(std::move(g));
  }
  groups_.clear();
  std::stable_sort(out.begin(), out.end(), [](const OpCandidate& a, const OpCandidate& b) {
    return a.total_duration_us > b.total_duration_us;
  });
  return out;
}

absl::StatusOr<std::vector<OpCandidate>> ListCandidates(const std::vector<fs::path>& parts) {
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(parts);
  if (!opened.ok()) return opened.status();
  CsvSliceReader& csv = **opened;
  int name = FindColumn(csv, "Op Name");
  if (name < 0) {
    return absl::InvalidArgumentError(
        Cat(parts.front().string(), ": no 'Op Name' (or 'Name') column"));
  }
  int type = FindColumn(csv, "Task Type"), op_type = FindColumn(csv, "OP Type");
  int duration = FindColumn(csv, "Task Duration(us)"),
      start = FindColumn(csv, "Task Start Time(us)");
  int stream = FindColumn(csv, "Stream ID"), task = FindColumn(csv, "Task ID");
  CandidateTable table;
  while (true) {
    absl::StatusOr<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    std::string op(csv.Cell(name));
    if (op.empty()) continue;
    LaunchInfo l;
    absl::StatusOr<std::optional<double>> d = csv.Number(duration);
    if (!d.ok()) return d.status();
    l.duration_us = d->value_or(0);
    absl::StatusOr<std::optional<double>> s = csv.Number(start);
    if (s.ok()) l.start_us = *s;  // a malformed start only loses the order
    if (start >= 0) l.start_ns = ParseMicrosAsNs(csv.Cell(start));
    l.stream_id = IntOf(csv.Number(stream));
    l.task_id = IntOf(csv.Number(task));
    l.where = csv.Where();
    table.Add(op, type < 0 ? "" : std::string(csv.Cell(type)),
              op_type < 0 ? "" : std::string(csv.Cell(op_type)), std::move(l));
  }
  return table.Finish();
}

std::string FormatCandidatesTsv(const std::vector<OpCandidate>& candidates) {
  std::string out = "count\ttask_type\ttotal_duration_us\texact_op_name\tlaunches\tincidental\n";
  for (const OpCandidate& c : candidates) {
    char dur[64];
    std::snprintf(dur, sizeof(dur), "%.6f", c.total_duration_us);
    std::string launches;
    for (size_t i = 0; i < c.launches.size() && i < kShownLaunches; ++i) {
      const LaunchInfo& l = c.launches[i];
      launches += Cat(i ? "," : "", "#", l.index, ":", l.stream_id ? Cat(*l.stream_id) : "N/A", "/",
                      l.task_id ? Cat(*l.task_id) : "N/A");
    }
    // The unified db keeps only the first launches of a kernel: count them all.
    size_t total = std::max(c.launches.size(), static_cast<size_t>(std::max<int64_t>(c.count, 0)));
    if (total > kShownLaunches && !c.launches.empty())
      launches += Cat(",+", total - std::min(c.launches.size(), kShownLaunches), " more");
    out += Cat(c.count, "\t", c.task_type, "\t", dur, "\t", c.op_name, "\t", launches, "\t",
               c.incidental.empty() ? "-" : c.incidental, "\n");
  }
  return out;
}

absl::StatusOr<OpCandidate> PickAutoCandidate(const std::vector<OpCandidate>& candidates,
                                              std::string_view source) {
  std::vector<const OpCandidate*> targets;
  for (const OpCandidate& c : candidates) {
    if (c.incidental.empty()) targets.push_back(&c);
  }
  if (targets.size() == 1) return *targets.front();
  std::string list;
  for (const OpCandidate& c : candidates) {
    list += Cat("\n  ", c.op_name, " [", c.task_type, ", ", c.count, " launches",
                c.incidental.empty() ? "" : Cat(", ", c.incidental), "]");
  }
  return absl::FailedPreconditionError(
      Cat(targets.empty() ? "no" : Cat(targets.size()), " candidate target kernels in ", source,
          " (exactly one that is not a known incidental kernel is needed to pick one without a "
          "name); give the exact name:",
          list.empty() ? std::string("\n  (no kernels)") : list));
}

}  // namespace npuperf::evidence
