#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/evidence.h"

namespace npuperf::evidence {

// Per-core load from the sample-based run (`--aic-mode=sample-based`):
// device_<id>/sqlite/aicore.db (AIC) and ai_vector_core.db (AIV), table
// AICoreOriginalData(coreid, task_cyc, [replayid], ...). The only file of
// evidence/ that opens SQLite, always read-only (style.md R1).
//
// The data is process-scoped: it sums every kernel of the process, so the
// result is labelled kProcessScopeUnattributed and never attributed to the
// target op (reference §2.9). Stateless; thread-safe.

// Balance thresholds (msprof-op-guide §4.2; reference §9.4): spread
// (max - min) / max below kSpreadWarningPct is PASS, below
// kSpreadCriticalPct WARNING, else CRITICAL; the halves' averages
// kHalfGapHintPct or more apart (n >= 4) hint at NUMA / L2-slice skew.
inline constexpr double kSpreadWarningPct = 10;
inline constexpr double kSpreadCriticalPct = 30;
inline constexpr double kHalfGapHintPct = 2;

// Summed positive task_cyc per core (replay group 0 only when the column
// exists), ordered by coreid. time_us is left 0.
absl::StatusOr<std::vector<CoreCycles>> ReadCoreCycles(const std::filesystem::path& db);

// Load-balance figures of `cores` given the core time of the kernel (the
// slowest core is taken to have run for `core_time_us`, as the reference
// does). Fills everything but status/device/db/core_type.
// REQUIRES: !cores.empty(), core_time_us > 0, max cycles > 0.
void ComputeBalance(std::vector<CoreCycles> cores, double core_time_us, PerCore* out);

// The sample db of a core type: aicore.db (kAic) or ai_vector_core.db (kAiv).
// REQUIRES: core_type != kNone.
std::string_view SampleDbName(CoreType core_type);

// The whole step for one core type: finds its SampleDbName under
// <sample_run>/[PROF_*/]device_*/sqlite/ (`sample_run` is the sample run's
// msprof --output, e.g. <prof_group>/PROF_Sample, or its PROF_* itself; of
// `device_id`, or of the only device that has one), reads it and computes the
// balance. Every failure is expressed in PerCore::status (and
// status_detail); never fails.
PerCore LoadPerCore(const std::filesystem::path& sample_run, CoreType core_type,
                    double core_time_us, int device_id);

// Writes "coreid,task_cycles" lines (reference per_core_cycles.csv).
std::string FormatCoreCyclesCsv(const PerCore& per_core);

}  // namespace npuperf::evidence
