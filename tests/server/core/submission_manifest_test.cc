// server/core/submission.h ValidateManifests: the one manifest rule
// (evidence::ParseCaseManifest) at submission, over the shared fixtures
// (tests/fixtures/manifests) and through the scheduler with real bundles.
#include <fstream>

#include "absl/strings/str_split.h"
#include "common/bundle_tar.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/submission.h"
#include "tests/fakes/temp_dir.h"
#include "tests/fixtures/manifest_fixtures.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

using ::testing::HasSubstr;

// One operator whose manifest is `bytes`, asking for case_ids.
struct OneManifest {
  v1::CollectionSpec spec;
  std::string bytes;
  int reads = 0;

  OneManifest(std::string manifest, const std::vector<std::string>& case_ids)
      : bytes(std::move(manifest)) {
    auto* op = spec.add_operators();
    op->set_bundle_sha256("sha");
    op->set_manifest_path("cases/PERFORMANCE_CASES.json");
    for (const std::string& id : case_ids) op->add_case_ids(id);
  }

  absl::StatusOr<std::vector<FieldViolation>> Validate() {
    return ValidateManifests(spec, [this](const std::string& sha, const std::string& path) {
      ++reads;
      EXPECT_EQ(sha, "sha");
      EXPECT_EQ(path, "cases/PERFORMANCE_CASES.json");
      return absl::StatusOr<std::string>(bytes);
    });
  }
};

TEST(ValidateManifestsTest, SharedFixtures) {
  for (const auto& f : ::npuperf::testing::ManifestFixtures()) {
    std::vector<std::string> ids = {"a"};
    if (f.good) ids = absl::StrSplit(f.expected, ',');
    OneManifest m(f.bytes, ids);
    auto found = m.Validate();
    ASSERT_TRUE(found.ok()) << f.name << ": " << found.status();
    if (f.good) {
      EXPECT_TRUE(found->empty()) << f.name << ": " << found->front().description;
      continue;
    }
    ASSERT_EQ(found->size(), 1u) << f.name;
    EXPECT_EQ(found->front().field, "spec.operators[0].manifest_path") << f.name;
    EXPECT_THAT(found->front().description, HasSubstr(f.expected)) << f.name;
  }
}

TEST(ValidateManifestsTest, CaseIdsMustBeTheManifests) {
  OneManifest m(R"({"schema_version": 1, "cases": [{"id": "a", "shape": "[1]", "dtype": "fp16"}]})",
                {"a", "b"});
  auto found = m.Validate();
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().field, "spec.operators[0].case_ids[1]");
  EXPECT_EQ(found->front().description, "not a case of the manifest");
}

TEST(ValidateManifestsTest, OnlyOperatorsWithAManifestAreRead) {
  OneManifest m("not read", {});
  m.spec.mutable_operators(0)->clear_manifest_path();
  auto found = m.Validate();
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->empty());
  EXPECT_EQ(m.reads, 0);
}

TEST(ValidateManifestsTest, AMissingManifestIsAViolationAStoreErrorIsAnError) {
  OneManifest m("", {});
  auto read = [](absl::Status s) {
    return [s](const std::string&, const std::string&) { return absl::StatusOr<std::string>(s); };
  };
  auto missing = ValidateManifests(m.spec, read(absl::NotFoundError("no such file in the bundle")));
  ASSERT_TRUE(missing.ok());
  ASSERT_EQ(missing->size(), 1u);
  EXPECT_EQ(missing->front().field, "spec.operators[0].manifest_path");
  EXPECT_EQ(missing->front().description, "no such file in the bundle");
  auto big = ValidateManifests(m.spec, read(absl::ResourceExhaustedError("larger than 1 bytes")));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->size(), 1u);
  EXPECT_TRUE(
      absl::IsUnavailable(ValidateManifests(m.spec, read(absl::UnavailableError("db"))).status()));
}

// Through Scheduler::Submit: the manifest is read from the stored bundle.
class SubmitManifestTest : public SchedulerFixture {
 protected:
  // A request for one operator whose bundle holds `manifest`.
  v1::SubmitCollectionRequest WithManifest(const std::string& manifest,
                                           const std::vector<std::string>& case_ids) {
    std::ofstream(dir_.path() / "PERFORMANCE_CASES.json") << manifest;
    std::ofstream(dir_.path() / "test_op.py") << "print('op')\n";
    auto tar = PackBundle(dir_.path(), 1 << 20);
    EXPECT_TRUE(tar.ok()) << tar.status();
    const std::string sha = Sha256Hex(*tar);
    EXPECT_TRUE(store_->PutBundle("team", "op", sha, *tar, 0).ok());
    v1::SubmitCollectionRequest req = Request(0);
    auto* op = req.mutable_spec()->mutable_operators(0);
    op->set_bundle_sha256(sha);
    op->set_manifest_path("PERFORMANCE_CASES.json");
    for (const std::string& id : case_ids) op->add_case_ids(id);
    return req;
  }

  ::npuperf::testing::TempDir dir_;
};

TEST_F(SubmitManifestTest, TheStoredManifestIsChecked) {
  const std::string good =
      R"({"schema_version": 1, "cases": [{"id": "p0", "shape": "[8]", "dtype": "fp16"}]})";
  EXPECT_FALSE(Submit(WithManifest(good, {"p0"})).empty());
  auto bad = scheduler_.Submit("team", WithManifest(R"({"cases": [{"id": "p0"}]})", {"p0"}));
  ASSERT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  EXPECT_EQ(Fields(bad.status()), std::vector<std::string>{"spec.operators[0].manifest_path"});
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("schema_version=1"));
  auto other = scheduler_.Submit("team", WithManifest(good, {"p1"}));
  EXPECT_EQ(Fields(other.status()), std::vector<std::string>{"spec.operators[0].case_ids[0]"});
}

}  // namespace
}  // namespace npuperf::server
