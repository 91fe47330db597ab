#include "evidence/cases.h"

#include <set>

#include "absl/strings/str_join.h"
#include "evidence/golden.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/evidence/test_util.h"
#include "tests/fixtures/manifest_fixtures.h"

namespace npuperf::evidence {
namespace {

using ::testing::HasSubstr;

std::string ManifestError(const std::string& json) {
  auto m = ParseCaseManifest(json, {});
  return m.ok() ? "" : std::string(m.status().message());
}

TEST(CaseManifestTest, ValidManifestWithTarget) {
  auto m = ParseCaseManifest(R"({"schema_version": 1, "cases": [
      {"id": " p0 ", "shape": "[1, 32]", "dtype": "fp16", "test_function": "test_p0"},
      {"id": "p1", "shape": "{q: [1, 32], k: [1, 64]}", "dtype": "{q: fp16, k: fp32}",
       "test_function": "test_p1", "extra": 1}],
      "optimization_target": {"case_ids": ["p1"], "selection_mode": "single_p0"}})",
                             {});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->cases.size(), 2u);
  EXPECT_EQ(m->cases[0].id, "p0");  // stripped
  EXPECT_EQ(m->cases[1].test_function, "test_p1");
  EXPECT_EQ(m->target_case_ids, std::vector<std::string>{"p1"});
  EXPECT_EQ(m->selection_mode, "single_p0");
}

// The shared fixtures (tests/fixtures/manifests): the client, the server and
// the Python client are tested against the same files.
TEST(CaseManifestTest, SharedFixtures) {
  const auto fixtures = ::npuperf::testing::ManifestFixtures();
  std::set<std::string> indexed;
  for (const auto& f : fixtures) {
    indexed.insert(f.name);
    auto m = ParseCaseManifest(f.bytes, {});
    if (f.good) {
      ASSERT_TRUE(m.ok()) << f.name << ": " << m.status();
      std::vector<std::string> ids;
      for (const PerfCase& c : m->cases) ids.push_back(c.id);
      EXPECT_EQ(absl::StrJoin(ids, ","), f.expected) << f.name;
    } else {
      ASSERT_FALSE(m.ok()) << f.name;
      EXPECT_TRUE(absl::IsInvalidArgument(m.status())) << f.name;
      EXPECT_THAT(std::string(m.status().message()), HasSubstr(f.expected)) << f.name;
    }
  }
  EXPECT_EQ(indexed, ::npuperf::testing::ManifestFixtureFiles())
      << "every fixture has its INDEX.tsv line";
  EXPECT_GT(fixtures.size(), 30u);
}

TEST(CaseManifestTest, ReferenceErrors) {
  EXPECT_EQ(ManifestError(R"({"schema_version": 2, "cases": []})"),
            "case manifest must be an object with schema_version=1");
  EXPECT_EQ(ManifestError(R"({"schema_version": true, "cases": []})"),
            "case manifest must be an object with schema_version=1");
  EXPECT_EQ(ManifestError(R"([1])"), "case manifest must be an object with schema_version=1");
  EXPECT_EQ(ManifestError(R"({"schema_version": 1, "cases": []})"),
            "case manifest cases must be a non-empty list");
  EXPECT_EQ(ManifestError(R"({"schema_version": 1, "cases": [3]})"),
            "case manifest cases[0] must be an object");
  EXPECT_EQ(ManifestError(
                R"({"schema_version": 1, "cases": [{"id": "a", "shape": "[1]", "dtype": " "}]})"),
            "case manifest cases[0].dtype must be a non-empty string");
  EXPECT_EQ(ManifestError(R"({"schema_version": 1, "cases": [{"id": "a", "shape": "[1]",
            "dtype": "fp16", "test_function": "run_a"}]})"),
            "case manifest cases[0].test_function must name a no-argument test_* function");
  EXPECT_EQ(ManifestError(R"({"schema_version": 1, "cases": [{"id": "a", "shape": "[1]",
            "dtype": "fp16"}, {"id": "a ", "shape": "[2]", "dtype": "fp16"}]})"),
            "case manifest contains duplicate case id 'a'");
  EXPECT_THAT(ManifestError("{"), HasSubstr("not valid JSON"));
}

TEST(CanonicalTest, ShapesAndDtypes) {
  EXPECT_TRUE(ShapesEqual("[1, 32]", "(1, 32)"));
  EXPECT_TRUE(ShapesEqual("x:[8, 1024]", "x: [8,1024]"));
  EXPECT_TRUE(ShapesEqual("x:(16,2048)", "x:[16x2048]"));
  EXPECT_TRUE(ShapesEqual("()", "scalar"));
  EXPECT_TRUE(ShapesEqual("{q: [1, 32], k: [1, 64]}", "{q:(1,32),k:(1x64)}"));
  EXPECT_FALSE(ShapesEqual("[1, 32]", "[32, 1]"));
  EXPECT_FALSE(ShapesEqual("q:[1]", "k:[1]"));
  EXPECT_FALSE(ShapesEqual("[0, 3]", "[0, 3]"));  // dims must be positive
  EXPECT_FALSE(ShapesEqual("garbage", "garbage"));
  EXPECT_TRUE(DtypesEqual("fp16", "torch.float16"));
  EXPECT_TRUE(DtypesEqual("half", "FLOAT16"));
  EXPECT_TRUE(DtypesEqual("{q: fp16, k: fp32}", "{q:torch.float16,k:float}"));
  EXPECT_FALSE(DtypesEqual("bf16", "fp16"));
  EXPECT_FALSE(DtypesEqual("uint8", "int8"));
}

TEST(CaseDirNameTest, ReferenceExamples) {
  EXPECT_EQ(CaseDirName("P0"), "case_P0_2842de9d");
  EXPECT_EQ(CaseDirName("a/b c"), "case_a_b_c_0af99a60");
  EXPECT_EQ(CaseDirName("..."), "case_case_ab5df625");
}

// A manifest, a golden source and a contract bound to both, on disk.
class GoldenContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    manifest_path_ = dir_.path() / "PERFORMANCE_CASES.json";
    testing::WriteFile(manifest_path_, R"({"schema_version": 1, "cases": [
        {"id": "p0", "shape": "[1, 32]", "dtype": "fp16"},
        {"id": "p1", "shape": "[4, 2048]", "dtype": "fp16"}]})");
    testing::WriteFile(dir_.path() / "op_golden.py", "def op_golden(x):\n    return x\n");
    auto m = LoadCaseManifest(manifest_path_);
    ASSERT_TRUE(m.ok()) << m.status();
    manifest_ = *m;
    auto src = RecordOf(dir_.path() / "op_golden.py");
    ASSERT_TRUE(src.ok());
    contract_ = {{"schema_version", 1},
                 {"device_id", 0},
                 {"iterations", 1},
                 {"warmup", 3},
                 {"repeats", 3},
                 {"seed", 42},
                 {"timing_scope", "all_golden_npu_kernels"},
                 {"aggregation", "median_of_repeat_totals"},
                 {"golden_source",
                  {{"path", src->path}, {"sha256", src->sha256}, {"size_bytes", src->size_bytes}}},
                 {"case_manifest_source",
                  {{"path", manifest_.source.path},
                   {"sha256", manifest_.source.sha256},
                   {"size_bytes", manifest_.source.size_bytes},
                   {"schema_version", 1}}},
                 {"cases",
                  {{{"id", "p0"},
                    {"shape", "(1,32)"},
                    {"dtype", "torch.float16"},
                    {"raw_repeat_e2e_us", {11.0, 11.865, 12.5}},
                    {"median_total_us", 11.865},
                    {"per_iteration_e2e_us", 11.865}},
                   {{"id", "p1"},
                    {"shape", "[4,2048]"},
                    {"dtype", "half"},
                    {"raw_repeat_e2e_us", {18.55, 18.0, 19.0}},
                    {"median_total_us", 18.55},
                    {"per_iteration_e2e_us", 18.55}}}}};
  }
  std::string Error(const nlohmann::json& j) {
    auto g = ParseGoldenContract(j.dump(), true);
    return g.ok() ? "" : std::string(g.status().message());
  }
  testing::TempDir dir_;
  std::filesystem::path manifest_path_;
  CaseManifest manifest_;
  nlohmann::json contract_;
};

TEST_F(GoldenContractTest, JoinsAndComputesRatio) {
  testing::WriteFile(dir_.path() / "GOLDEN_PERF_REPORT.json", contract_.dump(2));
  auto g = LoadGoldenContract(dir_.path() / "GOLDEN_PERF_REPORT.json");
  ASSERT_TRUE(g.ok()) << g.status();
  auto joined = JoinGolden(manifest_, *g);
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_DOUBLE_EQ(joined->at("p0"), 11.865);
  // A5 softmax (msprof-output.md E6): 11.865 us golden E2E vs 3.250 us kernel.
  GoldenRatio r = ComputeGoldenRatio(joined->at("p0"), 3.250);
  EXPECT_EQ(StatusText(r), "joined");
  EXPECT_EQ(r.label, "golden_reference_ratio");
  EXPECT_NEAR(r.ratio, 11.865 / 3.250, 1e-12);
  EXPECT_EQ(StatusText(ComputeGoldenRatio(std::nullopt, 3.0)), "not_provided");
  EXPECT_THAT(StatusText(ComputeGoldenRatio(5.0, 0)), HasSubstr("mismatch"));
}

TEST_F(GoldenContractTest, ValidationErrors) {
  EXPECT_EQ(Error(contract_), "");
  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = contract_;
    j[key] = std::move(v);
    return Error(j);
  };
  EXPECT_EQ(with("schema_version", 2), "GOLDEN_PERF_REPORT.json must use schema_version=1");
  EXPECT_EQ(with("device_id", true), "Golden device_id must be an integer >= 0");
  EXPECT_EQ(with("iterations", 2), "Stage 5 Golden iterations must be exactly 1");
  EXPECT_EQ(with("seed", 0), "Golden seed must be 42");
  EXPECT_EQ(with("repeats", 2), "Golden case 'p0' must contain 2 positive finite raw repeats");
  nlohmann::json j = contract_;
  j["cases"][0]["median_total_us"] = 11.0;
  EXPECT_EQ(Error(j), "Golden case 'p0' median is not reproducible");
  j = contract_;
  j["cases"][1]["id"] = "p0";
  EXPECT_EQ(Error(j), "Golden contains duplicate case id 'p0'");
  testing::WriteFile(dir_.path() / "op_golden.py", "edited\n");
  EXPECT_EQ(Error(contract_), "Golden source size mismatch");
}

TEST_F(GoldenContractTest, JoinErrors) {
  nlohmann::json j = contract_;
  j["cases"][1]["shape"] = "[4, 1024]";
  auto g = ParseGoldenContract(j.dump(), false);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(JoinGolden(manifest_, *g).status().message(),
            "case 'p1' shape mismatch between manifest and Golden contract");
  j = contract_;
  j["cases"][1]["id"] = "p2";
  g = ParseGoldenContract(j.dump(), false);
  EXPECT_EQ(JoinGolden(manifest_, *g).status().message(),
            "case id mismatch between --case-manifest and GOLDEN_PERF_REPORT.json: "
            "missing_in_golden=['p1'], extra_in_golden=['p2']");
  j = contract_;
  j["case_manifest_source"]["sha256"] = std::string(64, 'a');
  g = ParseGoldenContract(j.dump(), false);
  EXPECT_EQ(JoinGolden(manifest_, *g).status().message(),
            "Golden contract was not collected from this exact case manifest");
  // Editing the manifest after collection breaks its record.
  testing::WriteFile(manifest_path_, "{}");
  EXPECT_EQ(VerifySourceRecord("case manifest", manifest_.source).message(),
            "case manifest source size mismatch");
  EXPECT_EQ(VerifySourceRecord("x", {"rel/path", std::string(64, 'a'), 1}).message(),
            "x source path is not absolute");
}

// An operator directory bundled and unpacked elsewhere (the agent's per-job
// scratch): the contract still names the original absolute paths, yet joins,
// because the manifest is matched by file name and content (docs/evidence.md,
// "Reference bugs fixed on purpose") and the golden source is re-hashed beside
// the contract.
TEST_F(GoldenContractTest, RelocatedOperatorDirectoryStillJoins) {
  testing::WriteFile(dir_.path() / "GOLDEN_PERF_REPORT.json", contract_.dump(2));
  testing::TempDir elsewhere;
  const std::filesystem::path moved = elsewhere.path() / "unpacked" / "op";
  std::filesystem::create_directories(moved);
  for (const char* name : {"PERFORMANCE_CASES.json", "op_golden.py", "GOLDEN_PERF_REPORT.json"}) {
    std::filesystem::copy_file(dir_.path() / name, moved / name);
  }
  // The original directory is gone or changed; only the copy counts.
  testing::WriteFile(dir_.path() / "op_golden.py", "edited after bundling\n");
  auto m = LoadCaseManifest(moved / "PERFORMANCE_CASES.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_NE(m->source.path, manifest_.source.path);
  auto g = LoadGoldenContract(moved / "GOLDEN_PERF_REPORT.json");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->case_manifest_source.path, manifest_.source.path);  // as recorded
  auto joined = JoinGolden(*m, *g);
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_DOUBLE_EQ(joined->at("p1"), 18.55);

  // Same bytes under another file name is not the manifest the golden data was collected from.
  std::filesystem::copy_file(moved / "PERFORMANCE_CASES.json", moved / "OTHER_CASES.json");
  auto other = LoadCaseManifest(moved / "OTHER_CASES.json");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(JoinGolden(*other, *g).status().message(),
            "Golden contract was not collected from this exact case manifest");
  // A golden source beside the contract is what gets checked, even when the
  // recorded absolute path still holds a matching file.
  testing::WriteFile(dir_.path() / "op_golden.py", "def op_golden(x):\n    return x\n");
  testing::WriteFile(moved / "op_golden.py", "tampered\n");
  EXPECT_EQ(LoadGoldenContract(moved / "GOLDEN_PERF_REPORT.json").status().message(),
            "Golden source size mismatch");
}

TEST(GoldenMarkdownTest, Stage5CollectorShape) {
  auto c = ParseGoldenMarkdown(
      "# Golden NPU Performance Reference\n\n- **Device ID**: 0\n\n## Performance Summary\n\n"
      "| case | Input Shape | dtype | Median E2E (us) |\n|------|-------------|-------|---|\n"
      "| p0 | [1, 32] | fp16 | 10.000000 |\n| p1 | [4, 2048] | fp16 | 18.550000 |\n\n"
      "## Raw Repeats\n\n- `p0`: [9.000000, 10.000000, 11.000000] us\n");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[0].id, "p0");
  EXPECT_EQ((*c)[0].shape, "[1, 32]");
  EXPECT_DOUBLE_EQ((*c)[1].e2e_us, 18.55);
}

TEST(GoldenMarkdownTest, FixtureShapeWithUsCells) {
  auto c = ParseGoldenMarkdown(
      "# Golden Performance Report\r\n- **Iterations**: 2\r\n## Performance Summary\r\n"
      "| Case | Input Shape | dtype | E2E |\r\n|---|---|---|---|\r\n| P0 | [8, 1024] | bf16 | "
      "20.000000us |\r\n"
      "| bad | [1] | fp16 | n/a |\r\n");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 1u);  // the unparsable row is skipped
  EXPECT_DOUBLE_EQ((*c)[0].e2e_us, 20.0);
}

TEST(GoldenMarkdownTest, ProfileGoldenSingleCaseFallback) {
  auto c = ParseGoldenMarkdown(
      "# rms_norm Golden NPU Performance Report\n- **Device**: npu:0\n"
      "- **Input Shape**: {x: (1024, 16384)}\n- **dtype**: {x: torch.bfloat16}\n"
      "### E2E Performance\n**Total kernel duration**: 1186.5us (total - noise)\n"
      "### Op Performance\n| op | count | mean_duration | total |\n| Add | 1 | 3.0 | 3.0 |\n");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].id, "P0");
  EXPECT_EQ((*c)[0].shape, "{x: (1024, 16384)}");
  EXPECT_EQ((*c)[0].dtype, "{x: torch.bfloat16}");
  EXPECT_DOUBLE_EQ((*c)[0].e2e_us, 1186.5);
  EXPECT_EQ(ParseGoldenMarkdown("# nothing\n").status().message(),
            "no golden E2E data found in GOLDEN_PERF_REPORT.md");
}

}  // namespace
}  // namespace npuperf::evidence
