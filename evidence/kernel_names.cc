#include "evidence/kernel_names.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "evidence/str_util.h"
#include "evidence/task_time.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

// How far outside a task_time launch an op_summary row may start.
constexpr int64_t kSlackNs = 10'000;

// One task_time launch, by its position in the candidates.
struct TaskRef {
  size_t cand = 0, launch = 0;
  bool timed = false;
  int64_t start = 0, stop = 0;
};
using ById = std::map<std::pair<int64_t, int64_t>, std::vector<TaskRef>>;

ById IndexById(const std::vector<OpCandidate>& task_time) {
  ById by_id;
  for (size_t c = 0; c < task_time.size(); ++c) {
    for (size_t i = 0; i < task_time[c].launches.size(); ++i) {
      const LaunchInfo& l = task_time[c].launches[i];
      if (!l.stream_id || !l.task_id) continue;
      TaskRef r{c, i, l.start_ns.has_value(), 0, 0};
      if (r.timed) {
        r.start = *l.start_ns;
        r.stop = r.start + std::llround(l.duration_us * 1000.0);
      }
      by_id[{*l.stream_id, *l.task_id}].push_back(r);
    }
  }
  return by_id;
}

// The task_time launch an op_summary row belongs to, or null.
const TaskRef* Match(const ById& by_id, const LaunchInfo& row) {
  if (!row.stream_id || !row.task_id) return nullptr;
  auto it = by_id.find({*row.stream_id, *row.task_id});
  if (it == by_id.end()) return nullptr;
  const std::vector<TaskRef>& refs = it->second;
  const TaskRef* best = nullptr;
  if (row.start_ns) {
    const int64_t s = *row.start_ns;
    for (const TaskRef& r : refs) {
      if (!r.timed || s < r.start - kSlackNs || s > r.stop + kSlackNs) continue;
      if (best == nullptr || std::llabs(s - r.start) < std::llabs(s - best->start)) best = &r;
    }
    if (best != nullptr) return best;
  }
  return refs.size() == 1 ? &refs.front() : nullptr;
}

}  // namespace

std::vector<NameLink> LinkNames(const std::vector<OpCandidate>& op_summary,
                                const std::vector<OpCandidate>& task_time) {
  const ById by_id = IndexById(task_time);
  std::vector<NameLink> out;
  for (size_t c = 0; c < op_summary.size(); ++c) {
    std::map<size_t, std::pair<int64_t, std::set<size_t>>> per;  // cand -> rows, launches
    for (const LaunchInfo& row : op_summary[c].launches) {
      const TaskRef* m = Match(by_id, row);
      if (m == nullptr) continue;
      auto& [rows, launches] = per[m->cand];
      ++rows;
      launches.insert(m->launch);
    }
    std::vector<NameLink> mine;
    for (const auto& [cand, seen] : per) {
      mine.push_back({c, cand, seen.first, static_cast<int64_t>(seen.second.size())});
    }
    std::stable_sort(mine.begin(), mine.end(),
                     [](const NameLink& a, const NameLink& b) { return a.rows > b.rows; });
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

std::string DescribeLink(const OpCandidate& summary, const OpCandidate& task,
                         const NameLink& link) {
  std::string per;
  if (link.launches > 0 && link.rows > link.launches && link.rows % link.launches == 0) {
    per = Cat(" (", link.rows / link.launches, " rows per launch)");
  }
  return Cat("op_summary's ", summary.op_name, " and task_time's ", task.op_name,
             " are one kernel: ", link.rows, " of its ", summary.count,
             " op_summary rows share stream/task ids and start times with ", link.launches, " of ",
             task.count, " ", task.op_name, " launches", per,
             "; summarize reads op_summary (--op-name ", summary.op_name,
             "), --quick reads task_time (--op-name ", task.op_name, ")");
}

std::string OtherNameHint(const RunLayout& run, std::string_view op_name) {
  if (run.op_summary.empty() || run.task_time.empty()) return "";
  absl::StatusOr<std::vector<OpCandidate>> op = ListCandidates(run.op_summary);
  absl::StatusOr<std::vector<OpCandidate>> tt = ListTaskTimeCandidates(run.task_time);
  if (!op.ok() || !tt.ok()) return "";
  std::string out;
  for (const NameLink& link : LinkNames(*op, *tt)) {
    const OpCandidate& s = (*op)[link.op_summary];
    const OpCandidate& t = (*tt)[link.task_time];
    if (s.op_name == t.op_name || (s.op_name != op_name && t.op_name != op_name)) continue;
    out += Cat("; ", DescribeLink(s, t, link));
  }
  return out;
}

}  // namespace npuperf::evidence
