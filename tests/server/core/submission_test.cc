#include "server/core/submission.h"

#include "common/sha256.h"
#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

const std::string kSha = Sha256Hex("bundle");

v1::CollectionSpec ValidSpec() {
  v1::CollectionSpec spec;
  auto* op = spec.add_operators();
  op->set_name("inplace_add_rmsnorm");
  op->set_bundle_sha256(kSha);
  op->set_op_name("kernel");
  return spec;
}

std::vector<std::string> Fields(const v1::CollectionSpec& spec) {
  std::vector<std::string> out;
  for (const auto& v : ValidateSpec(spec, "", [](const std::string& s) { return s == kSha; })) {
    out.push_back(v.field);
  }
  return out;
}

TEST(SubmissionTest, AcceptsAValidSpec) { EXPECT_TRUE(Fields(ValidSpec()).empty()); }

TEST(SubmissionTest, NamesEveryBadField) {
  v1::CollectionSpec spec = ValidSpec();
  spec.set_max_concurrent_jobs(9);
  spec.set_priority(11);
  spec.mutable_params()->set_retry(6);
  auto* op = spec.mutable_operators(0);
  op->set_bundle_sha256(Sha256Hex("unknown"));
  op->mutable_op_name_map()->insert({"p0", "k"});  // both op_name and map
  auto* dup = spec.add_operators();
  *dup = spec.operators(0);
  dup->set_bundle_sha256("XYZ");
  (*spec.mutable_labels())["Bad Key"] = "v";
  const auto fields = Fields(spec);
  for (const char* want :
       {"spec.max_concurrent_jobs", "spec.priority", "spec.params.retry",
        "spec.operators[0].bundle_sha256", "spec.operators[0].op_name", "spec.operators[1].name",
        "spec.operators[1].bundle_sha256", "spec.labels[Bad Key]"}) {
    EXPECT_NE(std::find(fields.begin(), fields.end(), want), fields.end()) << want;
  }
}

TEST(SubmissionTest, SeveralCasesNeedASelectorAndUniqueIds) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_operators(0)->add_case_ids("p0");
  spec.mutable_operators(0)->add_case_ids("p0");
  auto fields = Fields(spec);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "spec.operators[0].case_ids"), fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "spec.operators[0].case_ids[1]"), fields.end());
  spec.mutable_case_selector()->set_case_arg("--case-id");
  spec.mutable_operators(0)->set_case_ids(1, "p1");
  EXPECT_TRUE(Fields(spec).empty());
}

// The launch selector grammar is evidence/launch.h's: what the agent could not
// apply is refused here, per operator and per case, naming the field.
TEST(SubmissionTest, LaunchSelectorsAreCheckedPerOperatorAndCase) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_case_selector()->set_case_arg("--case-id");
  auto* op = spec.mutable_operators(0);
  for (const char* good : {"", "unique", "all", "3", "-1", "task:48/7"}) {
    op->set_launch(good);
    EXPECT_TRUE(Fields(spec).empty()) << good;
  }
  op->set_launch("0");
  EXPECT_EQ(Fields(spec), std::vector<std::string>{"spec.operators[0].launch"});
  op->set_launch(std::string(65, '1'));
  EXPECT_EQ(Fields(spec), std::vector<std::string>{"spec.operators[0].launch"});
  op->set_launch("all");
  (*op->mutable_launch_map())["p1"] = "2";
  EXPECT_EQ(Fields(spec), (std::vector<std::string>{"spec.operators[0].case_ids",  // none given
                                                    "spec.operators[0].launch_map[p1]"}));
  op->add_case_ids("p1");
  op->add_case_ids("p2");
  EXPECT_TRUE(Fields(spec).empty());
  (*op->mutable_launch_map())["p2"] = "task:1";
  (*op->mutable_launch_map())["p9"] = "1";
  const auto fields = Fields(spec);
  EXPECT_EQ(fields.size(), 2u);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "spec.operators[0].launch_map[p2]"),
            fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "spec.operators[0].launch_map[p9]"),
            fields.end());
}

TEST(SubmissionTest, EmptyAndDotNamesAreRejected) {
  v1::CollectionSpec empty;
  EXPECT_EQ(Fields(empty), std::vector<std::string>{"spec.operators"});
  v1::CollectionSpec dots = ValidSpec();
  dots.mutable_operators(0)->set_name("..");
  EXPECT_EQ(Fields(dots), std::vector<std::string>{"spec.operators[0].name"});
}

TEST(SubmissionTest, DefaultsAndExpansion) {
  v1::CollectionSpec spec = ValidSpec();
  spec.mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  spec.mutable_case_selector()->set_case_arg("--case-id");
  auto* op = spec.mutable_operators(0);
  op->clear_op_name();
  op->add_case_ids("p0");
  op->add_case_ids("p1");
  (*op->mutable_op_name_map())["p0"] = "k0";
  (*op->mutable_op_name_map())["p1"] = "k1";
  const auto filled = WithDefaults(spec);
  EXPECT_EQ(filled.params().repeats(), 3);
  EXPECT_EQ(filled.params().warm_up(), 1);
  EXPECT_EQ(filled.params().seed(), 42);
  EXPECT_EQ(filled.max_concurrent_jobs(), 8);
  EXPECT_EQ(filled.kind(), v1::COLLECTION_KIND_SINGLE);
  const auto jobs = ExpandJobs(filled);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].case_id, "p1");
  EXPECT_EQ(jobs[1].op_name, "k1");
}

}  // namespace
}  // namespace npuperf::server
