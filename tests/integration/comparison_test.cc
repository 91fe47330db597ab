// Verdicts end to end: real server, agent and msprof-sim; the CLI's compare,
// regressions, baseline pin and report with their exit codes and JSON.
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

// Submits the operators in quick mode with 7 repeats (enough for a verdict at
// alpha 0.01) on Ascend910B2 and returns round ids by operator.
std::pair<std::string, std::map<std::string, int64_t>> QuickBatch(
    Cluster& c, const std::vector<std::string>& ops, const std::string& label) {
  std::vector<std::string> args = {"--format",  "json", "submit",    "--quick",
                                   "--repeats", "7",    "--warm-up", "0"};
  for (const auto& op : ops) args.push_back(Operator(op));
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

}  // namespace
}  // namespace npuperf::testing
