// Issue 19 raw output end to end: a --keep-raw round (real server, agent and
// msprof-sim) uploads its PROF tree; `npuperf artifacts` lists it, `npuperf
// fetch` downloads, verifies and unpacks it, and `npuperf summarize` rerun
// offline on exactly those files gives the evidence the server stored.
#include <fstream>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {
namespace fs = std::filesystem;

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

// The round once the agent's upload shows in it (the agent uploads after
// the result is acknowledged).
v1::Round AwaitArtifact(Cluster& c, int64_t round_id) {
  v1::Round round;
  for (int i = 0; i < 600; ++i) {
    auto r = c.GetRound(round_id);
    if (r.ok()) round = *r;
    if (round.artifacts_size() > 0) break;
    WallClock().SleepFor(std::chrono::milliseconds(100));
  }
  return round;
}

TEST(ArtifactsEndToEndTest, FetchedRawOutputSummarizesToTheStoredEvidence) {
  Cluster c;
  c.Start("0");
  const fs::path op = SourceDir() / "examples/ops/inplace_add_rmsnorm";
  auto r = c.Cli({"--format", "json", "submit", op.string(), "--op-name", kRmsNormKernel,
                  "--warm-up", "0", "--repeats", "1", "--keep-raw"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << c.agent->Log();
  v1::Collection col;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out;
  ASSERT_EQ(col.jobs_size(), 1);
  ASSERT_EQ(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << col.jobs(0).reason();
  const int64_t round_id = col.jobs(0).round_id();
  const v1::Round round = AwaitArtifact(c, round_id);
  ASSERT_EQ(round.artifacts_size(), 1) << c.agent->Log();
  const v1::RoundArtifact& art = round.artifacts(0);
  EXPECT_EQ(art.name(), "raw.tar.gz");
  EXPECT_GT(art.size_bytes(), 0);

  auto listed = c.Cli({"artifacts", std::to_string(round_id)});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(art.sha256()), std::string::npos) << listed.out;

  const fs::path dir = c.dir.path() / "fetched";
  auto fetched = c.Cli({"fetch", std::to_string(round_id), dir.string()});
  ASSERT_EQ(fetched.exit_code, 0) << fetched.out << fetched.err;
  EXPECT_NE(fetched.out.find((dir / "raw").string()), std::string::npos) << fetched.out;
  ASSERT_TRUE(fs::is_directory(dir / "raw" / "repeat_1")) << fetched.out;
  // A second fetch into the same, now full, directory is refused.
  auto again = c.Cli({"fetch", std::to_string(round_id), dir.string()});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("not an empty directory"), std::string::npos) << again.err;

  // Offline, on exactly what was measured (the archive goes to a copy of the
  // operator directory, never into the source tree).
  const fs::path ops = c.dir.path() / "ops";
  fs::copy(op, ops, fs::copy_options::recursive);
  auto summary = c.Cli({"summarize", (dir / "raw" / "repeat_1").string(), ops.string(), "--op-name",
                        kRmsNormKernel, "--format", "json"});
  ASSERT_EQ(summary.exit_code, 0) << summary.out << summary.err;
  nlohmann::json j = nlohmann::json::parse(summary.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << summary.out;
  const auto& stored = round.evidence().duration();
  const auto samples = j["duration"]["samples_us"].get<std::vector<double>>();
  ASSERT_EQ(static_cast<int>(samples.size()), stored.samples_us_size()) << summary.out;
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_DOUBLE_EQ(samples[i], stored.samples_us(static_cast<int>(i)));
  }
  EXPECT_DOUBLE_EQ(j["duration"]["aggregate_us"].get<double>(), stored.aggregate_us());
  EXPECT_EQ(j["bound"]["label"].get<std::string>(), round.evidence().bound().label());
}

}  // namespace
}  // namespace npuperf::testing
