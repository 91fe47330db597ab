#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/candidates.h"
#include "evidence/layout.h"

// One kernel under two names. CANN 9 PyPTO captures name it `PYPTO_<op>` in
// op_summary (several rows per launch, each with the launch's Stream/Task ID,
// every PMU cell N/A) and `tilefwk_<n>_mix_aic` in task_time and the unified
// db (one row per launch). The two tables are joined here by Stream ID, Task
// ID and start time, so that discovery can say how the names relate and a
// summarize that names the other table's kernel can say which name to use.
// Stateless; thread-safe.
namespace npuperf::evidence {

// The op_summary rows of one candidate that are launches of one task_time
// candidate.
struct NameLink {
  size_t op_summary = 0;  // index into the op_summary candidates
  size_t task_time = 0;   // index into the task_time candidates
  int64_t rows = 0;       // op_summary rows matched
  int64_t launches = 0;   // distinct task_time launches they matched
};

// Joins op_summary candidates (ListCandidates) with task_time candidates
// (ListTaskTimeCandidates): a row matches the task_time launch with its
// Stream ID and Task ID whose [start - 10 us, stop + 10 us] holds the row's
// start (ids wrap in long captures, and the two tables' clocks differ by a
// few us), the nearest start first; without start times, the only task_time
// launch with those ids. Links in op_summary order, each candidate's by rows
// descending. Same-name links are included.
std::vector<NameLink> LinkNames(const std::vector<OpCandidate>& op_summary,
                                const std::vector<OpCandidate>& task_time);

// "op_summary's PYPTO_x and task_time's tilefwk_0_mix_aic are one kernel: 300
// of its 300 op_summary rows share stream/task ids and start times with 100
// of 100 tilefwk_0_mix_aic launches (3 rows per launch); summarize reads
// op_summary (--op-name PYPTO_x), --quick reads task_time (--op-name
// tilefwk_0_mix_aic)".
std::string DescribeLink(const OpCandidate& summary, const OpCandidate& task, const NameLink& link);

// For an error that did not find `op_name` in one table of `run`: "; " and
// DescribeLink of every link between two different names one of which is
// `op_name`, else "". Reads the run's op_summary and task_time (empty when
// either is absent or unreadable).
std::string OtherNameHint(const RunLayout& run, std::string_view op_name);

}  // namespace npuperf::evidence
