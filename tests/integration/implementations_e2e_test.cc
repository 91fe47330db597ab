// PyPTO against Ascend C end to end (issue 35): the Ascend C forms of two example operators
// (examples/ops/*_ascendc: other directories and kernels, the same cases) and their PyPTO forms,
// each a standard batch through the real server, agent and msprof-sim, then `npuperf
// compare-impl` (both scopes, every format) and `npuperf release-report` with the implementation
// table. Kept short: case p0 only, 4 repeats (a Task Duration verdict at alpha 0.05).
#include <fstream>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

// Submits a standard batch of the example operators `ops`, case p0, 4 repeats, without waiting;
// its collection id.
std::string Submit(Cluster& c, const std::vector<std::string>& ops, const std::string& label) {
  // The operator directories first: --label takes every value up to the next option.
  std::vector<std::string> args = {"--format", "json", "submit"};
  for (const auto& op : ops) args.push_back((SourceDir() / "examples/ops" / op).string());
  for (const std::string& a :
       {std::string("--no-wait"), std::string("--repeats"), std::string("4"),
        std::string("--case-arg"), std::string("--case-id"), std::string("--case-id"),
        std::string("p0"), std::string("--label"), label, std::string("--op-name-map"),
        (SourceDir() / "deploy/demo-op-names.json").string()}) {
    args.push_back(a);
  }
  auto r = c.Cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  v1::Collection collection;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &collection).ok()) << r.out;
  return collection.id();
}

void ExpectSucceeded(Cluster& c, const std::string& id) {
  const v1::Collection done = c.WaitFor(
      id, [](const v1::Collection& x) { return x.state() >= v1::COLLECTION_STATE_SUCCEEDED; },
      std::chrono::seconds(480));
  EXPECT_EQ(done.state(), v1::COLLECTION_STATE_SUCCEEDED) << c.agent->Log();
}

TEST(ImplementationsE2eTest, AscendCAgainstPyptoInBothScopes) {
  Cluster c;
  c.Start("0-3");
  // Both batches at once: four jobs on four devices.
  const std::string asc = Submit(c, {"interleave_rope_ascendc", "apply_adam_ascendc"}, "impl=asc");
  const std::string pto = Submit(c, {"interleave_rope", "apply_adam"}, "impl=pypto");
  ExpectSucceeded(c, asc);
  ExpectSucceeded(c, pto);
  const std::string pairs = (c.dir.path() / "pairs.txt").string();
  std::ofstream(pairs) << "# PyPTO = Ascend C\ninterleave_rope=interleave_rope_ascendc\n"
                          "apply_adam=apply_adam_ascendc\n";

  // 4 vs 4 samples reach p = 0.029: verdicts at alpha 0.05 in both scopes.
  auto r =
      c.Cli({"--format", "json", "compare-impl", asc, pto, "--pair-map", pairs, "--alpha", "0.05"});
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j["schema"], "npuperf.compare_impl.v1");
  EXPECT_EQ(r.exit_code, j["exit_code"].get<int>());
  const nlohmann::json& res = j["result"];
  ASSERT_EQ(res["operators"].size(), 2u) << r.out;
  for (const auto& op : res["operators"]) {
    EXPECT_EQ(op["scenarios"], 1) << op.dump();
    EXPECT_EQ(op["core_cases"], 1) << op.dump();
    // The PyPTO forms do less work than the Ascend C ones in both scopes.
    EXPECT_LT(op["core_ratio"].get<double>(), 1.0) << op.dump();
    EXPECT_LT(op["task_duration_ratio"].get<double>(), 1.0) << op.dump();
  }
  for (const auto& cs : res["cases"]) {
    EXPECT_EQ(cs["status"], "IMPLEMENTATION_CASE_COMPARED") << cs.dump();
    EXPECT_EQ(cs["task_duration"]["base_samples"], 4) << cs.dump();
    EXPECT_EQ(cs["task_duration"]["verdict"], "VERDICT_IMPROVED") << cs.dump();
    // The core scope is tested on one core time per repeat, as Task Duration is.
    EXPECT_EQ(cs["core"]["base_samples"], 4) << cs.dump();
    EXPECT_EQ(cs["core"]["candidate_samples"], 4) << cs.dump();
    EXPECT_EQ(cs["core"]["verdict"], "VERDICT_IMPROVED") << cs.dump();
    EXPECT_LT(cs["core"]["ratio_ci_high"].get<double>(), 1.0) << cs.dump();
    bool op_name_informative = false;
    for (const auto& d : cs["fingerprint_differences"]) {
      EXPECT_FALSE(d["blocking"].get<bool>()) << d.dump();
      if (d["field"] == "op_name") op_name_informative = true;
    }
    EXPECT_TRUE(op_name_informative) << cs.dump();
  }
  EXPECT_GT(res["arithmetic_mean"]["core_ratio"].get<double>(), 0);
  EXPECT_EQ(r.exit_code, 0) << r.out;  // every case has a verdict, none slower

  auto md = c.Cli({"compare-impl", asc, pto, "--pair-map", pairs, "--format", "markdown"});
  EXPECT_NE(md.out.find("| interleave_rope | interleave_rope_ascendc | 1 | 0."), std::string::npos)
      << md.out;
  auto html = c.Cli({"compare-impl", asc, pto, "--pair-map", pairs, "--format", "html"});
  EXPECT_NE(html.out.find("data-chart=\"implementation-ratios\""), std::string::npos);
  auto junit = c.Cli({"compare-impl", asc, pto, "--pair-map", pairs, "--format", "junit"});
  EXPECT_NE(junit.out.find("name=\"apply_adam/p0\""), std::string::npos) << junit.out;

  auto rel = c.Cli({"release-report", pto, "--baseline", asc, "--pair-map", pairs});
  EXPECT_EQ(rel.exit_code, 0) << rel.err;
  EXPECT_NE(rel.out.find("| total | 2 | 100% |"), std::string::npos) << rel.out;
  EXPECT_NE(rel.out.find("| apply_adam | apply_adam_ascendc | 1 |"), std::string::npos) << rel.out;
  auto bad = c.Cli({"compare-impl", asc, pto, "--pair", "interleave_rope"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace npuperf::testing
