#include "agent/job_environment.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

v1::JobAssignment Job(v1::CollectionKind kind) {
  v1::JobAssignment a;
  a.set_kind(kind);
  a.set_device_id(3);
  a.set_collection_id("c-1");
  a.set_case_id("p0");
  a.mutable_params()->set_seed(42);
  return a;
}

const std::map<std::string, std::string> kAgentEnv = {{"PATH", "/usr/bin"},
                                                      {"HOME", "/root"},
                                                      {"AWS_SECRET_ACCESS_KEY", "x"},
                                                      {"NPUPERF_TOKEN", "secret"},
                                                      {"ASCEND_TOOLKIT_HOME", "/usr/local/Ascend"},
                                                      {"MSPROF_SIM_SOC_MAP", "0-7=Ascend910B2"},
                                                      {"ASCEND_RT_VISIBLE_DEVICES", "0,1"}};

TEST(JobEnvironmentTest, OnlyAllowListedVariablesLeak) {
  auto env = RunnerEnv(kAgentEnv, Job(v1::COLLECTION_KIND_BATCH));
  EXPECT_FALSE(env.contains("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(env.contains("NPUPERF_TOKEN"));
  EXPECT_EQ(env.at("ASCEND_TOOLKIT_HOME"), "/usr/local/Ascend");
  EXPECT_EQ(env.at("MSPROF_SIM_SOC_MAP"), "0-7=Ascend910B2");
  EXPECT_EQ(env.at("ASCEND_RT_VISIBLE_DEVICES"), "3");
  EXPECT_EQ(env.at("PYPTO_PERF_SEED"), "42");
  EXPECT_EQ(env.at("PYTHONHASHSEED"), "42");
  EXPECT_EQ(env.at("PYPTO_PERF_COLLECTION_ID"), "c-1");
}

TEST(JobEnvironmentTest, ManifestCollectionsUseThePhysicalIdWithoutMask) {
  auto job = Job(v1::COLLECTION_KIND_MANIFEST);
  job.mutable_case_selector()->set_case_env("PYPTO_CASE");
  auto env = RunnerEnv(kAgentEnv, job);
  EXPECT_FALSE(env.contains("ASCEND_RT_VISIBLE_DEVICES"));
  EXPECT_EQ(env.at("TILE_FWK_DEVICE_ID"), "3");
  EXPECT_EQ(env.at("PYPTO_CASE"), "p0");
  auto preflight = PreflightEnv(kAgentEnv, job, "unknown-id");
  EXPECT_EQ(preflight.at("ASCEND_RT_VISIBLE_DEVICES"), "3");
  EXPECT_EQ(preflight.at("PYPTO_CASE"), "unknown-id");
}

TEST(JobEnvironmentTest, RunnerArgvAndDiscovery) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "test_op.py") << "";
  auto runner = FindRunner(dir.path(), "");
  ASSERT_TRUE(runner.ok());
  auto job = Job(v1::COLLECTION_KIND_BATCH);
  job.mutable_case_selector()->set_case_arg("--case-id");
  EXPECT_EQ(RunnerArgv("python3", *runner, job, "p0"),
            (std::vector<std::string>{"python3", runner->string(), "--case-id", "p0"}));
  std::ofstream(dir.path() / "test_other.py") << "";
  EXPECT_TRUE(absl::IsFailedPrecondition(FindRunner(dir.path(), "").status()));
  EXPECT_TRUE(FindRunner(dir.path(), "test_other.py").ok());
  EXPECT_FALSE(FindRunner(dir.path(), "missing.py").ok());
}

}  // namespace
}  // namespace npuperf::agent
