// Profiles every examples/ops operator under the built msprof-sim and checks
// that each shows the bound profile it was written to have, and that the _v2
// variants really improve (or, for grouped_matmul_v2, regress).
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;
using Row = std::map<std::string, std::string>;

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted)
      cells.emplace_back();
    else
      cells.back() += c;
  }
  return cells;
}

// The op_summary row of the operator's target kernel (PipeUtilization, p0, seed 7): the first
// row whose Op Name starts with `kernel` (PyPTO's mangled names start with _Z).
Row Profile(const std::string& op, const std::string& kernel = "_Z") {
  const char* build = std::getenv("NPUPERF_BUILD_DIR");
  const char* src = std::getenv("NPUPERF_SOURCE_DIR");
  fs::path out = fs::path(::testing::TempDir()) / absl::StrCat("examples_", ::getpid(), "_", op);
  fs::remove_all(out);
  std::string cmd = absl::StrCat(
      "env -u ASCEND_RT_VISIBLE_DEVICES -u TILE_FWK_DEVICE_ID MSPROF_SIM_SEED=7 "
      "MSPROF_SIM_STATE_DIR=",
      out.string(), "/state ", build ? build : "build", "/sim-bin/msprof --output=", out.string(),
      "/p --ai-core=on --aic-metrics=PipeUtilization --task-time=on python3 ", src ? src : ".",
      "/examples/ops/", op, "/test_", op, ".py --case-id p0 > /dev/null");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (const auto& prof : fs::directory_iterator(out / "p")) {
    for (const auto& f : fs::directory_iterator(prof.path() / "mindstudio_profiler_output")) {
      if (f.path().filename().string().rfind("op_summary_", 0) != 0) continue;
      std::ifstream in(f.path());
      std::string line;
      std::getline(in, line);
      std::vector<std::string> header = SplitCsv(line);
      while (std::getline(in, line)) {
        std::vector<std::string> cells = SplitCsv(line);
        if (cells.size() != header.size() || cells[4].rfind(kernel, 0) != 0) continue;
        Row row;
        for (size_t i = 0; i < header.size(); ++i) row[header[i]] = cells[i];
        return row;
      }
    }
  }
  ADD_FAILURE() << "no target row for " << op;
  return {};
}

double Num(const Row& r, const std::string& k) { return r.count(k) ? std::stod(r.at(k)) : -1; }

TEST(ExamplesTest, EachOperatorHasItsBoundProfile) {
  Row rms = Profile("inplace_add_rmsnorm");
  EXPECT_EQ(rms["Task Type"], "AI_VECTOR_CORE");
  EXPECT_EQ(rms["Block Num"], "16");  // 16 rows: under-fills the 48 vector cores
  Row rope = Profile("interleave_rope");
  EXPECT_GT(Num(rope, "aiv_vec_ratio"), 0.6);
  Row fa = Profile("flash_attention_mha");
  EXPECT_EQ(fa["Task Type"], "MIX_AIC");
  EXPECT_GT(Num(fa, "aic_mac_ratio"), 0.4);
  EXPECT_GT(Num(fa, "aiv_vec_ratio"), 0.8);
  Row gmm = Profile("grouped_matmul");
  EXPECT_EQ(gmm["Task Type"], "AI_CORE");
  EXPECT_GT(Num(gmm, "aic_mac_ratio"), Num(gmm, "aic_mte2_ratio"));
  EXPECT_GT(Num(gmm, "cube_utilization(%)"), 50);
  Row adam = Profile("apply_adam");
  EXPECT_GT(Num(adam, "aiv_mte2_ratio"), 0.7);
  EXPECT_LT(Num(adam, "aiv_vec_ratio"), 0.3);
  Row moe = Profile("moe_init_routing");
  EXPECT_GT(Num(moe, "aiv_scalar_ratio"), 0.9);
}

TEST(ExamplesTest, V2VariantsImproveOrRegressForReal) {
  double rope = Num(Profile("interleave_rope"), "Task Duration(us)");
  double rope2 = Num(Profile("interleave_rope_v2"), "Task Duration(us)");
  EXPECT_LT(rope2, 0.8 * rope);
  Row rms = Profile("inplace_add_rmsnorm");
  Row rms2 = Profile("inplace_add_rmsnorm_v2");
  EXPECT_LT(Num(rms2, "aiv_time(us)"), Num(rms, "aiv_time(us)"));
  EXPECT_EQ(rms2["Block Num"], "48");
  double gmm = Num(Profile("grouped_matmul"), "Task Duration(us)");
  double gmm2 = Num(Profile("grouped_matmul_v2"), "Task Duration(us)");
  EXPECT_GT(gmm2, 1.1 * gmm);
}

// The Ascend C forms (examples/ops/*_ascendc, docs/comparisons.md "Implementations"): another
// kernel on the same inputs, slower than the PyPTO form in the core time (swimlane scope) and
// more so in Task Duration (profiling scope: their uneven blocks make the slowest core later),
// as the release report's ASC/AICore and ASC/Prof ratios are.
TEST(ExamplesTest, AscendCFormsTakeTheSameInputsAndAreSlowerInBothScopes) {
  const std::pair<const char*, const char*> forms[] = {
      {"inplace_add_rmsnorm", "InplaceAddRmsNorm_"},
      {"interleave_rope", "InterleaveRope_"},
      {"flash_attention_mha", "FlashAttentionScore_"},
      {"apply_adam", "ApplyAdam_"}};
  for (const auto& [op, kernel] : forms) {
    Row pto = Profile(op);
    Row asc = Profile(std::string(op) + "_ascendc", kernel);
    EXPECT_EQ(asc["Input Shapes"], pto["Input Shapes"]) << op;
    EXPECT_EQ(asc["Input Data Types"], pto["Input Data Types"]) << op;
    EXPECT_NE(asc["Op Name"], pto["Op Name"]) << op;
    const auto core = [](Row& r) {
      return std::max(Num(r, "aicore_time(us)"), Num(r, "aiv_time(us)"));
    };
    const double core_ratio = core(pto) / core(asc);
    const double task_ratio = Num(pto, "Task Duration(us)") / Num(asc, "Task Duration(us)");
    EXPECT_LT(core_ratio, 0.95) << op;
    EXPECT_LT(task_ratio, core_ratio) << op;
    EXPECT_GT(task_ratio, 0.2) << op;
  }
}

}  // namespace
