#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/launch.h"

namespace npuperf::evidence {

// The discovery candidate table: every kernel of a run, grouped by (exact
// name, task type), with its launches, and whether it is a known incidental
// kernel (input generation, casts, golden comparison, memsets, non-compute
// tasks) that a runner launches around its target. `npuperf list-op-names`
// prints it; quick mode without a name and the service's --op-name-auto use
// PickAutoCandidate. Stateless; thread-safe.

struct OpCandidate {
  std::string op_name;
  std::string task_type;
  std::string op_type;  // OP Type of the first row (empty in task_time)
  int64_t count = 0;
  // Summed positive Task Duration (op_summary) or task_time (quick run), us.
  double total_duration_us = 0;
  // Every launch (row), in start order.
  std::vector<LaunchInfo> launches;
  // Why it is incidental (IncidentalReason), empty when it is not.
  std::string incidental;
};

// The documented incidental-kernel list (docs/evidence.md "Discovery"):
// OP Types (or exact names, or the <Type> of an aclnn<Type>_... name) of
// random-input generation (StatelessNormal, StatelessRandomNormalV2,
// StatelessRandomUniformV2, RandomNormal, RandomUniform, DSARandomNormal,
// DSARandomUniform, DropOutGenMask), dtype casts (Cast), golden comparison
// (IsClose, ReduceAll, Equal), fills and memsets (Fill, ZerosLike, MemSet,
// TensorMove).
const std::vector<std::string_view>& IncidentalKernels();

// Task types that never carry a target kernel: AI_CPU, HCCL,
// COMMUNICATION, DSA_SQE, EVENT_RECORD, PROFILING_ENABLE, ...
const std::vector<std::string_view>& NonComputeTaskTypes();

// Why a kernel is incidental ("incidental kernel Cast", "task type AI_CPU"),
// or "" when it may be a target.
std::string IncidentalReason(std::string_view op_name, std::string_view op_type,
                             std::string_view task_type);

// Every (Op Name, Task Type) of an op_summary / kernel_details table, sorted
// by total duration descending, then name and type ascending. Empty names
// are skipped.
absl::StatusOr<std::vector<OpCandidate>> ListCandidates(
    const std::vector<std::filesystem::path>& parts);

// Accumulates rows into candidates (the readers above and task_time.h use it).
class CandidateTable {
 public:
  void Add(const std::string& op_name, const std::string& task_type, const std::string& op_type,
           LaunchInfo launch);
  // The candidates, sorted as ListCandidates documents, launches ordered.
  std::vector<OpCandidate> Finish();

 private:
  std::map<std::pair<std::string, std::string>, OpCandidate> groups_;
};

// The discovery table npuperf list-op-names prints (the reference's four
// columns, then two):
// "count\ttask_type\ttotal_duration_us\texact_op_name\tlaunches\tincidental",
// durations %.6f; launches as "#<index>:<stream>/<task>" for up to eight, then
// "+<n> more"; incidental "-" or the reason.
std::string FormatCandidatesTsv(const std::vector<OpCandidate>& candidates);

// The one candidate that is not incidental; FailedPrecondition listing the
// candidates when there are none or several (never the longest one by
// default). `source` names the file in the message.
absl::StatusOr<OpCandidate> PickAutoCandidate(const std::vector<OpCandidate>& candidates,
                                              std::string_view source);

}  // namespace npuperf::evidence
