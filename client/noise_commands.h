// The measured-noise commands of `npuperf` (docs/comparisons.md, "Measured
// noise"): `calibrate COLLECTION [--runs N] [--wait] [--every DURATION]`
// reruns a finished collection A/A and stores each case's spread; `noise
// [--operator OP]` lists the spreads verdicts use now.
//
// Exit codes: 0 done (calibrate: started, or with --wait SUCCEEDED), 1 the
// calibration FAILED (or an error), 2 usage, 5 unavailable, 6 not found (or
// another team's collection). calibrate --every runs until stopped (or
// --count calibrations): a FAILED calibration or an unavailable server is
// reported and the next period tries again; other errors end it.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "client/commands.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::client {

struct CalibrateArgs {
  std::string collection_id;
  int32_t runs = 0;  // 0: the server's default (5)
  bool wait = false;
  std::string every;  // a duration ("24h"): a new calibration each period; implies wait
  int32_t count = 0;  // with every: stop after this many calibrations (0: never)
  // How often --wait asks for the calibration's state. Default: 10 s.
  std::chrono::seconds poll{10};
};
int RunCalibrate(Session& s, const CalibrateArgs& args, std::ostream& out, std::ostream& err);

int RunNoise(Session& s, const std::string& operator_name, std::ostream& out, std::ostream& err);

// The threshold a duration verdict used, for compare and regressions:
// "calibrated: spread 1.3 %, threshold 3.9 %, expected false alarms 0.6 %",
// "threshold 5 % (request)" or "uncalibrated (default 2 %)"; empty when the
// server did not say (an older server).
std::string ThresholdText(const v1::DurationComparison& d);

}  // namespace npuperf::client
