#include "evidence/labels.h"

#include <string>

#include "evidence/evidence.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {

std::string_view Name(AggregationMethod m) {
  switch (m) {
    case AggregationMethod::kNone: return "none";
    case AggregationMethod::kSingle: return "single";
    case AggregationMethod::kMedian: return "median";
    case AggregationMethod::kTrimmedMean: return "trimmed_mean";
  }
  return "";
}

std::string_view Name(TimingSource s) {
  switch (s) {
    case TimingSource::kUnset: return "";
    case TimingSource::kOpSummary: return "op_summary.Task Duration(us)";
    case TimingSource::kTaskTime: return "task_time.task_time(us)";
    case TimingSource::kApiStatistic: return "api_statistic.node.launch";
    case TimingSource::kOpprof: return "opprof.OpBasicInfo.Task Duration(us)";
    case TimingSource::kMsprofDb: return "msprof_db.TASK.endNs-startNs";
  }
  return "";
}

std::string_view Name(CoreType c) {
  switch (c) {
    case CoreType::kNone: return "";
    case CoreType::kAic: return "AIC";
    case CoreType::kAiv: return "AIV";
  }
  return "";
}

std::string_view LowerName(CoreType c) {
  switch (c) {
    case CoreType::kNone: return "";
    case CoreType::kAic: return "aic";
    case CoreType::kAiv: return "aiv";
  }
  return "";
}

std::string_view Name(SevenMetricStatus s) {
  switch (s) {
    case SevenMetricStatus::kNotCollected: return "not_collected";
    case SevenMetricStatus::kComplete: return "complete";
    case SevenMetricStatus::kPartial: return "partial";
  }
  return "";
}

std::string_view Name(PerCoreStatus s) {
  switch (s) {
    case PerCoreStatus::kProcessScopeUnattributed: return "process_scope_unattributed";
    case PerCoreStatus::kNoSampleRun: return "no_sample_run";
    case PerCoreStatus::kNoAicoreDb: return "no_aicore_db";
    case PerCoreStatus::kAmbiguousProfDir: return "ambiguous_prof_dir";
    case PerCoreStatus::kAmbiguousAicoreDb: return "ambiguous_aicore_db";
    case PerCoreStatus::kSqliteError: return "sqlite_error";
    case PerCoreStatus::kNoPositiveCoreCycles: return "no_positive_core_cycles";
    case PerCoreStatus::kNoCoreTime: return "no_core_time";
    case PerCoreStatus::kNotCollected: return "not_collected";
  }
  return "";
}

std::string_view Name(BalanceVerdict v) {
  switch (v) {
    case BalanceVerdict::kNone: return "";
    case BalanceVerdict::kPass: return "PASS";
    case BalanceVerdict::kWarning: return "WARNING";
    case BalanceVerdict::kCritical: return "CRITICAL";
  }
  return "";
}

std::string_view Name(PipeBound b) {
  switch (b) {
    case PipeBound::kUnknown: return "UNKNOWN";
    case PipeBound::kMte2: return "MTE2_BOUND";
    case PipeBound::kCube: return "CUBE_BOUND";
    case PipeBound::kVec: return "VEC_BOUND";
    case PipeBound::kFixp: return "FIXP_BOUND";
    case PipeBound::kMte3: return "MTE3_BOUND";
    case PipeBound::kScalar: return "SCALAR_BOUND";
    case PipeBound::kNoBound: return "NO_BOUND";
  }
  return "";
}

std::string_view Name(RatioFamily f) {
  switch (f) {
    case RatioFamily::kCompute: return "compute";
    case RatioFamily::kDataMovement: return "data_movement";
    case RatioFamily::kScalar: return "scalar";
  }
  return "";
}

std::string_view Name(RoutingLabel r) {
  switch (r) {
    case RoutingLabel::kInsufficientEvidence: return "insufficient_evidence";
    case RoutingLabel::kComputeCandidate: return "compute_candidate";
    case RoutingLabel::kDataMovementCandidate: return "data_movement_candidate";
    case RoutingLabel::kScalarCandidate: return "scalar_candidate";
    case RoutingLabel::kMixed: return "mixed";
    case RoutingLabel::kNoDominantPipe: return "no_dominant_pipe";
  }
  return "";
}

RoutingLabel CandidateOf(RatioFamily f) {
  switch (f) {
    case RatioFamily::kCompute: return RoutingLabel::kComputeCandidate;
    case RatioFamily::kDataMovement: return RoutingLabel::kDataMovementCandidate;
    case RatioFamily::kScalar: return RoutingLabel::kScalarCandidate;
  }
  return RoutingLabel::kInsufficientEvidence;
}

std::string_view Name(DvfsStatus s) {
  switch (s) {
    case DvfsStatus::kUnknown: return "unknown";
    case DvfsStatus::kOk: return "ok";
    case DvfsStatus::kSuspect: return "suspect";
  }
  return "";
}

std::string_view Name(ClockSource s) {
  switch (s) {
    case ClockSource::kNone: return "none";
    case ClockSource::kOpprofCurrentFreq: return "opprof.current_freq";
    case ClockSource::kOpSummaryBackCalculated: return "op_summary.cycles_back_calculated";
    case ClockSource::kAicoreDbBackCalculated: return "aicore.db.back_calculated";
    case ClockSource::kMsprofDbAicoreFreq: return "msprof_db.AICORE_FREQ";
  }
  return "";
}

std::string_view Name(HeadOverheadStatus s) {
  switch (s) {
    case HeadOverheadStatus::kOk: return "ok";
    case HeadOverheadStatus::kNegativeGap: return "negative_gap";
    case HeadOverheadStatus::kNotApplicable: return "not_applicable";
  }
  return "";
}

std::string_view Name(GoldenStatus s) {
  switch (s) {
    case GoldenStatus::kNotProvided: return "not_provided";
    case GoldenStatus::kJoined: return "joined";
    case GoldenStatus::kMismatch: return "mismatch";
  }
  return "";
}

std::string StatusText(const PerCore& p) {
  if (p.status == PerCoreStatus::kProcessScopeUnattributed) return std::string(Name(p.status));
  std::string text = internal::Cat("unavailable:", Name(p.status));
  if (!p.status_detail.empty()) text += internal::Cat(":", p.status_detail);
  return text;
}

std::string StatusText(const GoldenRatio& g) {
  if (g.status != GoldenStatus::kMismatch) return std::string(Name(g.status));
  return internal::Cat("mismatch: ", g.mismatch);
}

}  // namespace npuperf::evidence
