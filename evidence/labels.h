#pragma once

#include <string>
#include <string_view>

// The closed sets that evidence/ decides between, as enums. C++ code compares
// the enums; Name() gives each value its one spelling, used only at the edges
// (evidence.json, summary.txt, perf_report.md, the npuperf.v1 proto), where
// the strings are the reference scripts' and stay byte-for-byte the same.
// Pure functions; thread-safe.
namespace npuperf::evidence {

// How samples (repeats, or launches of one kernel) were reduced
// (AggregateSamples in task_time.h).
enum class AggregationMethod { kNone, kSingle, kMedian, kTrimmedMean };
// "none", "single", "median", "trimmed_mean".
std::string_view Name(AggregationMethod m);

// Where a target duration came from. kUnset: no duration was read.
enum class TimingSource { kUnset, kOpSummary, kTaskTime, kApiStatistic, kOpprof, kMsprofDb };
// "", "op_summary.Task Duration(us)", "task_time.task_time(us)",
// "api_statistic.node.launch", "opprof.OpBasicInfo.Task Duration(us)",
// "msprof_db.TASK.endNs-startNs".
std::string_view Name(TimingSource s);

// An AI Core type: cube (AIC, aicore.db) or vector (AIV, ai_vector_core.db).
// kNone: unknown (no core time).
enum class CoreType { kNone, kAic, kAiv };
// "AIC", "AIV", "" (per-core tables, the proto's primary_core).
std::string_view Name(CoreType c);
// "aic", "aiv", "" (the op_summary column prefix; evidence.json and
// summary.txt spell the bound's primary core this way).
std::string_view LowerName(CoreType c);

// Whether all seven --aic-metrics runs were found.
enum class SevenMetricStatus { kNotCollected, kComplete, kPartial };
// "not_collected", "complete", "partial".
std::string_view Name(SevenMetricStatus s);

// Outcome of the per-core step (per_core.h). Every value but
// kProcessScopeUnattributed means the table is unavailable.
enum class PerCoreStatus {
  kProcessScopeUnattributed,  // a valid, process-scoped table
  kNoSampleRun,
  kNoAicoreDb,
  kAmbiguousProfDir,
  kAmbiguousAicoreDb,  // detail: the number of candidate dbs
  kSqliteError,        // detail: the error message
  kNoPositiveCoreCycles,
  kNoCoreTime,
  kNotCollected,  // quick mode: no sample run was asked for
};
// "process_scope_unattributed", "no_sample_run", "no_aicore_db",
// "ambiguous_prof_dir", "ambiguous_aicore_db", "sqlite_error",
// "no_positive_core_cycles", "no_core_time", "not_collected".
std::string_view Name(PerCoreStatus s);

// Per-core load balance by spread: < 10 %, < 30 %, else. kNone: not computed.
enum class BalanceVerdict { kNone, kPass, kWarning, kCritical };
// "", "PASS", "WARNING", "CRITICAL".
std::string_view Name(BalanceVerdict v);

// The seeds' per-pipe bound label (bound.h). kUnknown: no core time or an
// invalid ratio.
enum class PipeBound { kUnknown, kMte2, kCube, kVec, kFixp, kMte3, kScalar, kNoBound };
// "UNKNOWN", "MTE2_BOUND", "CUBE_BOUND", "VEC_BOUND", "FIXP_BOUND",
// "MTE3_BOUND", "SCALAR_BOUND", "NO_BOUND".
std::string_view Name(PipeBound b);

// Ratio families of the routing rule (bound.h).
enum class RatioFamily { kCompute, kDataMovement, kScalar };
// "compute", "data_movement", "scalar".
std::string_view Name(RatioFamily f);

// The routing label (bound.h): one triggered family, several, none, or not
// enough evidence to decide.
enum class RoutingLabel {
  kInsufficientEvidence,
  kComputeCandidate,
  kDataMovementCandidate,
  kScalarCandidate,
  kMixed,
  kNoDominantPipe,
};
// "insufficient_evidence", "compute_candidate", "data_movement_candidate",
// "scalar_candidate", "mixed", "no_dominant_pipe".
std::string_view Name(RoutingLabel r);
// The candidate label of a single triggered family.
RoutingLabel CandidateOf(RatioFamily f);

// Whether the AI Core clock ran at its rated frequency.
enum class DvfsStatus { kUnknown, kOk, kSuspect };
// "unknown", "ok", "suspect".
std::string_view Name(DvfsStatus s);

// Where the observed clock of the DVFS check came from.
enum class ClockSource {
  kNone,
  kOpprofCurrentFreq,
  kOpSummaryBackCalculated,
  kAicoreDbBackCalculated,
  kMsprofDbAicoreFreq,  // the lowest AICORE_FREQ clock over the target's launches
};
// "none", "opprof.current_freq", "op_summary.cycles_back_calculated",
// "aicore.db.back_calculated", "msprof_db.AICORE_FREQ".
std::string_view Name(ClockSource s);

// Whether the head overhead (Task Duration minus the longest core time) could
// be computed.
enum class HeadOverheadStatus { kOk, kNegativeGap, kNotApplicable };
// "ok", "negative_gap", "not_applicable".
std::string_view Name(HeadOverheadStatus s);

// Whether a golden reference time was joined with the kernel time.
enum class GoldenStatus { kNotProvided, kJoined, kMismatch };
// "not_provided", "joined", "mismatch".
std::string_view Name(GoldenStatus s);

// Name(e) as a std::string, for JSON values and proto setters.
template <typename E>
std::string NameOf(E e) {
  return std::string(Name(e));
}

}  // namespace npuperf::evidence
