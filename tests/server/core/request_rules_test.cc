#include "server/core/request_rules.h"

#include "gtest/gtest.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

TEST(RequestRulesTest, AnIdTokenIsDecimalDigitsOfAPositiveInt64) {
  EXPECT_EQ(*ParseIdToken("", "t"), 0);
  EXPECT_EQ(*ParseIdToken("42", "t"), 42);
  EXPECT_EQ(*ParseIdToken("9223372036854775807", "t"), INT64_MAX);
}

TEST(RequestRulesTest, AMalformedIdTokenIsInvalidArgumentNamingTheField) {
  for (const char* bad : {"abc", "-1", "0", "+5", " 5", "5 ", "1e3", "99999999999999999999",
                          "9223372036854775808", ":"}) {
    auto got = ParseIdToken(bad, "job_page_token");
    ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << bad;
    auto fields = FieldViolationsOf(got.status());
    ASSERT_EQ(fields.size(), 1u);
    EXPECT_EQ(fields[0].field, "job_page_token");
  }
}

TEST(RequestRulesTest, ACollectionTokenRoundTrips) {
  auto got = ParseCollectionToken(CollectionToken(1700000000123, "c-0123456789ab"), "page_token");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->created_ms, 1700000000123);
  EXPECT_EQ(got->id, "c-0123456789ab");
}

TEST(RequestRulesTest, AMalformedCollectionTokenIsInvalidArgument) {
  for (const char* bad :
       {"abc:x", ":", "12", "12:", ":c-1", "-5:c-1", "99999999999999999999:c", "0:c-1", "1x:c-1"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseCollectionToken(bad, "page_token").status())) << bad;
  }
  const std::string long_id = "1:" + std::string(kMaxCollectionIdBytes + 1, 'c');
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCollectionToken(long_id, "page_token").status()));
}

TEST(RequestRulesTest, TimestampsOutsideYearsOneTo9999AreViolations) {
  std::vector<FieldViolation> out;
  google::protobuf::Timestamp t;
  t.set_seconds(INT64_MAX);
  CheckTimestamp(t, "since", out);
  t.set_seconds(0);
  t.set_nanos(-1);
  CheckTimestamp(t, "until", out);
  t.set_nanos(0);
  CheckTimestamp(t, "ok", out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].field, "since");
  EXPECT_EQ(out[1].field, "until");
}

TEST(RequestRulesTest, LabelFiltersAreCapped) {
  google::protobuf::Map<std::string, std::string> labels;
  labels["k"] = std::string(kMaxLabelValueBytes + 1, 'v');
  std::vector<FieldViolation> out;
  CheckLabelFilter(labels, "labels", out);
  EXPECT_EQ(out.size(), 1u);
  labels.clear();
  for (int i = 0; i <= kMaxLabels; ++i) labels["k" + std::to_string(i)] = "v";
  CheckLabelFilter(labels, "labels", out);
  EXPECT_EQ(out.size(), 2u);
}

TEST(RequestRulesTest, AJobsPageKeepsAtMostTheAskedJobsAndStaysUnderTheByteBudget) {
  v1::Collection c;
  for (int i = 0; i < 10; ++i) c.add_jobs()->set_id(i + 1);
  EXPECT_TRUE(KeepJobsPage(&c, 4));
  EXPECT_EQ(c.jobs_size(), 4);
  EXPECT_FALSE(KeepJobsPage(&c, 4));
  v1::Collection big;
  for (int i = 0; i < 5; ++i) big.add_jobs()->set_reason(std::string(700 << 10, 'x'));
  EXPECT_TRUE(KeepJobsPage(&big, 1000));
  EXPECT_EQ(big.jobs_size(), 2);  // 2 MiB budget: the third would cross it
  EXPECT_LT(big.ByteSizeLong(), size_t{4} << 20);
}

TEST(RequestRulesTest, APageAlwaysHoldsAtLeastOneItem) {
  v1::Collection huge;
  huge.add_jobs()->set_reason(std::string(3 << 20, 'x'));
  huge.add_jobs();
  EXPECT_EQ(FitInBytes(huge.jobs(), kMaxPageBytes), 1);
}

}  // namespace
}  // namespace npuperf::server
