// Confirmations end to end (issue 20): real server, agent and msprof-sim. A regressing variant is
// CONFIRMED by reruns on another device; a regression that one slow device made (msprof-sim's
// slow:<factor>@dev=1 fault) is NOT_CONFIRMED, and --confirm bots then pass.
#include <filesystem>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

// One operator directory in quick mode (7 repeats, no warm-up) on one device, labelled: the
// collection id and the round id.
std::pair<std::string, int64_t> QuickRun(Cluster& c, const std::string& dir,
                                         const std::string& device, const std::string& label) {
  auto r = c.Cli({"--format", "json", "submit", "--quick", "--repeats", "7", "--warm-up", "0", dir,
                  "--op-name-map", (SourceDir() / "deploy/demo-op-names.json").string(),
                  "--devices", device, "--label", label});
  EXPECT_EQ(r.exit_code, 0) << r.err << "\nagent log:\n" << c.agent->Log();
  v1::Collection collection;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &collection).ok()) << r.out;
  EXPECT_EQ(collection.jobs_size(), 1) << r.out;
  if (collection.jobs_size() != 1) return {collection.id(), 0};
  EXPECT_EQ(collection.jobs(0).placement().device_id(), std::stoi(device));
  return {collection.id(), collection.jobs(0).round_id()};
}

nlohmann::json Json(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

std::string GroupedMatmul() { return (SourceDir() / "examples/ops/grouped_matmul").string(); }

TEST(ConfirmationTest, ARegressingVariantIsConfirmedOnAnotherDevice) {
  Cluster c;
  c.Start("0-3");
  // The slower code under the same name (as ComparisonTest's nightly bot does).
  const std::filesystem::path slow = c.dir.path() / "slow" / "grouped_matmul";
  std::filesystem::create_directories(slow.parent_path());
  std::filesystem::copy(SourceDir() / "examples/ops/grouped_matmul_v2", slow,
                        std::filesystem::copy_options::recursive);
  std::filesystem::copy_file(slow / "grouped_matmul_v2_golden.py",
                             slow / "grouped_matmul_golden.py");
  auto [base_id, base] = QuickRun(c, GroupedMatmul(), "0", "branch=main");
  auto [cand_id, cand] = QuickRun(c, slow.string(), "1", "branch=dev");
  auto r = c.Cli({"--format", "json", "compare", std::to_string(base), std::to_string(cand),
                  "--confirm", "--confirm-timeout", "5m"});
  nlohmann::json j = Json(r);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(j["result"]["comparison"]["verdict"], "VERDICT_REGRESSED") << r.out;
  ASSERT_EQ(j["confirmations"].size(), 1u) << r.out;
  const nlohmann::json& conf = j["confirmations"][0];
  EXPECT_EQ(conf["state"], "CONFIRMATION_STATE_CONFIRMED") << conf.dump(2);
  EXPECT_EQ(conf["rerun"]["verdict"], "VERDICT_REGRESSED");
  const int device = conf["device"].value("device_id", 0);
  EXPECT_TRUE(device == 2 || device == 3) << conf.dump(2);  // neither original device
  ASSERT_EQ(conf["steps"].size(), 4u);
  EXPECT_EQ(conf["steps"][0]["side"], "baseline");
  EXPECT_EQ(conf["steps"][1]["side"], "candidate");
  // The text form, and `confirmation ID` reading it back.
  auto shown = c.Cli({"confirmation", conf["id"].get<std::string>()});
  EXPECT_EQ(shown.exit_code, 3) << shown.out << shown.err;
  EXPECT_NE(shown.out.find("REGRESSED -> CONFIRMED"), std::string::npos) << shown.out;
  // The reruns stay out of the operator's series.
  auto rounds = c.Cli({"--format", "json", "rounds", "grouped_matmul"});
  EXPECT_EQ(Json(rounds)["rounds"].size(), 2u) << rounds.out;
}

TEST(ConfirmationTest, ARegressionOfOneSlowDeviceIsNotConfirmedAndPassesBots) {
  Cluster c;
  c.Start("");
  c.agent = c.StartAgent("0-3", "agent", {{"MSPROF_SIM_FAULT", "slow:1.15@dev=1"}});
  auto [base_id, base] = QuickRun(c, GroupedMatmul(), "0", "branch=main");
  auto [cand_id, cand] = QuickRun(c, GroupedMatmul(), "1", "branch=main");
  // The same code on the slow device: REGRESSED, exit 3, without confirmation.
  auto plain = c.Cli({"compare", std::to_string(base), std::to_string(cand)});
  EXPECT_EQ(plain.exit_code, 3) << plain.out << plain.err;
  ASSERT_EQ(c.Cli({"baseline", "pin", "branch=main", base_id}).exit_code, 0);
  auto bot = c.Cli({"--format", "json", "regressions", "--baseline", "branch=main", "--collection",
                    cand_id, "--confirm", "--confirm-timeout", "5m"});
  nlohmann::json j = Json(bot);
  EXPECT_EQ(bot.exit_code, 0) << bot.out << bot.err;
  ASSERT_EQ(j["result"]["regressions"].size(), 1u) << bot.out;
  ASSERT_EQ(j["result"]["confirmations"].size(), 1u) << bot.out;
  const nlohmann::json& conf = j["result"]["confirmations"][0];
  EXPECT_EQ(conf["state"], "CONFIRMATION_STATE_NOT_CONFIRMED") << conf.dump(2);
  EXPECT_EQ(conf["rerun"]["verdict"], "VERDICT_STABLE") << conf.dump(2);
  EXPECT_NE(conf["device"].value("device_id", 1), 1);
  // compare --confirm of the same pair finds the same, finished confirmation.
  auto again = c.Cli({"compare", std::to_string(base), std::to_string(cand), "--confirm"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("REGRESSED -> NOT_CONFIRMED"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace npuperf::testing
