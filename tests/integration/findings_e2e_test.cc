// Issue 19 findings end to end: a standard-mode demo round (real server, agent
// and msprof-sim) carries the evidence library's threshold findings through
// the server's store to `npuperf report` in text, Markdown and JSON.
#include <set>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

TEST(FindingsEndToEndTest, AStandardDemoRoundReportsItsFindingsInEveryStyle) {
  Cluster c;
  c.Start("0");
  auto r = c.Cli({"--format", "json", "submit",
                  (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(), "--op-name",
                  kRmsNormKernel, "--warm-up", "0", "--repeats", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << c.agent->Log();
  v1::Collection col;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out;
  ASSERT_EQ(col.jobs_size(), 1);
  ASSERT_EQ(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << col.jobs(0).reason();
  const std::string round = std::to_string(col.jobs(0).round_id());

  auto json = c.Cli({"report", round, "--style", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.out;
  ASSERT_TRUE(j.contains("findings")) << json.out;
  // Fired findings carry the routing caveat.
  for (const auto& f : j["findings"]) {
    EXPECT_NE(f["caveat"].get<std::string>().find("not a Roofline proof"), std::string::npos);
  }
  // msprof-sim writes op_summary for all seven groups: the pipe rules were
  // applied (fired or not); the msprof-op-only rules say why they were not.
  std::set<std::string> not_applied;
  for (const auto& n : j["findings_not_applied"]) {
    not_applied.insert(n["rule_id"].get<std::string>());
  }
  EXPECT_EQ(not_applied.count("PIPE_MTE2_RATIO_HIGH"), 0u) << j["findings_not_applied"].dump();
  EXPECT_EQ(not_applied.count("PIPE_SCALAR_RATIO_HIGH"), 0u);
  EXPECT_EQ(not_applied.count("DVFS_CURRENT_BELOW_RATED"), 1u);
  EXPECT_EQ(not_applied.count("MEMORY_BW_USAGE_GOOD"), 1u);

  auto text = c.Cli({"report", round});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("--- Findings (findings route the next experiment"), std::string::npos)
      << text.out;
  auto md = c.Cli({"report", round, "--style", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("## Findings"), std::string::npos) << md.out;
  for (const auto& f : j["findings"]) {
    const std::string id = f["rule_id"].get<std::string>();
    EXPECT_NE(text.out.find(id), std::string::npos) << id;
    EXPECT_NE(md.out.find("`" + id + "`"), std::string::npos) << id;
  }
}

}  // namespace
}  // namespace npuperf::testing
