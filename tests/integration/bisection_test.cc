// Bisection end to end (issue 34): real server, agent and msprof-sim, and a real git repository
// from examples/bisect/make_repo.sh (one culprit that re-reads a tensor, one comments-only commit,
// one commit whose runner exits 3). `npuperf bisect` packs every revision from git, the fleet
// bisects it on four devices (through a server restart) and the culprit comes back named and
// explained.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

namespace fs = std::filesystem;

// Runs make_repo.sh into dir: its key=value lines (good, bad, culprit, noisy, broken).
std::map<std::string, std::string> MakeRepo(const fs::path& dir) {
  const std::string cmd = "/bin/bash '" + (SourceDir() / "examples/bisect/make_repo.sh").string() +
                          "' '" + dir.string() + "' 10 6 2 4 2>&1";
  std::map<std::string, std::string> out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char line[512];
  std::string all;
  while (fgets(line, sizeof line, p) != nullptr) {
    std::string s(line);
    all += s;
    if (!s.empty() && s.back() == '\n') s.pop_back();
    const size_t eq = s.find('=');
    if (eq != std::string::npos) out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  EXPECT_EQ(pclose(p), 0) << all;
  return out;
}

nlohmann::json Json(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

TEST(BisectionTest, TheCulpritOfARealRepositoryIsNamedAndExplained) {
  Cluster c;
  c.Start("0-3");
  const fs::path repo = c.dir.path() / "repo";
  std::map<std::string, std::string> revs = MakeRepo(repo);
  ASSERT_EQ(revs.count("culprit"), 1u);
  const std::string op = (repo / "ops/apply_adam").string();
  const std::vector<std::string> bisect = {
      "bisect",        "--repo",
      repo.string(),   "--good",
      revs["good"],    "--bad",
      revs["bad"],     op,
      "--op-name-map", (SourceDir() / "deploy/demo-op-names.json").string(),
      "--repeats",     "7",
      "--warm-up",     "0"};
  // Started without waiting, then the server restarts: the bisection lives in the store and
  // moves on from the new process.
  auto started = c.Cli(bisect);
  ASSERT_EQ(started.exit_code, 4) << started.out << started.err;
  EXPECT_NE(started.out.find("MEASURING_ENDS"), std::string::npos) << started.out;
  c.RestartServer();
  auto r = c.Cli({"--format", "json", "bisection", "1", "--wait", "--timeout", "10m"});
  nlohmann::json b = Json(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << "\nagent log:\n" << c.agent->Log();
  EXPECT_EQ(b["state"], "BISECTION_STATE_DONE") << b.dump(2);
  ASSERT_EQ(b["culprits"].size(), 1u) << b.dump(2);
  const nlohmann::json& culprit = b["culprits"][0];
  EXPECT_EQ(culprit["commit"], revs["culprit"]);
  EXPECT_EQ(culprit["judgement"]["relation"], "DIFFERENT");
  EXPECT_GT(culprit["judgement"]["ratio"].get<double>(), 1.05) << culprit.dump(2);
  EXPECT_EQ(culprit["changed_files"], nlohmann::json::array({"test_apply_adam.py"}));
  // Explained on standard rounds of the culprit and its parent.
  EXPECT_EQ(culprit["explanation"]["verdict"], "VERDICT_REGRESSED") << culprit.dump(2);
  EXPECT_FALSE(culprit["explanation"]["metric_deltas"].empty());
  // Every step is listed; the broken revision, if it was run, was skipped.
  EXPECT_GE(b["steps"].size(), 4u);
  for (const nlohmann::json& rev : b["revisions"]) {
    if (rev.value("failed", false)) {
      EXPECT_EQ(rev["commit"], revs["broken"]) << rev.dump();
    }
  }
  // The text form reads it back; the same command again returns the same bisection.
  const std::string id = b["id"].get<std::string>();
  auto shown = c.Cli({"bisection", id});
  EXPECT_EQ(shown.exit_code, 0) << shown.out << shown.err;
  EXPECT_NE(shown.out.find("culprit " + revs["culprit"].substr(0, 12)), std::string::npos)
      << shown.out;
  auto again = c.Cli(bisect);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;  // DONE with a culprit
  EXPECT_NE(again.err.find("bisection " + id + " was started before"), std::string::npos)
      << again.err;
  // Its runs stay out of the operator's series.
  auto rounds = c.Cli({"--format", "json", "rounds", "apply_adam"});
  EXPECT_EQ(Json(rounds).value("rounds", nlohmann::json::array()).size(), 0u) << rounds.out;
  auto listed = c.Cli({"--format", "json", "bisections", "--all"});
  EXPECT_EQ(Json(listed)["bisections"].size(), 1u) << listed.out;
}

TEST(BisectionTest, BadRangesAndDirtyTreesAreRefusedBeforeAnythingRuns) {
  Cluster c;
  c.Start("0-1");
  const fs::path repo = c.dir.path() / "repo";
  std::map<std::string, std::string> revs = MakeRepo(repo);
  const std::string op = (repo / "ops/apply_adam").string();
  auto run = [&](const std::string& good, const std::string& bad) {
    return c.Cli(
        {"bisect", "--repo", repo.string(), "--good", good, "--bad", bad, op, "--op-name", "k"});
  };
  auto unknown = run("no-such-revision", revs["bad"]);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out << unknown.err;
  EXPECT_NE(unknown.err.find("--good"), std::string::npos) << unknown.err;
  auto reversed = run(revs["bad"], revs["good"]);
  EXPECT_EQ(reversed.exit_code, 2) << reversed.err;
  auto one = run(revs["bad"] + "~1", revs["bad"]);
  EXPECT_EQ(one.exit_code, 2) << one.err;
  EXPECT_NE(one.err.find("one-commit range"), std::string::npos) << one.err;
  { std::ofstream(repo / "ops/apply_adam/test_apply_adam.py", std::ios::app) << "# local edit\n"; }
  auto dirty = run(revs["good"], revs["bad"]);
  EXPECT_EQ(dirty.exit_code, 1) << dirty.out << dirty.err;
  EXPECT_NE(dirty.err.find("test_apply_adam.py"), std::string::npos) << dirty.err;
  auto listed = c.Cli({"--format", "json", "bisections", "--all"});
  EXPECT_EQ(Json(listed).value("bisections", nlohmann::json::array()).size(), 0u) << listed.out;
  auto cancel = c.Cli({"bisection", "99", "--cancel"});
  EXPECT_EQ(cancel.exit_code, 6) << cancel.err;
}

// The nightly bot's follow-up: `regressions --bisect` starts a bisection for the new regression
// from the commit labels of its rounds, linked to it; triaging it as a false positive cancels the
// bisection and every run it queued.
TEST(BisectionTest, ANewRegressionIsBisectedFromItsCommitLabelsUntilTriagedAFalsePositive) {
  Cluster c;
  c.Start("0-3");
  const fs::path repo = c.dir.path() / "repo";
  std::map<std::string, std::string> revs = MakeRepo(repo);
  ASSERT_EQ(revs.count("bad"), 1u);
  const std::string op = (repo / "ops/apply_adam").string();
  auto nightly = [&](const std::string& commit) {
    EXPECT_EQ(RunCommand({"/usr/bin/git", "-C", repo.string(), "checkout", "-q", commit},
                         c.dir.path(), {}, std::chrono::seconds(30))
                  .exit_code,
              0);
    auto r = c.Cli({"--format", "json", "submit", "--quick", "--repeats", "7", "--warm-up", "0", op,
                    "--op-name-map", (SourceDir() / "deploy/demo-op-names.json").string(),
                    "--label", "branch=main", "--label", "commit=" + commit});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return Json(r)["id"].get<std::string>();
  };
  const std::string base = nightly(revs["good"]);
  ASSERT_EQ(c.Cli({"baseline", "pin", "branch=main", base}).exit_code, 0);
  const std::string cand = nightly(revs["bad"]);
  auto r = c.Cli({"--format", "json", "regressions", "--baseline", "branch=main", "--collection",
                  cand, "--bisect", "--repo", repo.string(), "--ops-dir", "ops"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  nlohmann::json j = Json(r);
  ASSERT_EQ(j["result"]["tracked"].size(), 1u) << r.out;
  const std::string regression = j["result"]["tracked"][0]["id"].get<std::string>();
  EXPECT_NE(r.err.find("bisection 1 started over 10 commits"), std::string::npos) << r.err;
  auto shown = c.Cli({"--format", "json", "bisection", "1"});
  nlohmann::json b = Json(shown);
  EXPECT_EQ(b["regression_id"], regression) << b.dump(2);
  // Triage as a false positive: the next reaper round cancels the bisection and its runs.
  ASSERT_EQ(c.Cli({"triage", regression, "--false-positive"}).exit_code, 0);
  auto ended = c.Cli({"--format", "json", "bisection", "1", "--wait", "--timeout", "2m"});
  EXPECT_EQ(ended.exit_code, 4) << ended.out << ended.err;
  b = Json(ended);
  EXPECT_EQ(b["state"], "BISECTION_STATE_CANCELLED") << b.dump(2);
  EXPECT_NE(b["reason"].get<std::string>().find("false positive"), std::string::npos);
  for (const nlohmann::json& step : b["steps"]) {
    EXPECT_NE(step["state"], "COLLECTION_STATE_QUEUED") << step.dump();
    EXPECT_NE(step["state"], "COLLECTION_STATE_RUNNING") << step.dump();
  }
}

}  // namespace
}  // namespace npuperf::testing
