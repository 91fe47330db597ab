// client/cli.cc: the command line chooses the right command with the right
// arguments (run against StrictMock stubs), settings flags land in the
// settings, and CLI11 refuses what the old main refused.
#include "client/cli.h"

#include <fstream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "grpcpp/test/mock_stream.h"
#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::HasDeadline;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::testing::_;
using ::testing::Return;

// The app main.cc builds, without the offline commands. CLI11 keeps the
// values of a parse, so each parse gets a fresh one.
struct Cli {
  Cli() {
    AddSettingFlags(app, flags, config_file);
    AddCollectionCommands(app, chosen);
    AddRoundCommands(app, chosen);
    AddCompareCommands(app, chosen);
  }

  // Parses `line` and runs the chosen command on m's session.
  int Run(const std::string& line, MockSession& m) {
    app.parse(line, /*program_name_included=*/false);
    EXPECT_TRUE(chosen) << line;
    return chosen ? chosen(m.session(), out, err) : -1;
  }

  CLI::App app{"npuperf"};
  Settings flags;
  std::string config_file;
  ServerCommand chosen;
  std::ostringstream out, err;
};

// An upload stream that accepts every write.
grpc::testing::MockClientWriter<v1::UploadBundleRequest>* AcceptingUpload() {
  auto* writer =
      new ::testing::NiceMock<grpc::testing::MockClientWriter<v1::UploadBundleRequest>>();
  ON_CALL(*writer, Write(_, _)).WillByDefault(Return(true));
  ON_CALL(*writer, Finish()).WillByDefault(Return(grpc::Status::OK));
  return writer;
}

v1::SubmitCollectionResponse Created() {
  return Proto<v1::SubmitCollectionResponse>(R"pb(collection { id: "c-1" }
                                                  created: true)pb");
}

TEST(CliTest, SettingFlagsFillTheSettings) {
  Cli cli;
  cli.app.parse(
      "--server h:1 --token t --tls-ca ca.pem --format json --timeout 9 --config f agents", false);
  EXPECT_EQ(cli.flags, (Settings{{"server", "h:1"},
                                 {"token", "t"},
                                 {"tls_ca", "ca.pem"},
                                 {"format", "json"},
                                 {"timeout", "9"}}));
  EXPECT_EQ(cli.config_file, "f");
  EXPECT_TRUE(cli.chosen);
}

// The settings flags are the app's, and every command falls through to them:
// they may come after the command (issue 17), nested ones included.
TEST(CliTest, SettingFlagsAreAcceptedAfterTheCommand) {
  Cli list;
  list.app.parse("list --format json --label a=b --server h:2", false);
  EXPECT_EQ(list.flags, (Settings{{"format", "json"}, {"server", "h:2"}}));
  EXPECT_TRUE(list.chosen);
  Cli pin;
  pin.app.parse("baseline pin branch=main 42 --timeout 5 --config f", false);
  EXPECT_EQ(pin.flags, (Settings{{"timeout", "5"}}));
  EXPECT_EQ(pin.config_file, "f");
  // compare's own --format (after compare) stays compare's; the global one
  // before it stays global.
  Cli compare;
  compare.app.parse("--format json compare 41 42 --format junit", false);
  EXPECT_EQ(compare.flags, (Settings{{"format", "json"}}));
  Cli compare_only;
  compare_only.app.parse("compare 41 42 --format junit", false);
  EXPECT_TRUE(compare_only.flags.empty());
  // An unknown flag after a command is still an error naming it.
  try {
    Cli().app.parse("list --bogus", false);
    ADD_FAILURE() << "--bogus parsed";
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("--bogus"), std::string::npos) << e.what();
  }
}

TEST(CliTest, NothingIsChosenWithoutAServerCommand) {
  Cli cli;
  cli.app.parse("--server h:1", false);
  EXPECT_FALSE(cli.chosen);
}

TEST(CliTest, CompareCarriesItsVerdictFlags) {
  MockSession m;
  auto req = Proto<v1::CompareRoundsRequest>(R"pb(
    baseline_round_id: 41
    candidate_round_id: 42
    options { alpha: 0.05 duration_threshold_pct: 3 ratio_threshold_pp: 2 })pb");
  EXPECT_CALL(m.queries(), CompareRounds(_, EqualsProto(req), _))
      .WillOnce(Reply(Proto<v1::CompareRoundsResponse>("comparison { verdict: VERDICT_STABLE }")));
  EXPECT_EQ(Cli().Run("compare 41 42 --alpha 0.05 --threshold 3 --ratio-threshold 2", m), kExitOk);
}

TEST(CliTest, CompareAndRegressionsTakeTheirFormatAndFailOn) {
  MockSession m;
  EXPECT_CALL(m.queries(), CompareRounds(_, _, _))
      .Times(2)
      .WillRepeatedly(Reply(Proto<v1::CompareRoundsResponse>(
          "comparison { operator_name: 'add' verdict: VERDICT_REGRESSED }")));
  Cli junit;
  EXPECT_EQ(junit.Run("compare 41 42 --format junit --fail-on never", m), kExitOk);
  EXPECT_THAT(junit.out.str(), ::testing::HasSubstr("<failure type=\"REGRESSED\""));
  Cli md;
  EXPECT_EQ(md.Run("--format json compare 41 42 --format markdown", m), kExitRegressed);
  EXPECT_THAT(md.out.str(), ::testing::StartsWith("<!-- npuperf-verdict -->\n"));
  EXPECT_CALL(m.queries(), ListRegressions(_, _, _))
      .WillOnce(
          Reply(Proto<v1::ListRegressionsResponse>("counts { comparable: 1 insufficient: 1 }")));
  EXPECT_EQ(Cli().Run("regressions --since 1h --fail-on regressed --format junit", m), kExitOk);
  EXPECT_THROW(Cli().app.parse("compare 41 42 --format yaml", false), CLI::ParseError);
  EXPECT_THROW(Cli().app.parse("--format yaml compare 41 42", false), CLI::ParseError);
  EXPECT_THROW(Cli().app.parse("compare 41 42 --fail-on sometimes", false), CLI::ParseError);
}

// Issue 30: one --format. Before the command it is the command's own when the
// command has one (compare, regressions: junit, markdown, html), and it then
// leaves the settings, which take text or json only.
TEST(CliTest, TheFormatBeforeTheCommandIsTheCommandsOwn) {
  MockSession m;
  EXPECT_CALL(m.queries(), CompareRounds(_, _, _))
      .Times(2)
      .WillRepeatedly(Reply(Proto<v1::CompareRoundsResponse>(
          "comparison { operator_name: 'add' verdict: VERDICT_REGRESSED }")));
  Cli junit;
  EXPECT_EQ(junit.Run("--format junit compare 41 42 --fail-on never", m), kExitOk);
  EXPECT_THAT(junit.out.str(), ::testing::HasSubstr("<failure type=\"REGRESSED\""));
  EXPECT_TRUE(junit.flags.empty());
  Cli json;
  EXPECT_EQ(json.Run("--format json compare 41 42", m), kExitRegressed);
  EXPECT_EQ(nlohmann::json::parse(json.out.str())["schema"], "npuperf.compare.v1");
  EXPECT_EQ(json.flags, (Settings{{"format", "json"}}));  // errors are JSON too
  EXPECT_CALL(m.queries(), ListRegressions(_, _, _))
      .WillOnce(Reply(Proto<v1::ListRegressionsResponse>("counts { comparable: 1 }")));
  Cli md;
  EXPECT_EQ(md.Run("--format markdown regressions --since 1h", m), kExitOk);
  EXPECT_THAT(md.out.str(), ::testing::StartsWith("<!-- npuperf-verdict -->\n"));
  Cli list;
  EXPECT_THROW(list.app.parse("--format html list", false), CLI::ValidationError);
  EXPECT_FALSE(list.chosen);
}

TEST(CliTest, RegressionsCarryTheirFlags) {
  MockSession m;
  auto req = Proto<v1::ListRegressionsRequest>(R"pb(
    baseline_label: "branch=main"
    candidate_collection_id: "c-2"
    operator_name: "add"
    options { alpha: 0.02 })pb");
  EXPECT_CALL(m.queries(), ListRegressions(_, EqualsProto(req), _))
      .WillOnce(Reply(Proto<v1::ListRegressionsResponse>("counts { comparable: 1 stable: 1 }")));
  EXPECT_EQ(
      Cli().Run("regressions --baseline branch=main --collection c-2 --operator add --alpha 0.02",
                m),
      kExitOk);
}

TEST(CliTest, BaselinePinIsANestedCommand) {
  MockSession m;
  EXPECT_CALL(m.queries(),
              PinBaseline(_, EqualsProto(Proto<v1::PinBaselineRequest>(R"pb(label: "branch=main"
                                                                            round_id: 42)pb")),
                          _))
      .WillOnce(Reply(v1::PinBaselineResponse()));
  EXPECT_EQ(Cli().Run("baseline pin branch=main 42", m), kExitOk);
}

TEST(CliTest, ReportStyleAndFormatJsonWins) {
  auto round =
      Proto<v1::GetRoundResponse>(R"pb(round {
                                         id: 42
                                         evidence { summary_markdown: "# md" evidence_json: "{}" }
                                       })pb");
  MockSession md;
  EXPECT_CALL(md.queries(), GetRound(_, _, _)).WillOnce(Reply(round));
  Cli text;
  EXPECT_EQ(text.Run("report 42 --style md", md), kExitOk);
  EXPECT_EQ(text.out.str(), "# md\n");
  ClientConfig json;
  json.format = OutputFormat::kJson;
  MockSession j(json);
  EXPECT_CALL(j.queries(), GetRound(_, _, _)).WillOnce(Reply(round));
  Cli json_format;
  EXPECT_EQ(json_format.Run("report 42 --style md", j), kExitOk);
  EXPECT_EQ(json_format.out.str(), "{}");
}

TEST(CliTest, CollectionCommandsTakeTheirArguments) {
  MockSession m;
  v1::CancelCollectionResponse cancelled;
  cancelled.mutable_collection()->set_state(v1::COLLECTION_STATE_CANCELLED);
  EXPECT_CALL(m.collections(), CancelCollection(HasDeadline(m.DeadlineIn(std::chrono::seconds(30))),
                                                EqualsProto(Proto<v1::CancelCollectionRequest>(
                                                    R"pb(collection_id: "c-1" reason: "oops")pb")),
                                                _))
      .WillOnce(Reply(cancelled));
  EXPECT_EQ(Cli().Run("cancel c-1 --reason oops", m), kExitOk);
}

TEST(CliTest, RoundsTakeAnOperatorOrACollection) {
  MockSession m;
  EXPECT_CALL(m.queries(),
              ListRounds(_, EqualsProto(Proto<v1::ListRoundsRequest>(R"pb(collection_id: "c-1"
                                                                          metric: "duration"
                                                                          page_size: 1000)pb")),
                         _))
      .WillOnce(Reply(v1::ListRoundsResponse()));
  EXPECT_EQ(Cli().Run("rounds --collection c-1 --metric duration", m), kExitOk);
}

TEST(CliTest, SubmitFlagsBecomeTheSpec) {
  npuperf::testing::TempDir dir;
  std::ofstream(dir.path() / "test_add.py") << "print('add')\n";
  MockSession m;
  v1::SubmitCollectionRequest sent;
  EXPECT_CALL(m.collections(), UploadBundleRaw(_, _)).WillOnce(Return(AcceptingUpload()));
  EXPECT_CALL(m.collections(), SubmitCollection(_, _, _))
      .WillOnce(::testing::DoAll(::testing::SaveArg<1>(&sent), Reply(Created())));
  Cli cli;
  // --no-wait: the queued collection is printed, and queued is success.
  EXPECT_EQ(cli.Run("submit " + dir.path().string() +
                        " --quick --no-wait --op-name k --warm-up 0 --repeats 3 --retry 1"
                        " --max-jobs 2 --priority -1 --job-timeout 60 --keep-raw --label a=b"
                        " --soc S --devices 0-1 --idempotency-key key --case-id p1"
                        " --case-arg=--case --runner run.py",
                    m),
            kExitOk);
  ASSERT_EQ(sent.spec().operators_size(), 1);
  sent.mutable_spec()->mutable_operators(0)->clear_bundle_sha256();
  auto want = Proto<v1::SubmitCollectionRequest>(R"pb(
    spec {
      params {
        mode: PROFILE_MODE_QUICK
        skip_warm_up: true
        repeats: 3
        retry: 1
        timeout_seconds: 60
        keep_raw_output: true
      }
      case_selector { case_arg: "--case" }
      max_concurrent_jobs: 2
      priority: -1
      labels { key: "a" value: "b" }
      constraints { socs: "S" device_range: "0-1" }
      operators { op_name: "k" runner: "run.py" case_ids: "p1" }
    }
    idempotency_key: "key")pb");
  want.mutable_spec()->mutable_operators(0)->set_name(dir.path().filename().string());
  EXPECT_THAT(sent, EqualsProto(want));
  EXPECT_EQ(cli.err.str(), "submitted c-1: 0 jobs\n");
}

TEST(CliTest, SubmitCompareWaitsByDefault) {
  npuperf::testing::TempDir dir;
  std::ofstream(dir.path() / "test_add.py") << "print('add')\n";
  MockSession m;
  v1::SubmitCollectionRequest sent;
  auto* stream =
      new ::testing::StrictMock<grpc::testing::MockClientReader<v1::WatchCollectionResponse>>();
  EXPECT_CALL(*stream, Read(_)).WillOnce(Return(false));
  EXPECT_CALL(*stream, Finish()).WillOnce(Return(grpc::Status::OK));
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), UploadBundleRaw(_, _)).WillOnce(Return(AcceptingUpload()));
  EXPECT_CALL(m.collections(), SubmitCollection(_, _, _))
      .WillOnce(::testing::DoAll(::testing::SaveArg<1>(&sent), Reply(Created())));
  EXPECT_CALL(m.collections(), WatchCollectionRaw(_, _)).WillOnce(Return(stream));
  Cli().Run("submit " + dir.path().string() + " --compare --op-name k", m);
  EXPECT_EQ(sent.spec().params().mode(), v1::PROFILE_MODE_COMPARE);
  EXPECT_FALSE(sent.spec().params().skip_warm_up());  // --warm-up not given: server default
  EXPECT_THROW(Cli().app.parse("submit d --compare --quick", false), CLI::ExcludesError);
}

TEST(CliTest, MissingOrBadArgumentsAreParseErrors) {
  EXPECT_THROW(Cli().app.parse("get", false), CLI::RequiredError);
  EXPECT_THROW(Cli().app.parse("report 42 --style xml", false), CLI::ValidationError);
  EXPECT_THROW(Cli().app.parse("baseline pin branch=main", false), CLI::RequiredError);
  EXPECT_THROW(Cli().app.parse("round x", false), CLI::ParseError);
  EXPECT_THROW(Cli().app.parse("history", false), CLI::RequiredError);
  EXPECT_THROW(Cli().app.parse("history add --last 0", false), CLI::ValidationError);
  EXPECT_THROW(Cli().app.parse("history add --last 201", false), CLI::ValidationError);
  EXPECT_THROW(Cli().app.parse("history add --style md", false), CLI::ValidationError);
  EXPECT_THROW(Cli().app.parse("compare 1 2 --format pdf", false), CLI::ValidationError);
}

TEST(ReportStyleOfTest, FormatJsonWinsOverTheStyle) {
  EXPECT_EQ(ReportStyleOf("text", OutputFormat::kText), ReportStyle::kText);
  EXPECT_EQ(ReportStyleOf("md", OutputFormat::kText), ReportStyle::kMarkdown);
  EXPECT_EQ(ReportStyleOf("json", OutputFormat::kText), ReportStyle::kJson);
  EXPECT_EQ(ReportStyleOf("md", OutputFormat::kJson), ReportStyle::kJson);
  EXPECT_EQ(ReportStyleOf("text", OutputFormat::kJson), ReportStyle::kJson);
  EXPECT_EQ(ReportStyleOf("html", OutputFormat::kText), ReportStyle::kHtml);
  EXPECT_EQ(ReportStyleOf("html", OutputFormat::kJson), ReportStyle::kJson);
}

}  // namespace
}  // namespace npuperf::client
