// Calibrations: measured noise (issue 20; docs/comparisons.md "Measured
// noise"). A calibration reruns a finished standard or quick collection of a
// team `runs` times as it was (A/A), through the ordinary submission (so
// priority, caps, quotas and fairness apply), and when every A/A collection
// is terminal stores the spread of each case and metric family it measured
// (core/noise_rules.h MeasureNoise). The comparator then derives each case's
// threshold from the newest spread (comparator.h VerdictOptions.noise).
//
// The A/A collections carry the label kCalibrationLabel=<id> and the
// idempotency key "npuperf-calibration-<id>-<k>" (k = 1..runs): advancing
// finds them by the label and submits the missing ones again with their
// key, so two replicas advancing one calibration at once submit each run
// once, and the store's compare-and-set finishes it once.
//
// Thread-safe (stateless beyond the injected Store, Clock and submit
// function); the store and clock must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "npuperf/v1/collection_service.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/core/scheduler.h"
#include "server/store/store.h"

namespace npuperf::server {

// The label every A/A collection of a calibration carries (value: its id).
inline constexpr char kCalibrationLabel[] = "npuperf.calibration";

struct CalibrationOptions {
  // Rows ListNoise answers at most (ordered by operator and case; filter by
  // operator for the rest). Default: 2000.
  int32_t max_noise_rows = 2000;
  // RUNNING calibrations one Advance() looks at, oldest first. Default: 50.
  int32_t max_advance = 50;
};

class Calibrations {
 public:
  // The ordinary submission of a collection for a team, with server labels
  // (Scheduler::SubmitForServer in main.cc): the one place A/A runs are
  // submitted through.
  using SubmitFn = ServerSubmit;

  Calibrations(Store& store, Clock& clock, SubmitFn submit, CalibrationOptions options = {});

  // req.collection_id: a terminal standard or quick collection of team with
  // a succeeded job (NOT_FOUND when absent or another team's,
  // FAILED_PRECONDITION naming collection_id otherwise); req.runs 3..20
  // (0: 5; else INVALID_ARGUMENT naming runs). Stores the calibration and
  // submits its A/A runs; a run the submission refuses for good (not a
  // quota or an outage, which the next Advance retries) fails it.
  absl::StatusOr<v1::StartCalibrationResponse> StartCalibration(
      const std::string& team, const v1::StartCalibrationRequest& req);
  // The calibration, advanced first when RUNNING; NOT_FOUND when unknown or
  // another team's.
  absl::StatusOr<v1::GetCalibrationResponse> GetCalibration(const std::string& team,
                                                            const v1::GetCalibrationRequest& req);
  // The newest spreads of team (Store::ListNoise), at most
  // options.max_noise_rows.
  absl::StatusOr<v1::ListNoiseResponse> ListNoise(const std::string& team,
                                                  const v1::ListNoiseRequest& req);
  // Advances every RUNNING calibration (at most options.max_advance): submits
  // missing runs; once every run is terminal, measures and finishes it
  // SUCCEEDED, or FAILED naming the cases that had too few rounds. The
  // first error is returned after the others were tried. Called by the
  // reaper's rounds (main.cc) and by GetCalibration.
  absl::Status Advance();

 private:
  // The A/A collections of c found by their label (no jobs), by run k-1;
  // an empty slot for a run not submitted yet.
  absl::StatusOr<std::vector<v1::Collection>> RunsOf(const CalibrationRecord& c);
  // Submits run k (1-based) of c with its label and idempotency key.
  absl::StatusOr<v1::Collection> SubmitRun(const CalibrationRecord& c,
                                           const v1::CollectionSpec& spec, int k);
  // Submits the missing runs of c; fails c for good when the submission
  // refuses one for good. Returns the runs and whether c is still RUNNING.
  absl::StatusOr<std::vector<v1::Collection>> SubmitMissing(const CalibrationRecord& c,
                                                            bool* still_running);
  // Submits what is missing, then finishes c when every run is terminal.
  absl::Status AdvanceOne(const CalibrationRecord& c);
  // Measures the finished runs and finishes c (a lost compare-and-set race
  // is not an error: another replica finished it).
  absl::Status Finish(const CalibrationRecord& c, const std::vector<v1::Collection>& runs);
  absl::Status FinishAs(const CalibrationRecord& c, v1::CalibrationState state,
                        const std::string& reason, const std::vector<std::string>& ids,
                        std::vector<NoiseRecord> spreads);
  // The stored calibration as the RPCs answer it.
  absl::StatusOr<v1::Calibration> Current(const std::string& team, int64_t id);
  // The proto of a stored calibration (runs: its collections while RUNNING).
  v1::Calibration ToProto(const CalibrationRecord& c, const std::vector<v1::Collection>& runs);

  Store& store_;
  Clock& clock_;
  const SubmitFn submit_;
  const CalibrationOptions options_;
};

// The proto of a stored spread.
v1::NoiseSpread NoiseSpreadOf(const NoiseRecord& n);

}  // namespace npuperf::server
