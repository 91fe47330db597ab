// The agent's second check of an assignment's untrusted names (case_env,
// manifest_path) and its confined read of bundle files (issue 13).
#include <unistd.h>

#include <fstream>

#include "agent/job_environment.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

namespace fs = std::filesystem;

v1::JobAssignment Job() {
  v1::JobAssignment a;
  a.set_kind(v1::COLLECTION_KIND_BATCH);
  a.set_device_id(3);
  a.set_case_id("p0");
  return a;
}

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(JobInputsTest, AReservedCaseEnvFailsTheJobAndIsNeverSet) {
  v1::JobAssignment job = Job();
  job.mutable_case_selector()->set_case_env("LD_PRELOAD");
  const absl::Status s = CheckJobInputs(job);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("case_selector.case_env"), std::string::npos);
  const auto env = RunnerEnv({{"PATH", "/usr/bin"}}, job);
  EXPECT_FALSE(env.contains("LD_PRELOAD"));
  EXPECT_EQ(env.at("ASCEND_RT_VISIBLE_DEVICES"), "3");  // the mask stays the agent's
  job.mutable_case_selector()->set_case_env("ASCEND_RT_VISIBLE_DEVICES");
  EXPECT_EQ(RunnerEnv({}, job).at("ASCEND_RT_VISIBLE_DEVICES"), "3");
  EXPECT_EQ(PreflightEnv({}, job, "p0").at("ASCEND_RT_VISIBLE_DEVICES"), "3");
}

TEST(JobInputsTest, APlainCaseEnvIsSetToTheCaseId) {
  v1::JobAssignment job = Job();
  job.mutable_case_selector()->set_case_env("OP_CASE_ID");
  EXPECT_TRUE(CheckJobInputs(job).ok());
  EXPECT_EQ(RunnerEnv({}, job).at("OP_CASE_ID"), "p0");
}

TEST(JobInputsTest, AManifestPathOutsideTheBundleFailsTheJob) {
  for (const char* bad : {"/etc/shadow", "../../../../proc/self/environ", "a/../../b"}) {
    v1::JobAssignment job = Job();
    job.set_manifest_path(bad);
    const absl::Status s = CheckJobInputs(job);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_EQ(s.message().find("shadow"), std::string::npos);
    EXPECT_EQ(s.message().find("environ"), std::string::npos);
  }
}

TEST(JobInputsTest, BundleFilesAreReadInsideTheBundleOnly) {
  npuperf::testing::TempDir tmp;
  const fs::path op = tmp.path() / "work" / "op";
  Write(op / "cases" / "PERFORMANCE_CASES.json", "{}");
  Write(tmp.path() / "secret", "root:x");
  fs::create_symlink(tmp.path() / "secret", op / "link.json");
  fs::create_symlink(tmp.path(), op / "up");
  auto ok = ReadBundleFile(op, "cases/PERFORMANCE_CASES.json", "manifest_path", 1024);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, "{}");
  for (const char* refused : {"link.json", "up/secret", "missing.json", "cases", "../secret"}) {
    auto got = ReadBundleFile(op, refused, "manifest_path", 1024);
    ASSERT_FALSE(got.ok()) << refused;
    EXPECT_EQ(got.status().message().find(tmp.path().string()), std::string::npos)
        << "echoes a host path: " << got.status();
    EXPECT_EQ(got.status().message().find("root:x"), std::string::npos);
  }
  EXPECT_NE(ReadBundleFile(op, "link.json", "manifest_path", 1024)
                .status()
                .message()
                .find("symlinks are refused"),
            std::string::npos);
}

TEST(JobInputsTest, ABundleFileOverItsLimitIsRefused) {
  npuperf::testing::TempDir tmp;
  Write(tmp.path() / "big.json", std::string(5000, 'x'));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      ReadBundleFile(tmp.path(), "big.json", "manifest_path", 4096).status()));
}

}  // namespace
}  // namespace npuperf::agent
