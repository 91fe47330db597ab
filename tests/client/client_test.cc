// The CLI's pure parts: settings precedence, config files, --since, exit
// codes of verdict counts, the progress bar.
#include <fstream>

#include "absl/strings/str_cat.h"
#include "client/compare_commands.h"
#include "client/config.h"
#include "client/format.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::client {
namespace {

TEST(ConfigTest, FlagsBeatEnvironmentWhichBeatsTheFile) {
  ClientConfig c;
  ASSERT_TRUE(ResolveConfig({{"server", "flag:1"}}, {{"server", "env:2"}, {"token", "t-env"}},
                            {{"server", "file:3"}, {"token", "t-file"}, {"timeout", "60"}}, &c)
                  .ok());
  EXPECT_EQ(c.server, "flag:1");
  EXPECT_EQ(c.token, "t-env");
  EXPECT_EQ(c.timeout, std::chrono::seconds(60));
  EXPECT_EQ(c.format, OutputFormat::kText);  // nobody said otherwise
  ClientConfig bad;
  auto st = ResolveConfig({}, {{"timeout", "0"}}, {}, &bad);
  EXPECT_TRUE(absl::IsInvalidArgument(st));
  EXPECT_NE(st.message().find("timeout"), std::string::npos);
  EXPECT_FALSE(ResolveConfig({{"format", "yaml"}}, {}, {}, &bad).ok());
}

// A --tls-ca that names a missing (or non-PEM) file fails: it never falls
// back to the system roots.
TEST(ConfigTest, MissingTlsCaFails) {
  npuperf::testing::TempDir dir;
  ClientConfig c;
  auto missing = ResolveConfig({{"tls_ca", (dir.path() / "nope.pem").string()}}, {}, {}, &c);
  EXPECT_TRUE(absl::IsInvalidArgument(missing));
  EXPECT_NE(missing.message().find("tls_ca"), std::string::npos);
  const std::string junk = (dir.path() / "junk.pem").string();
  std::ofstream(junk) << "not a certificate\n";
  EXPECT_TRUE(absl::IsInvalidArgument(ResolveConfig({{"tls_ca", junk}}, {}, {}, &c)));
  const std::string pem = (dir.path() / "ca.pem").string();
  std::ofstream(pem) << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  ASSERT_TRUE(ResolveConfig({{"tls_ca", pem}}, {}, {}, &c).ok());
  EXPECT_EQ(c.tls_ca, pem);
}

TEST(ConfigTest, FileSyntaxAndUnknownKeys) {
  npuperf::testing::TempDir dir;
  const std::string path = (dir.path() / "config").string();
  std::ofstream(path) << "# npuperf\nserver = \"h:1\"   # quoted\n\ntoken=abc\n";
  auto s = ReadConfigFile(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->at("server"), "h:1");
  EXPECT_EQ(s->at("token"), "abc");
  std::ofstream(path) << "server = h:1\nsrever = typo\n";
  auto typo = ReadConfigFile(path);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find(":2: unknown key 'srever'"), std::string::npos)
      << typo.status();
  EXPECT_TRUE(absl::IsNotFound(ReadConfigFile((dir.path() / "none").string()).status()));
  EXPECT_EQ(ConfigFilePath("/explicit"), "/explicit");
}

TEST(CompareCommandsTest, ExitCodesFollowTheBotContract) {
  v1::ComparisonCounts n;
  n.set_matched(3);
  n.set_comparable(3);
  n.set_stable(2);
  n.set_improved(1);
  EXPECT_EQ(ExitCodeOf(n), kExitOk);
  n.set_unmatched(4);  // one-sided cases are listed, not judged
  EXPECT_EQ(ExitCodeOf(n), kExitOk);
  n.set_matched(4);
  n.set_insufficient(1);
  EXPECT_EQ(ExitCodeOf(n), kExitNoVerdict);  // never a silent pass
  n.set_regressed(1);
  EXPECT_EQ(ExitCodeOf(n), kExitRegressed);
  EXPECT_EQ(ExitCodeOf(v1::ComparisonCounts()), kExitNoVerdict);  // nothing compared
}

TEST(CompareCommandsTest, SinceTakesRfc3339OrADurationBack) {
  const int64_t now = 1'800'000'000'000;
  EXPECT_EQ(*ParseSince("24h", now), now - 24 * 3'600'000);
  EXPECT_EQ(*ParseSince("7d", now), now - 7 * 86'400'000LL);
  EXPECT_EQ(*ParseSince("1970-01-01T00:00:01Z", now), 1000);
  EXPECT_FALSE(ParseSince("yesterday", now).ok());
  EXPECT_FALSE(ParseSince("-3h", now).ok());
}

TEST(FormatTest, ProgressBarCountsFinishedJobs) {
  v1::JobCounts n;
  n.set_total(8);
  n.set_succeeded(3);
  n.set_failed(1);
  EXPECT_EQ(ProgressBar(n, 8), "[####----]");
  EXPECT_EQ(ProgressBar(v1::JobCounts(), 4), "[----]");
}

// A collection's JSON is printed job by job (issue 36) and must stay byte for
// byte what protobuf's printer gives for the whole message: the bot schema.
TEST(FormatTest, CollectionJsonIsTheWholeMessagesJsonPrintedJobByJob) {
  v1::Collection c;
  c.set_id("c-000000000001");
  c.set_state(v1::COLLECTION_STATE_RUNNING);
  c.set_waiting_reason("two \"jobs\": [] quoted\nacross lines");
  c.mutable_spec()->mutable_params()->set_repeats(3);
  (*c.mutable_spec()->mutable_labels())["branch"] = "main";
  c.mutable_spec()->add_operators()->set_name("op");
  c.mutable_counts()->set_total(3);
  const google::protobuf::Message& whole = c;
  EXPECT_EQ(ToJson(c), ToJson(whole)) << "no jobs";
  for (int i = 1; i <= 3; ++i) {
    v1::Job* j = c.add_jobs();
    j->set_id(i);
    j->set_case_id(absl::StrCat("case-", i));
    j->set_state(i == 1 ? v1::JOB_STATE_SUCCEEDED : v1::JOB_STATE_QUEUED);
    if (i == 1) {
      j->set_kernel_time_us(12.5);
      j->mutable_placement()->set_host("h\n1");
      j->mutable_progress()->set_detail("multi\nline");
    }
  }
  const std::string json = ToJson(c);
  EXPECT_EQ(json, ToJson(whole));
  // The fast path, not the fallback to the whole message, made it.
  v1::Collection head = c;
  head.clear_jobs();
  const std::string head_json = ToJson(static_cast<const google::protobuf::Message&>(head));
  const std::optional<std::string_view> body = JsonArrayBody(json, "jobs");
  ASSERT_TRUE(body.has_value());
  const std::optional<std::string> spliced = SpliceJsonArray(head_json, "jobs", {*body});
  ASSERT_TRUE(spliced.has_value());
  EXPECT_EQ(*spliced, json);
  EXPECT_FALSE(SpliceJsonArray(head_json, "nothing", {*body}).has_value());
  EXPECT_FALSE(SpliceJsonArray(json, "jobs", {*body}).has_value()) << "jobs not empty";
  EXPECT_FALSE(JsonArrayBody(head_json, "jobs").has_value()) << "an empty array has no body";
  EXPECT_FALSE(JsonArrayBody(json, "case_id").has_value()) << "not at the top";
  EXPECT_NE(json.find("\"case-3\""), std::string::npos);
  EXPECT_NE(json.find("\"waiting_reason\""), std::string::npos);
}

// More jobs than one batch of the printer (1,000): the batches join into the
// same text, in order.
TEST(FormatTest, CollectionJsonOfManyBatchesIsTheWholeMessagesJson) {
  v1::Collection c;
  c.set_id("c-000000000002");
  c.mutable_counts()->set_total(2501);
  for (int i = 1; i <= 2501; ++i) {
    v1::Job* j = c.add_jobs();
    j->set_id(i);
    j->set_case_id(absl::StrCat("case-", i));
    if (i % 7 == 0) j->mutable_progress()->set_detail("step\n2");
  }
  const google::protobuf::Message& whole = c;
  const std::string json = ToJson(c);
  EXPECT_EQ(json, ToJson(whole));
  EXPECT_LT(json.find("\"case-1000\""), json.find("\"case-1001\""));
  EXPECT_LT(json.find("\"case-2000\""), json.find("\"case-2501\""));
}

}  // namespace
}  // namespace npuperf::client
