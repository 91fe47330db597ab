// Verdicts end to end: real server, agent and msprof-sim; the CLI's compare,
// regressions, baseline pin and report with their exit codes and JSON.
#include <filesystem>
#include <map>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

std::string Operator(const std::string& name) {
  return (SourceDir() / "examples/ops" / name).string();
}

// Submits the operators (names of examples/ops, or paths) in quick mode with 7 repeats (enough for
// a verdict at alpha 0.01) on Ascend910B2 and returns round ids by operator.
std::pair<std::string, std::map<std::string, int64_t>> QuickBatch(
    Cluster& c, const std::vector<std::string>& ops, const std::string& label) {
  std::vector<std::string> args = {"--format",  "json", "submit",    "--quick",
                                   "--repeats", "7",    "--warm-up", "0"};
  // A name is one of examples/ops; a path (with '/') is used as it is.
  for (const auto& op : ops) args.push_back(op.find('/') == std::string::npos ? Operator(op) : op);
  for (const std::string& a :
       {std::string("--op-name-map"), (SourceDir() / "deploy/demo-op-names.json").string(),
        std::string("--label"), label, std::string("--max-jobs"), std::string("4")}) {
    args.push_back(a);
  }
  auto r = c.Cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err << "\nagent log:\n" << c.agent->Log();
  v1::Collection collection;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &collection).ok()) << r.out;
  std::map<std::string, int64_t> rounds;
  for (const auto& job : collection.jobs()) rounds[job.operator_name()] = job.round_id();
  return {collection.id(), rounds};
}

nlohmann::json Json(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

using Rounds = std::map<std::string, int64_t>;

// The faster variant (-40 % under msprof-sim): IMPROVED, exit 0. rmsnorm_v2's
// quick-mode gain (~2.5 %) sits too close to the 2 % threshold for a test.
// The regressing variant: REGRESSED, exit 3, in text and JSON.
void ExpectPairVerdicts(Cluster& c, Rounds& first) {
  auto faster = c.Cli({"--format", "json", "compare", std::to_string(first["interleave_rope"]),
                       std::to_string(first["interleave_rope_v2"])});
  nlohmann::json j = Json(faster);
  EXPECT_EQ(faster.exit_code, 0) << faster.out;
  EXPECT_EQ(j["schema"], "npuperf.compare.v1");
  EXPECT_EQ(j["kind"], "rounds");
  EXPECT_EQ(j["result"]["comparison"]["verdict"], "VERDICT_IMPROVED") << faster.out;
  EXPECT_LT(j["result"]["comparison"]["duration"]["ratio"].get<double>(), 0.8);
  EXPECT_EQ(j["result"]["comparison"]["duration"]["candidate_samples_us"].size(), 7u);

  auto slower = c.Cli({"compare", std::to_string(first["grouped_matmul"]),
                       std::to_string(first["grouped_matmul_v2"])});
  EXPECT_EQ(slower.exit_code, 3) << slower.out << slower.err;
  EXPECT_NE(slower.out.find("verdict REGRESSED"), std::string::npos) << slower.out;
  auto slower_json = c.Cli({"--format", "json", "compare", std::to_string(first["grouped_matmul"]),
                            std::to_string(first["grouped_matmul_v2"])});
  EXPECT_EQ(slower_json.exit_code, 3);
  EXPECT_EQ(Json(slower_json)["exit_code"], 3);
}

// The same code profiled twice: STABLE for both operators, exit 0.
void ExpectSameCodeStable(Cluster& c, const std::string& first_id, const std::string& again_id) {
  auto same = c.Cli({"--format", "json", "compare", first_id, again_id});
  nlohmann::json j = Json(same);
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_EQ(j["kind"], "collections");
  EXPECT_EQ(j["result"]["counts"]["matched"], 2);
  EXPECT_EQ(j["result"]["counts"]["stable"], 2) << same.out;
  EXPECT_EQ(j["result"]["counts"]["unmatched"], 2);
  // Both verdicts are STABLE (the claim under test). The geomean only has to be
  // near 1: each side is 7 msprof-sim runs with fresh seeds (1% noise plus
  // per-block skew on the slowest core), and a 2.4% geomean was seen with both
  // verdicts STABLE (p above alpha), so 0.02 flaked. 0.05 still catches a
  // wrong geomean (a ratio of 0, 2 or a swapped side).
  EXPECT_NEAR(j["result"]["geomean_ratio"].get<double>(), 1.0, 0.05);
}

// A pinned baseline and the regression listing of a candidate collection.
// Different operator directories do not match by name; the listing says
// nothing was comparable (exit 4) rather than passing silently.
void ExpectBaselineListing(Cluster& c, const std::string& again_id) {
  auto pin = c.Cli({"baseline", "pin", "branch=main", again_id});
  EXPECT_EQ(pin.exit_code, 0) << pin.err;
  auto [cand_id, cand] = QuickBatch(c, {"grouped_matmul_v2"}, "branch=dev");
  (void)cand;
  auto none = c.Cli({"regressions", "--baseline", "branch=main", "--collection", cand_id});
  EXPECT_EQ(none.exit_code, 4) << none.out << none.err;
  auto since = c.Cli({"--format", "json", "regressions", "--since", "1h"});
  EXPECT_EQ(since.exit_code, 4) << since.out;  // nothing older than an hour to compare with
}

// Reports: a round's summary.txt and a collection's table; usage errors exit 2.
void ExpectReportsAndUsage(Cluster& c, Rounds& first, const std::string& first_id) {
  auto round = c.Cli({"report", std::to_string(first["grouped_matmul"])});
  EXPECT_EQ(round.exit_code, 0) << round.err;
  EXPECT_NE(round.out.find("grouped_matmul"), std::string::npos) << round.out;
  auto table = c.Cli({"report", first_id, "--style", "md"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("| round | operator/case"), std::string::npos) << table.out;
  EXPECT_EQ(c.Cli({"compare", "12", first_id}).exit_code, 2);
  EXPECT_EQ(c.Cli({"regressions"}).exit_code, 2);
}

TEST(ComparisonTest, FasterSlowerAndSameCodeGetTheirVerdictsAndExitCodes) {
  Cluster c;
  c.Start("0-3");
  auto [first_id, first] = QuickBatch(
      c, {"interleave_rope", "interleave_rope_v2", "grouped_matmul", "grouped_matmul_v2"},
      "branch=main");
  auto [again_id, again] = QuickBatch(c, {"interleave_rope", "grouped_matmul"}, "branch=main");
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(again.size(), 2u);
  ExpectPairVerdicts(c, first);
  ExpectSameCodeStable(c, first_id, again_id);
  ExpectBaselineListing(c, again_id);
  ExpectReportsAndUsage(c, first, first_id);
}

// Issue 20's nightly bot end to end: night 1 finds a regression (exit 3), a person acknowledges
// it, night 2 finds the same regression and passes (exit 0); the fix makes the case STABLE
// (FIXED), and a regression after that is a new DETECTED one (exit 3 again). The slower code is
// grouped_matmul_v2 under grouped_matmul's name, so that it is the same case.
TEST(ComparisonTest, ANightlyBotIsNotRealarmedByAnAcknowledgedRegression) {
  Cluster c;
  c.Start("0-3");
  auto [base_id, base] = QuickBatch(c, {"grouped_matmul"}, "branch=main");
  ASSERT_EQ(base.size(), 1u);
  ASSERT_EQ(c.Cli({"baseline", "pin", "branch=main", base_id}).exit_code, 0);
  const std::filesystem::path slow = c.dir.path() / "slow" / "grouped_matmul";
  std::filesystem::create_directories(slow.parent_path());
  std::filesystem::copy(SourceDir() / "examples/ops/grouped_matmul_v2", slow,
                        std::filesystem::copy_options::recursive);
  // The runner imports <directory name>_golden.
  std::filesystem::copy_file(slow / "grouped_matmul_v2_golden.py",
                             slow / "grouped_matmul_golden.py");
  auto nightly = [&](const std::string& op) {
    QuickBatch(c, {op}, "branch=main");
    auto r = c.Cli({"--format", "json", "regressions", "--baseline", "branch=main"});
    return std::pair{r.exit_code, Json(r)};
  };
  auto [code1, night1] = nightly(slow.string());
  EXPECT_EQ(code1, 3) << night1.dump();
  ASSERT_EQ(night1["result"]["tracked"].size(), 1u) << night1.dump();
  const nlohmann::json& found = night1["result"]["tracked"][0];
  EXPECT_EQ(found["state"], "REGRESSION_STATE_DETECTED");
  const std::string id = found["id"].get<std::string>();  // proto3 JSON: int64 as a string

  auto ack = c.Cli({"triage", id, "--ack", "--note", "kernel change, looking"});
  EXPECT_EQ(ack.exit_code, 0) << ack.err;
  EXPECT_NE(ack.out.find("DETECTED -> ACKNOWLEDGED"), std::string::npos) << ack.out;
  auto again = c.Cli({"triage", id, "--ack"});  // ACKNOWLEDGED -> ACKNOWLEDGED: not a move
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_NE(again.err.find("FAILED_PRECONDITION"), std::string::npos) << again.err;

  auto [code2, night2] = nightly(slow.string());
  EXPECT_EQ(code2, 0) << night2.dump();  // still regressed, but acknowledged: not an alarm
  ASSERT_EQ(night2["result"]["tracked"].size(), 1u) << night2.dump();
  EXPECT_EQ(night2["result"]["tracked"][0]["id"], id);
  EXPECT_EQ(night2["result"]["tracked"][0]["state"], "REGRESSION_STATE_ACKNOWLEDGED");
  EXPECT_EQ(night2["result"]["tracked"][0]["seen_rounds"], 2);

  auto [code3, night3] = nightly("grouped_matmul");  // the fix: STABLE against the baseline
  EXPECT_EQ(code3, 0) << night3.dump();
  auto shown = c.Cli({"--format", "json", "triage", id});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(Json(shown)["regression"]["state"], "REGRESSION_STATE_FIXED") << shown.out;
  EXPECT_EQ(Json(shown)["transitions"].size(), 3u) << shown.out;

  auto [code4, night4] = nightly(slow.string());  // regressed again: a new regression
  EXPECT_EQ(code4, 3) << night4.dump();
  ASSERT_EQ(night4["result"]["tracked"].size(), 1u) << night4.dump();
  EXPECT_NE(night4["result"]["tracked"][0]["id"], id);
  EXPECT_EQ(night4["result"]["tracked"][0]["state"], "REGRESSION_STATE_DETECTED");
}

// Measured noise end to end (docs/comparisons.md, "Measured noise"): `npuperf calibrate --wait`
// reruns a quick batch A/A through the real queue, agent and msprof-sim and stores the spread of
// each case; a comparison of those cases then says "calibrated" with the threshold it used, and
// `npuperf noise` lists the spreads. Kept short: one operator, 3 runs.
TEST(ComparisonTest, CalibrationMakesVerdictsCalibrated) {
  Cluster c;
  c.Start("0-3");
  auto [base_id, base] = QuickBatch(c, {"interleave_rope"}, "branch=main");
  auto [cand_id, cand] = QuickBatch(c, {"interleave_rope"}, "branch=main");
  auto before = Json(c.Cli({"--format", "json", "compare", base_id, cand_id}));
  EXPECT_EQ(before["result"]["comparisons"][0]["duration"]["threshold_source"], "default");
  EXPECT_NE(c.Cli({"compare", base_id, cand_id}).out.find("uncalibrated (default 2 %)"),
            std::string::npos);

  EXPECT_EQ(c.Cli({"calibrate", base_id, "--runs", "2"}).exit_code, 2);  // 3..20
  auto calibrated = c.Cli(
      {"--format", "json", "--timeout", "120", "calibrate", base_id, "--runs", "3", "--wait"});
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.out << calibrated.err;
  nlohmann::json cal = Json(calibrated);
  EXPECT_EQ(cal["state"], "CALIBRATION_STATE_SUCCEEDED") << calibrated.out;
  EXPECT_EQ(cal["collection_ids"].size(), 3u);
  ASSERT_GE(cal["spreads"].size(), 1u) << calibrated.out;
  EXPECT_EQ(cal["spreads"][0]["operator_name"], "interleave_rope");
  EXPECT_EQ(cal["spreads"][0]["family"], "duration");

  auto after = Json(c.Cli({"--format", "json", "compare", base_id, cand_id}));
  const nlohmann::json& d = after["result"]["comparisons"][0]["duration"];
  EXPECT_EQ(d["threshold_source"], "calibrated") << after.dump();
  EXPECT_GE(d["threshold_pct"].get<double>(), 2.0);
  EXPECT_EQ(d["calibration_id"], cal["id"]);
  auto text = c.Cli({"compare", base_id, cand_id});
  EXPECT_NE(text.out.find("calibrated: spread"), std::string::npos) << text.out;
  auto noise = c.Cli({"noise", "--operator", "interleave_rope"});
  EXPECT_EQ(noise.exit_code, 0) << noise.err;
  EXPECT_NE(noise.out.find("interleave_rope "), std::string::npos) << noise.out;
}

}  // namespace
}  // namespace npuperf::testing
