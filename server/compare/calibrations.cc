#include "server/compare/calibrations.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/compare/round_reads.h"
#include "server/core/job_state.h"
#include "server/core/limits.h"
#include "server/core/noise_rules.h"
#include "server/core/request_rules.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr int32_t kDefaultRuns = 5;
constexpr int32_t kMinRuns = 3;
constexpr int32_t kMaxRuns = 20;

std::string RunKey(int64_t id, int k) { return absl::StrCat("npuperf-calibration-", id, "-", k); }

// A submission refusal the next Advance may not see again (a quota, an
// outage, a lost race): retried; any other refusal fails the calibration.
bool Retryable(const absl::Status& s) {
  return s.code() == absl::StatusCode::kResourceExhausted ||
         s.code() == absl::StatusCode::kUnavailable || s.code() == absl::StatusCode::kAborted ||
         s.code() == absl::StatusCode::kDeadlineExceeded;
}

absl::Status CheckSource(const v1::Collection& c) {
  const std::string& id = c.id();
  if (!IsTerminal(c.state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection_id: collection ", id, " has not finished; wait for it"));
  }
  const v1::ProfileMode mode = c.spec().params().mode();
  if (mode != v1::PROFILE_MODE_STANDARD && mode != v1::PROFILE_MODE_QUICK) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection_id: collection ", id, " is in ", v1::ProfileMode_Name(mode),
                     "; calibrate a standard or quick collection"));
  }
  if (c.counts().succeeded() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection_id: collection ", id, " has no succeeded job to rerun"));
  }
  if (c.spec().labels_size() >= kMaxLabels && c.spec().labels().count(kCalibrationLabel) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection_id: collection ", id, " has ", kMaxLabels,
                     " labels; its A/A runs need one more (", kCalibrationLabel, ")"));
  }
  return absl::OkStatus();
}

// Why no spread was measured: rounds per case of the runs.
std::string TooFewRounds(const std::vector<v1::Round>& rounds, int runs) {
  std::map<std::string, int> per_case;
  for (const v1::Round& r : rounds) ++per_case[absl::StrCat(r.operator_name(), "/", r.case_id())];
  if (per_case.empty()) return absl::StrCat("none of the ", runs, " A/A runs stored a round");
  std::vector<std::string> parts;
  for (const auto& [key, n] : per_case) parts.push_back(absl::StrCat(key, " ", n, " of ", runs));
  return absl::StrCat("fewer than ", kMinNoiseRounds, " A/A rounds without errors for every case (",
                      absl::StrJoin(parts, ", "), ")");
}

}  // namespace

v1::NoiseSpread NoiseSpreadOf(const NoiseRecord& n) {
  v1::NoiseSpread out;
  out.set_soc(n.soc);
  out.set_mode(n.mode);
  out.set_operator_name(n.operator_name);
  out.set_case_id(n.case_id);
  out.set_family(n.family);
  out.set_spread(n.spread);
  out.set_rounds(n.rounds);
  out.set_threshold(n.threshold);
  out.set_expected_false_alarm_rate(n.far);
  out.set_calibration_id(n.calibration_id);
  *out.mutable_measured_at() = TimeUtil::MillisecondsToTimestamp(n.measured_ms);
  return out;
}

Calibrations::Calibrations(Store& store, Clock& clock, SubmitFn submit, CalibrationOptions options)
    : store_(store), clock_(clock), submit_(std::move(submit)), options_(options) {}

absl::StatusOr<v1::StartCalibrationResponse> Calibrations::StartCalibration(
    const std::string& team, const v1::StartCalibrationRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.collection_id().empty()) bad.push_back({"collection_id", "required"});
  CheckLength(req.collection_id(), kMaxCollectionIdBytes, "collection_id", bad);
  const int32_t runs = req.runs() == 0 ? kDefaultRuns : req.runs();
  if (runs < kMinRuns || runs > kMaxRuns) {
    bad.push_back(
        {"runs", absl::StrCat(kMinRuns, "..", kMaxRuns, " (default ", kDefaultRuns, ")")});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto source = store_.GetCollectionPage(team, req.collection_id(), 0, 0);
  if (!source.ok()) return source.status();
  if (absl::Status s = CheckSource(*source); !s.ok()) return s;
  CalibrationRecord c;
  c.team = team;
  c.source_collection_id = source->id();
  c.runs = runs;
  c.created_ms = ToUnixMillis(clock_.SystemNow());
  auto stored = store_.InsertCalibration(c);
  if (!stored.ok()) return stored.status();
  // A quota or an outage leaves it RUNNING: the next Advance submits the rest.
  if (absl::Status s = AdvanceOne(*stored); !s.ok() && !Retryable(s)) return s;
  auto now = Current(team, stored->id);
  if (!now.ok()) return now.status();
  v1::StartCalibrationResponse resp;
  *resp.mutable_calibration() = *std::move(now);
  return resp;
}

absl::StatusOr<v1::GetCalibrationResponse> Calibrations::GetCalibration(
    const std::string& team, const v1::GetCalibrationRequest& req) {
  if (req.calibration_id() <= 0) {
    return InvalidArgumentWithFields({{"calibration_id", "must be a calibration id"}});
  }
  auto c = store_.GetCalibration(team, req.calibration_id());
  if (!c.ok()) return c.status();
  if (c->state == v1::CALIBRATION_STATE_RUNNING) {
    if (absl::Status s = AdvanceOne(*c); !s.ok() && !Retryable(s)) return s;
  }
  auto now = Current(team, req.calibration_id());
  if (!now.ok()) return now.status();
  v1::GetCalibrationResponse resp;
  *resp.mutable_calibration() = *std::move(now);
  return resp;
}

absl::StatusOr<v1::Calibration> Calibrations::Current(const std::string& team, int64_t id) {
  auto c = store_.GetCalibration(team, id);
  if (!c.ok()) return c.status();
  std::vector<v1::Collection> runs;
  if (c->state == v1::CALIBRATION_STATE_RUNNING) {
    auto found = RunsOf(*c);
    if (!found.ok()) return found.status();
    runs = *std::move(found);
  }
  return ToProto(*c, runs);
}

absl::StatusOr<v1::ListNoiseResponse> Calibrations::ListNoise(const std::string& team,
                                                              const v1::ListNoiseRequest& req) {
  std::vector<FieldViolation> bad;
  CheckLength(req.operator_name(), kMaxOperatorNameBytes, "operator_name", bad);
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto spreads = store_.ListNoise(team, req.operator_name(), options_.max_noise_rows);
  if (!spreads.ok()) return spreads.status();
  v1::ListNoiseResponse resp;
  for (const NoiseRecord& n : *spreads) *resp.add_spreads() = NoiseSpreadOf(n);
  return resp;
}

absl::Status Calibrations::Advance() {
  auto running = store_.ListRunningCalibrations(options_.max_advance);
  if (!running.ok()) return running.status();
  absl::Status first;
  for (const CalibrationRecord& c : *running) {
    absl::Status s = AdvanceOne(c);
    if (!s.ok() && first.ok()) {
      first = absl::Status(s.code(), absl::StrCat("calibration ", c.id, ": ", s.message()));
    }
  }
  return first;
}

absl::StatusOr<std::vector<v1::Collection>> Calibrations::RunsOf(const CalibrationRecord& c) {
  CollectionFilter f;
  f.team = c.team;
  f.labels = {{kCalibrationLabel, absl::StrCat(c.id)}};
  f.limit = kMaxRuns + 1;
  auto found = store_.ListCollections(f);
  if (!found.ok()) return found.status();
  std::vector<v1::Collection> runs(c.runs);
  for (v1::Collection& col : *found) {
    for (int k = 1; k <= c.runs; ++k) {
      if (col.idempotency_key() == RunKey(c.id, k)) runs[k - 1] = std::move(col);
    }
  }
  return runs;
}

absl::StatusOr<v1::Collection> Calibrations::SubmitRun(const CalibrationRecord& c,
                                                       const v1::CollectionSpec& spec, int k) {
  v1::SubmitCollectionRequest req;
  *req.mutable_spec() = spec;
  // The source's own server labels (a rerun of a rerun) are not a client's.
  auto* labels = req.mutable_spec()->mutable_labels();
  for (auto it = labels->begin(); it != labels->end();) {
    it = absl::StartsWith(it->first, kServerLabelPrefix) ? labels->erase(it) : std::next(it);
  }
  req.mutable_spec()->set_description(absl::StrCat("A/A run ", k, " of ", c.runs,
                                                   " of calibration ", c.id, " (collection ",
                                                   c.source_collection_id, ")"));
  req.set_idempotency_key(RunKey(c.id, k));
  auto submitted = submit_(c.team, req, {{kCalibrationLabel, absl::StrCat(c.id)}});
  if (!submitted.ok()) return submitted.status();
  return std::move(submitted->first);
}

absl::StatusOr<std::vector<v1::Collection>> Calibrations::SubmitMissing(const CalibrationRecord& c,
                                                                        bool* still_running) {
  *still_running = true;
  auto runs = RunsOf(c);
  if (!runs.ok()) return runs.status();
  std::optional<v1::CollectionSpec> spec;
  for (int k = 1; k <= c.runs; ++k) {
    if (!(*runs)[k - 1].id().empty()) continue;
    if (!spec) {
      auto source = store_.GetCollectionPage(c.team, c.source_collection_id, 0, 0);
      if (!source.ok()) return source.status();
      spec = source->spec();
    }
    auto run = SubmitRun(c, *spec, k);
    if (run.ok()) {
      (*runs)[k - 1] = *std::move(run);
      continue;
    }
    if (Retryable(run.status())) return run.status();
    *still_running = false;
    std::vector<std::string> ids;
    for (const v1::Collection& r : *runs) {
      if (!r.id().empty()) ids.push_back(r.id());
    }
    absl::Status s =
        FinishAs(c, v1::CALIBRATION_STATE_FAILED,
                 absl::StrCat("A/A run ", k, " was refused: ", run.status().message()), ids, {});
    if (!s.ok()) return s;
    return runs;
  }
  return runs;
}

absl::Status Calibrations::AdvanceOne(const CalibrationRecord& c) {
  bool still_running = true;
  auto runs = SubmitMissing(c, &still_running);
  if (!runs.ok()) return runs.status();
  if (!still_running) return absl::OkStatus();
  for (const v1::Collection& r : *runs) {
    if (r.id().empty() || !IsTerminal(r.state())) return absl::OkStatus();
  }
  return Finish(c, *runs);
}

absl::Status Calibrations::Finish(const CalibrationRecord& c,
                                  const std::vector<v1::Collection>& runs) {
  std::vector<v1::Round> rounds;
  std::vector<std::string> ids;
  for (const v1::Collection& r : runs) {
    ids.push_back(r.id());
    auto got = RoundsOfCollection(store_, c.team, r.id());
    if (!got.ok()) return got.status();
    for (v1::Round& round : *got) rounds.push_back(std::move(round));
  }
  std::vector<NoiseRecord> spreads = MeasureNoise(rounds);
  if (spreads.empty()) {
    return FinishAs(c, v1::CALIBRATION_STATE_FAILED, TooFewRounds(rounds, c.runs), ids, {});
  }
  return FinishAs(c, v1::CALIBRATION_STATE_SUCCEEDED, "", ids, std::move(spreads));
}

absl::Status Calibrations::FinishAs(const CalibrationRecord& c, v1::CalibrationState state,
                                    const std::string& reason, const std::vector<std::string>& ids,
                                    std::vector<NoiseRecord> spreads) {
  CalibrationOutcome o;
  o.team = c.team;
  o.id = c.id;
  o.state = state;
  o.reason = reason;
  o.collection_ids = ids;
  o.spreads = std::move(spreads);
  o.now_ms = ToUnixMillis(clock_.SystemNow());
  absl::Status s = store_.FinishCalibration(o);
  if (s.code() == absl::StatusCode::kFailedPrecondition) return absl::OkStatus();
  return s;
}

v1::Calibration Calibrations::ToProto(const CalibrationRecord& c,
                                      const std::vector<v1::Collection>& runs) {
  v1::Calibration out;
  out.set_id(c.id);
  out.set_source_collection_id(c.source_collection_id);
  out.set_runs(c.runs);
  out.set_state(c.state);
  out.set_reason(c.reason);
  for (const std::string& id : c.collection_ids) out.add_collection_ids(id);
  if (c.collection_ids.empty()) {
    int done = 0;
    for (const v1::Collection& r : runs) {
      if (r.id().empty()) continue;
      out.add_collection_ids(r.id());
      done += IsTerminal(r.state()) ? 1 : 0;
    }
    if (c.state == v1::CALIBRATION_STATE_RUNNING) {
      out.set_reason(absl::StrCat("waiting for A/A runs: ", done, " of ", c.runs, " finished, ",
                                  out.collection_ids_size(), " submitted"));
    }
  }
  for (const NoiseRecord& n : c.spreads) *out.add_spreads() = NoiseSpreadOf(n);
  *out.mutable_created_at() = TimeUtil::MillisecondsToTimestamp(c.created_ms);
  if (c.finished_ms > 0) {
    *out.mutable_finished_at() = TimeUtil::MillisecondsToTimestamp(c.finished_ms);
  }
  return out;
}

}  // namespace npuperf::server
