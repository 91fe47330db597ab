// What compare and regressions share once the server has answered: the
// verdict knobs as a request's CompareOptions, the format they print in
// (their --format, else the global one), the comparison table, and Emit,
// which prints one command's verdicts as text, the versioned JSON envelope
// (docs/api.md), JUnit, Markdown or HTML and returns the bot exit code
// after --fail-on. Used by compare_commands.cc and regressions_command.cc.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "client/ci_format.h"
#include "client/commands.h"
#include "client/compare_commands.h"
#include "google/protobuf/message.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/comparison.pb.h"

namespace npuperf::client {

// Versions of the JSON envelope of compare and regressions (docs/api.md).
inline constexpr char kCompareSchema[] = "npuperf.compare.v1";
inline constexpr char kRegressionsSchema[] = "npuperf.regressions.v1";

// --alpha, --threshold and --ratio-threshold as the request's options (0:
// the server's default).
v1::CompareOptions OptionsOf(const VerdictArgs& v);

// The format compare and regressions print in: their own --format, else the
// global one.
VerdictFormat FormatOf(const VerdictArgs& v, const ClientConfig& c);

// The settings errors are reported with: JSON exactly when the verdicts are.
ClientConfig ErrorConfig(const Session& s, const VerdictArgs& v);

// The counts of one comparison with verdict v (compare of two rounds).
v1::ComparisonCounts CountsOfOne(v1::Verdict v);

// One row per comparison: operator/case, verdict, durations, ratio with its
// interval, p, and the rule with the threshold and flags.
void PrintComparisonTable(const google::protobuf::RepeatedPtrField<v1::RoundComparison>& rows,
                          std::ostream& out);

// When comparisons carry a device_suspect flag (a round from a device its
// canaries quarantined: docs/operations.md "Canaries"): a note and the
// `npuperf confirm` line of each (the first five). Nothing otherwise.
void PrintSuspectHint(const google::protobuf::RepeatedPtrField<v1::RoundComparison>& rows,
                      std::ostream& out);

// What one command found, in every format it can print.
struct Verdicts {
  Verdicts(const char* s, std::string k, const google::protobuf::Message& r)
      : schema(s), kind(std::move(k)), result(&r) {}

  VerdictReport report;                     // counts, rows, title, summary
  const char* schema;                       // of the JSON envelope
  std::string kind;                         // "rounds", "collections", "many", "regressions"
  const google::protobuf::Message* result;  // the response, for JSON
  std::function<void(std::ostream&)> text;  // the text rendering
  // What the exit code is decided on, when not report.counts (regressions:
  // only new regressions, and drifts that began in the window, count as
  // regressed).
  std::optional<v1::ComparisonCounts> exit_counts;
  // Keys added to the JSON envelope (compare --confirm of two rounds:
  // "confirmations").
  nlohmann::json extra;
};

// Prints v in the format of args (FormatOf) on out; returns the exit code
// after --fail-on.
int Emit(Session& s, const VerdictArgs& args, Verdicts v, std::ostream& out);

}  // namespace npuperf::client
