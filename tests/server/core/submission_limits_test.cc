// One test per input limit of a submission (server/core/limits.h, docs/api.md
// "Limits"): each builds a valid spec, breaks one rule and expects exactly the
// field it broke to be named.
#include <algorithm>

#include "common/sha256.h"
#include "gtest/gtest.h"
#include "server/core/limits.h"
#include "server/core/submission.h"

namespace npuperf::server {
namespace {

const std::string kSha = Sha256Hex("bundle");

v1::CollectionSpec ValidSpec() {
  v1::CollectionSpec spec;
  spec.mutable_case_selector()->set_case_arg("--case-id");
  auto* op = spec.add_operators();
  op->set_name("op");
  op->set_bundle_sha256(kSha);
  op->set_op_name("kernel");
  return spec;
}

std::vector<FieldViolation> Check(const v1::CollectionSpec& spec, const std::string& key = "",
                                  const InputLimits& limits = {}) {
  return ValidateSpec(
      spec, key, [](const std::string& s) { return s == kSha; }, limits);
}

// The fields named, sorted and without repeats.
std::vector<std::string> Fields(const v1::CollectionSpec& spec, const std::string& key = "",
                                const InputLimits& limits = {}) {
  std::vector<std::string> out;
  for (const auto& v : Check(spec, key, limits)) out.push_back(v.field);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

using Names = std::vector<std::string>;

TEST(SubmissionLimitsTest, TheValidSpecPasses) { EXPECT_EQ(Fields(ValidSpec()), Names{}); }

TEST(SubmissionLimitsTest, JobsPerCollectionAreCappedAtTheConfiguredLimit) {
  v1::CollectionSpec spec = ValidSpec();
  for (int i = 0; i < 11; ++i) spec.mutable_operators(0)->add_case_ids("c" + std::to_string(i));
  InputLimits ten;
  ten.max_jobs_per_collection = 10;
  EXPECT_EQ(Fields(spec, "", ten), Names{"spec.operators"});
  ten.max_jobs_per_collection = 11;
  EXPECT_EQ(Fields(spec, "", ten), Names{});
  EXPECT_EQ(InputLimits().max_jobs_per_collection, 10'000);
}

TEST(SubmissionLimitsTest, TenThousandAndOneJobsAreRefusedByDefault) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_operators(0)->set_name("op0");
  for (int o = 1; o <= 10; ++o) {
    auto* op = spec.add_operators();
    *op = spec.operators(0);
    op->set_name("op" + std::to_string(o));
  }
  for (auto& op : *spec.mutable_operators()) {
    for (int i = 0; i < 1000; ++i) op.add_case_ids("c" + std::to_string(i));
  }
  spec.mutable_operators(10)->mutable_case_ids()->DeleteSubrange(1, 999);  // 10 x 1000 + 1
  const auto violations = Check(spec);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "spec.operators");
  EXPECT_NE(violations[0].description.find("10001 jobs"), std::string::npos);
}

TEST(SubmissionLimitsTest, OperatorsAndCasesPerOperatorAreCounted) {
  v1::CollectionSpec spec = ValidSpec();
  for (int i = 0; i < kMaxCasesPerOperator + 1; ++i) {
    spec.mutable_operators(0)->add_case_ids("c" + std::to_string(i));
  }
  EXPECT_EQ(Fields(spec), (Names{"spec.operators", "spec.operators[0].case_ids"}));
  v1::CollectionSpec many = ValidSpec();
  for (int i = 1; i <= kMaxOperators; ++i) {
    auto* op = many.add_operators();
    *op = many.operators(0);
    op->set_name("op" + std::to_string(i));
  }
  EXPECT_EQ(Fields(many), Names{"spec.operators"});
}

TEST(SubmissionLimitsTest, DescriptionIsCappedAndFreeOfControlCharacters) {
  v1::CollectionSpec spec = ValidSpec();
  spec.set_description(std::string(kMaxDescriptionBytes, 'd') + "\n");
  EXPECT_EQ(Fields(spec), Names{"spec.description"});
  spec.set_description("two\nlines\tare fine");
  EXPECT_EQ(Fields(spec), Names{});
  spec.set_description("bell\a");
  EXPECT_EQ(Fields(spec), Names{"spec.description"});
}

TEST(SubmissionLimitsTest, OpNameAndEveryOpNameMapValueAreCappedPrintableLines) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_operators(0)->set_op_name(std::string(kMaxOpNameBytes + 1, 'k'));
  EXPECT_EQ(Fields(spec), Names{"spec.operators[0].op_name"});
  spec.mutable_operators(0)->set_op_name("kernel\n");
  EXPECT_EQ(Fields(spec), Names{"spec.operators[0].op_name"});
  auto* op = spec.mutable_operators(0);
  op->clear_op_name();
  op->add_case_ids("p0");
  op->add_case_ids("p1");
  (*op->mutable_op_name_map())["p0"] = "k0";
  (*op->mutable_op_name_map())["p1"] = std::string(kMaxOpNameBytes + 1, 'k');
  EXPECT_EQ(Fields(spec), Names{"spec.operators[0].op_name_map[p1]"});
}

TEST(SubmissionLimitsTest, LabelKeysValuesAndCountsAreCapped) {
  v1::CollectionSpec spec = ValidSpec();
  (*spec.mutable_labels())["k"] = std::string(kMaxLabelValueBytes + 1, 'v');
  EXPECT_EQ(Fields(spec), Names{"spec.labels[k]"});
  spec.clear_labels();
  (*spec.mutable_labels())[std::string(kMaxLabelKeyBytes + 1, 'k')] = "v";
  EXPECT_EQ(Fields(spec), Names{"spec.labels[" + std::string(kMaxLabelKeyBytes + 1, 'k') + "]"});
  spec.clear_labels();
  (*spec.mutable_labels())["k"] = "<script>\x1b";
  EXPECT_EQ(Fields(spec), Names{"spec.labels[k]"});
  spec.clear_labels();
  for (int i = 0; i <= kMaxLabels; ++i) (*spec.mutable_labels())["k" + std::to_string(i)] = "v";
  EXPECT_EQ(Fields(spec), Names{"spec.labels"});
  spec.clear_labels();
  for (int i = 0; i <= kMaxLabels; ++i) {
    (*spec.mutable_constraints()->mutable_host_labels())["k" + std::to_string(i)] = "v";
  }
  EXPECT_EQ(Fields(spec), Names{"spec.constraints.host_labels"});
}

// A host label matches only an equal agent label value, so it is capped where
// agent label values are (255), not where collection labels are (256).
TEST(SubmissionLimitsTest, HostLabelValuesHaveTheAgentLabelValueCap) {
  static_assert(kMaxHostLabelValueBytes == kMaxAgentLabelValueBytes);
  static_assert(kMaxAgentLabelKeyBytes == kMaxLabelKeyBytes);
  v1::CollectionSpec spec = ValidSpec();
  auto& host_labels = *spec.mutable_constraints()->mutable_host_labels();
  host_labels["rack"] = std::string(kMaxAgentLabelValueBytes, 'r');
  EXPECT_EQ(Fields(spec), Names{});
  host_labels["rack"] = std::string(kMaxAgentLabelValueBytes + 1, 'r');
  EXPECT_EQ(Fields(spec), Names{"spec.constraints.host_labels[rack]"});
  spec.mutable_constraints()->clear_host_labels();
  (*spec.mutable_labels())["k"] = std::string(kMaxLabelValueBytes, 'v');
  EXPECT_EQ(Fields(spec), Names{}) << "collection labels keep their own cap";
}

TEST(SubmissionLimitsTest, UnknownEnumValuesAreRejected) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_params()->set_mode(static_cast<v1::ProfileMode>(99));
  spec.set_kind(static_cast<v1::CollectionKind>(42));
  EXPECT_EQ(Fields(spec), (Names{"spec.kind", "spec.params.mode"}));
}

TEST(SubmissionLimitsTest, ManifestPathMustBeANormalisedRelativePathInsideTheBundle) {
  for (const char* bad : {"/etc/shadow", "../../../../proc/self/environ", "cases/../../x",
                          "./PERFORMANCE_CASES.json", "a//b", "dir/", "a\\b"}) {
    v1::CollectionSpec spec = ValidSpec();
    spec.mutable_operators(0)->set_manifest_path(bad);
    const auto violations = Check(spec);
    ASSERT_EQ(violations.size(), 1u) << bad;
    EXPECT_EQ(violations[0].field, "spec.operators[0].manifest_path");
    EXPECT_EQ(violations[0].description.find(bad), std::string::npos) << "echoes " << bad;
  }
  v1::CollectionSpec ok = ValidSpec();
  ok.mutable_operators(0)->set_manifest_path("cases/PERFORMANCE_CASES.json");
  EXPECT_EQ(Fields(ok), Names{});
}

TEST(SubmissionLimitsTest, RunnerFollowsTheSameBundlePathRule) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_operators(0)->set_runner("tests/../../../bin/sh");
  EXPECT_EQ(Fields(spec), Names{"spec.operators[0].runner"});
  spec.mutable_operators(0)->set_runner("tests/test_op.py");
  EXPECT_EQ(Fields(spec), Names{});
}

TEST(SubmissionLimitsTest, CaseEnvMustBeAPlainNameOutsideTheReservedSet) {
  for (const char* bad :
       {"LD_PRELOAD", "ASCEND_RT_VISIBLE_DEVICES", "PATH", "PYTHONPATH", "PYPTO_PERF_CASE_ID",
        "NPUPERF_TOKEN", "MSPROF_OUT", "lower_case", "A=B"}) {
    v1::CollectionSpec spec = ValidSpec();
    spec.mutable_case_selector()->set_case_env(bad);
    EXPECT_EQ(Fields(spec), Names{"spec.case_selector.case_env"}) << bad;
  }
  v1::CollectionSpec ok = ValidSpec();
  ok.mutable_case_selector()->set_case_env("OP_CASE_ID");
  EXPECT_EQ(Fields(ok), Names{});
}

TEST(SubmissionLimitsTest, CaseArgIsAShortOptionWithoutSpaces) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_case_selector()->set_case_arg("--case-id; rm -rf /");
  EXPECT_EQ(Fields(spec), Names{"spec.case_selector.case_arg"});
  spec.mutable_case_selector()->set_case_arg(std::string(kMaxCaseArgBytes, '-'));
  EXPECT_EQ(Fields(spec), Names{});
}

TEST(SubmissionLimitsTest, SocsAndDeviceRangeAreCapped) {
  v1::CollectionSpec spec = ValidSpec();
  for (int i = 0; i <= kMaxSocs; ++i) spec.mutable_constraints()->add_socs("Ascend910B2");
  EXPECT_EQ(Fields(spec), Names{"spec.constraints.socs"});
  spec.mutable_constraints()->clear_socs();
  spec.mutable_constraints()->add_socs("Ascend 910");
  EXPECT_EQ(Fields(spec), Names{"spec.constraints.socs[0]"});
  spec.mutable_constraints()->clear_socs();
  spec.mutable_constraints()->set_device_range(std::string(kMaxDeviceRangeBytes + 1, '1'));
  EXPECT_EQ(Fields(spec), Names{"spec.constraints.device_range"});
}

TEST(SubmissionLimitsTest, IdempotencyKeyIsCappedPrintableText) {
  EXPECT_EQ(Fields(ValidSpec(), std::string(kMaxIdempotencyKeyBytes + 1, 'k')),
            Names{"idempotency_key"});
  EXPECT_EQ(Fields(ValidSpec(), "key\n"), Names{"idempotency_key"});
  EXPECT_EQ(Fields(ValidSpec(), std::string(kMaxIdempotencyKeyBytes, 'k')), Names{});
}

TEST(SubmissionLimitsTest, ASpecOverOneMebibyteIsRefusedAsAWhole) {
  v1::CollectionSpec spec = ValidSpec();
  for (int i = 0; i < 700; ++i) {
    auto* op = spec.add_operators();
    *op = spec.operators(0);
    op->set_name("op" + std::to_string(i));
    op->set_op_name(std::string(kMaxOpNameBytes, 'k'));
    op->set_runner(std::string(kMaxBundlePathBytes, 'r'));
    op->set_manifest_path(std::string(kMaxBundlePathBytes, 'm'));
  }
  EXPECT_EQ(Fields(spec), Names{"spec"});
}

TEST(SubmissionLimitsTest, AHugeSpecGetsABoundedNumberOfViolations) {
  v1::CollectionSpec spec = ValidSpec();
  for (int i = 0; i < 100'000; ++i) spec.mutable_operators(0)->add_case_ids("bad id");
  EXPECT_LE(Check(spec).size(), 3u);  // counts reported once, items past them unchecked
}

TEST(SubmissionLimitsTest, SpecDifferencesNameTheFieldsThatDiffer) {
  v1::CollectionSpec a = WithDefaults(ValidSpec());
  v1::CollectionSpec b = a;
  EXPECT_TRUE(SpecDifferences(a, b).empty());
  b.mutable_params()->set_repeats(7);
  b.mutable_operators(0)->set_op_name("other");
  (*b.mutable_labels())["x"] = "y";
  EXPECT_EQ(SpecDifferences(a, b),
            (Names{"spec.labels", "spec.operators[0].op_name", "spec.params.repeats"}));
}

}  // namespace
}  // namespace npuperf::server
