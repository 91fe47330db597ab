#include "client/noise_commands.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/format.h"
#include "common/duration_text.h"
#include "common/status_util.h"

namespace npuperf::client {
namespace {

std::string CalibrationStateText(v1::CalibrationState s) {
  constexpr size_t kPrefix = sizeof("CALIBRATION_STATE_") - 1;
  const std::string name = v1::CalibrationState_Name(s);
  return name.size() > kPrefix ? name.substr(kPrefix) : absl::StrCat(static_cast<int>(s));
}

// "1.3 %" or "0.6 pp".
std::string Amount(double v, const std::string& family) {
  return absl::StrFormat("%.3g %s", v, family == "ratio" ? "pp" : "%");
}

void PrintSpreads(const google::protobuf::RepeatedPtrField<v1::NoiseSpread>& spreads,
                  std::ostream& out) {
  out << absl::StrFormat("%-34s %-14s %-9s %-9s %10s %6s %10s %12s %6s\n", "operator/case", "soc",
                         "mode", "family", "spread", "rounds", "threshold", "false_alarms",
                         "calib");
  for (const v1::NoiseSpread& n : spreads) {
    out << absl::StrFormat(
        "%-34s %-14s %-9s %-9s %10s %6d %10s %11.3g%% %6d\n",
        n.case_id().empty() ? n.operator_name() : absl::StrCat(n.operator_name(), "/", n.case_id()),
        n.soc(), n.mode(), n.family(), Amount(n.spread(), n.family()), n.rounds(),
        Amount(n.threshold(), n.family()), n.expected_false_alarm_rate() * 100, n.calibration_id());
  }
}

void PrintCalibration(const v1::Calibration& c, std::ostream& out) {
  out << "calibration " << c.id() << " of collection " << c.source_collection_id() << ": "
      << CalibrationStateText(c.state()) << ", " << c.runs() << " A/A runs";
  if (!c.reason().empty()) out << " (" << c.reason() << ")";
  out << "\n";
  if (c.collection_ids_size() > 0) {
    out << "  collections " << absl::StrJoin(c.collection_ids(), " ") << "\n";
  }
  if (c.spreads_size() > 0) PrintSpreads(c.spreads(), out);
}

template <typename M, typename F>
void Print(const M& m, const ClientConfig& config, std::ostream& out, F text) {
  if (config.format == OutputFormat::kJson) {
    out << ToJson(m) << "\n";
  } else {
    text(m, out);
  }
}

absl::StatusOr<v1::Calibration> Start(Session& s, const CalibrateArgs& a) {
  v1::StartCalibrationRequest req;
  req.set_collection_id(a.collection_id);
  req.set_runs(a.runs);
  v1::StartCalibrationResponse resp;
  const absl::Status st = s.Call(&Queries::StartCalibration, req, &resp);
  if (!st.ok()) return st;
  return resp.calibration();
}

// Polls until c is no longer RUNNING (progress lines on err). An
// unavailable server is retried until the next poll.
absl::StatusOr<v1::Calibration> WaitFor(Session& s, v1::Calibration c, std::chrono::seconds poll,
                                        std::ostream& err) {
  std::string last;
  while (c.state() == v1::CALIBRATION_STATE_RUNNING) {
    if (c.reason() != last) err << "npuperf: calibration " << c.id() << ": " << c.reason() << "\n";
    last = c.reason();
    s.clock().SleepFor(poll);
    v1::GetCalibrationRequest req;
    req.set_calibration_id(c.id());
    v1::GetCalibrationResponse resp;
    const absl::Status st = s.Call(&Queries::GetCalibration, req, &resp);
    if (st.code() == absl::StatusCode::kUnavailable) continue;
    if (!st.ok()) return st;
    c = resp.calibration();
  }
  return c;
}

int ExitOf(const v1::Calibration& c) {
  return c.state() == v1::CALIBRATION_STATE_FAILED ? kExitError : kExitOk;
}

// One calibration: started, and waited for when wait; its exit code.
int CalibrateOnce(Session& s, const CalibrateArgs& a, bool wait, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<v1::Calibration> c = Start(s, a);
  if (c.ok() && wait) c = WaitFor(s, *std::move(c), a.poll, err);
  if (!c.ok()) return ReportError(c.status(), s.config(), out, err);
  Print(*c, s.config(), out, PrintCalibration);
  return wait ? ExitOf(*c) : kExitOk;
}

}  // namespace

std::string ThresholdText(const v1::DurationComparison& d) {
  const std::string& source = d.threshold_source();
  if (source == "calibrated") {
    return absl::StrFormat(
        "calibrated: spread %.2g %%, threshold %.2g %%, expected false alarms %.2g %%",
        d.measured_spread_pct(), d.threshold_pct(), d.expected_false_alarm_rate() * 100);
  }
  if (source == "request") return absl::StrFormat("threshold %.3g %% (request)", d.threshold_pct());
  if (source == "default") {
    return absl::StrFormat("uncalibrated (default %.3g %%)", d.threshold_pct());
  }
  return "";
}

int RunCalibrate(Session& s, const CalibrateArgs& a, std::ostream& out, std::ostream& err) {
  if (a.every.empty()) return CalibrateOnce(s, a, a.wait, out, err);
  absl::StatusOr<std::chrono::milliseconds> period = ParseDurationText(a.every);
  if (!period.ok()) {
    return ReportUsage("calibrate", absl::StrCat("--every: ", period.status().message()),
                       s.config(), out, err);
  }
  int exit_code = kExitOk;
  for (int n = 1; a.count == 0 || n <= a.count; ++n) {
    const Clock::MonotonicTime next = s.clock().MonotonicNow() + *period;
    exit_code = CalibrateOnce(s, a, /*wait=*/true, out, err);
    if (exit_code != kExitOk && exit_code != kExitError && exit_code != kExitUnavailable) {
      return exit_code;  // usage, not found: the next period would fail the same way
    }
    if (a.count != 0 && n == a.count) break;
    s.clock().SleepUntil(next);
  }
  return exit_code;
}

int RunNoise(Session& s, const std::string& operator_name, std::ostream& out, std::ostream& err) {
  v1::ListNoiseRequest req;
  req.set_operator_name(operator_name);
  v1::ListNoiseResponse resp;
  const absl::Status st = s.Call(&Queries::ListNoise, req, &resp);
  if (!st.ok()) return ReportError(st, s.config(), out, err);
  Print(resp, s.config(), out, [](const v1::ListNoiseResponse& r, std::ostream& o) {
    if (r.spreads_size() == 0) {
      o << "no measured noise: every verdict uses the defaults (npuperf calibrate COLLECTION)\n";
      return;
    }
    PrintSpreads(r.spreads(), o);
  });
  return kExitOk;
}

}  // namespace npuperf::client
