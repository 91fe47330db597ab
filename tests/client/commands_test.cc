// client/commands.cc against StrictMock stubs, the unary commands (get,
// cancel, list, round, rounds, agents): the request each sends, the deadline
// on every call (from the FakeClock), what it prints and its exit code
// (docs/api.md "The CLI"). submit and watch: commands_submit_test.cc.
#include "client/commands.h"

#include <sstream>

#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::HasDeadline;
using ::npuperf::testing::JsonConfig;
using ::npuperf::testing::kDefaultCallTimeout;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::OneJobCollection;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Return;

// A running collection with one job in each kind of line PrintCollection has.
v1::Collection Running() {
  return Proto<v1::Collection>(R"pb(
    id: "c-1"
    state: COLLECTION_STATE_RUNNING
    created_at { seconds: 1800000000 }
    counts { total: 3 succeeded: 1 failed: 1 running: 1 }
    jobs {
      id: 7
      operator_name: "add"
      case_id: "p1"
      state: JOB_STATE_SUCCEEDED
      op_name: "add_kernel"
      kernel_time_us: 12.5
      bound_label: "MTE2_BOUND"
      round_id: 42
    }
    jobs {
      id: 8
      operator_name: "add"
      case_id: "p2"
      state: JOB_STATE_RUNNING
      placement { host: "npu-host" device_id: 3 }
      progress { phase: JOB_PHASE_METRIC_RUN }
    }
    jobs { id: 9 operator_name: "mul" state: JOB_STATE_FAILED reason: "msprof exited 1" })pb");
}

constexpr char kRunningText[] =
    "collection c-1  running  1/3 succeeded, 1 failed, 0 cancelled  (created "
    "2027-01-15T08:00:00Z)\n"
    "  job 7     add/p1                                   succeeded  add_kernel  12.500 us  "
    "MTE2_BOUND  round 42\n"
    "  job 8     add/p2                                   running    device npu-host:3 metric_run\n"
    "  job 9     mul                                      failed     msprof exited 1\n";

v1::GetCollectionResponse GetReply(const v1::Collection& c) {
  v1::GetCollectionResponse r;
  *r.mutable_collection() = c;
  return r;
}

v1::GetCollectionRequest GetRequest(const std::string& id) {
  v1::GetCollectionRequest r;
  r.set_collection_id(id);
  return r;
}

// ---- get, cancel, list: unary calls, their output and errors --------------

TEST(GetTest, PrintsOneLinePerJobAndExitsZero) {
  MockSession m;
  EXPECT_CALL(m.collections(), GetCollection(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                             EqualsProto(GetRequest("c-1")), _))
      .WillOnce(Reply(GetReply(Running())));
  std::ostringstream out, err;
  EXPECT_EQ(RunGet(m.session(), "c-1", out, err), kExitOk);
  EXPECT_EQ(out.str(), kRunningText);
  EXPECT_EQ(err.str(), "");
}

// Only GetCollection's first page carries the spec (issue 36): get keeps it
// and asks each next page after the last job it has.
TEST(GetTest, PagesAfterTheFirstAddTheirJobsAndTheFirstPagesSpecStays) {
  MockSession m(JsonConfig());
  v1::Collection first = Running();
  first.mutable_spec()->add_operators()->set_name("add");
  first.mutable_counts()->set_total(4);
  v1::GetCollectionResponse one = GetReply(first);
  one.set_next_job_page_token("9");
  v1::Collection rest = Running();
  rest.clear_jobs();
  rest.set_state(v1::COLLECTION_STATE_FAILED);
  rest.mutable_counts()->set_total(4);
  rest.add_jobs()->set_id(12);
  v1::GetCollectionRequest second = GetRequest("c-1");
  second.set_job_page_token("9");
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), GetCollection(_, EqualsProto(GetRequest("c-1")), _))
      .WillOnce(Reply(one));
  EXPECT_CALL(m.collections(), GetCollection(_, EqualsProto(second), _))
      .WillOnce(Reply(GetReply(rest)));
  std::ostringstream out, err;
  ASSERT_EQ(RunGet(m.session(), "c-1", out, err), kExitOk) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["state"], "COLLECTION_STATE_FAILED");  // the last page's
  EXPECT_EQ(j["spec"]["operators"][0]["name"], "add");
  ASSERT_EQ(j["jobs"].size(), 4u);
  EXPECT_EQ(j["jobs"][3]["id"], "12");
}

TEST(GetTest, AFailedCollectionIsStillASuccessfulGet) {
  MockSession m;
  EXPECT_CALL(m.collections(), GetCollection(_, _, _))
      .WillOnce(Reply(GetReply(OneJobCollection(v1::COLLECTION_STATE_FAILED))));
  std::ostringstream out, err;
  EXPECT_EQ(RunGet(m.session(), "c-1", out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("collection c-1  failed"));
}

TEST(GetTest, SaysWhyQueuedJobsWait) {
  MockSession m;
  v1::Collection c = OneJobCollection(v1::COLLECTION_STATE_QUEUED);
  c.set_waiting_reason("no online agent serves SoC NoSuchSoc");
  EXPECT_CALL(m.collections(), GetCollection(_, _, _)).WillOnce(Reply(GetReply(c)));
  std::ostringstream out, err;
  EXPECT_EQ(RunGet(m.session(), "c-1", out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "collection c-1  queued  0/1 succeeded, 0 failed, 0 cancelled  (created -)\n"
            "  waiting: no online agent serves SoC NoSuchSoc\n");
}

TEST(GetTest, JsonIsTheProto3MappingWithProtoFieldNames) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.collections(), GetCollection(_, _, _)).WillOnce(Reply(GetReply(Running())));
  std::ostringstream out, err;
  ASSERT_EQ(RunGet(m.session(), "c-1", out, err), kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["id"], "c-1");
  EXPECT_EQ(j["state"], "COLLECTION_STATE_RUNNING");
  ASSERT_TRUE(j["counts"].is_object());
  EXPECT_EQ(j["counts"]["total"], 3);
  EXPECT_EQ(j["counts"]["cancelled"], 0);  // zero values printed too
  ASSERT_TRUE(j["jobs"].is_array());
  ASSERT_EQ(j["jobs"].size(), 3u);
  EXPECT_EQ(j["jobs"][0]["kernel_time_us"], 12.5);
  EXPECT_EQ(j["jobs"][0]["round_id"], "42");  // int64 is a JSON string in proto3
  EXPECT_TRUE(j.contains("idempotency_key"));
  EXPECT_EQ(j["created_at"], "2027-01-15T08:00:00Z");
}

TEST(GetTest, ServerUnavailableExitsFive) {
  MockSession m;
  EXPECT_CALL(m.collections(), GetCollection(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "server draining")));
  std::ostringstream out, err;
  EXPECT_EQ(RunGet(m.session(), "c-1", out, err), kExitUnavailable);
  EXPECT_EQ(err.str(), "npuperf: UNAVAILABLE: server draining\n");
  EXPECT_EQ(out.str(), "");
}

TEST(GetTest, UnknownCollectionIsNotFound) {
  MockSession m;
  EXPECT_CALL(m.collections(), GetCollection(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::NOT_FOUND, "collection c-9 not found")));
  std::ostringstream out, err;
  EXPECT_EQ(RunGet(m.session(), "c-9", out, err), kExitNotFound);
  EXPECT_EQ(err.str(), "npuperf: NOT_FOUND: collection c-9 not found\n");
}

TEST(DeadlineTest, EveryCallTakesItsDeadlineFromTheClockAndTheConfiguredTimeout) {
  ClientConfig config;
  config.timeout = std::chrono::seconds(60);
  MockSession m(config);
  const Clock::SystemTime first = m.DeadlineIn(std::chrono::seconds(60));
  const Clock::SystemTime later = first + std::chrono::minutes(10);
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), GetCollection(HasDeadline(first), _, _))
      .WillOnce(Reply(GetReply(Running())));
  EXPECT_CALL(m.collections(), GetCollection(HasDeadline(later), _, _))
      .WillOnce(Reply(GetReply(Running())));
  std::ostringstream out, err;
  EXPECT_EQ(RunGet(m.session(), "c-1", out, err), kExitOk);
  m.clock().Advance(std::chrono::minutes(10));
  EXPECT_EQ(RunGet(m.session(), "c-1", out, err), kExitOk);
}

TEST(CancelTest, SendsTheReasonAndPrintsTheCancelledCollection) {
  MockSession m;
  auto req = Proto<v1::CancelCollectionRequest>(R"pb(collection_id: "c-1" reason: "wrong seed")pb");
  v1::CancelCollectionResponse reply;
  *reply.mutable_collection() = OneJobCollection(v1::COLLECTION_STATE_CANCELLED);
  reply.mutable_collection()->mutable_counts()->set_cancelled(1);
  EXPECT_CALL(m.collections(),
              CancelCollection(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), EqualsProto(req), _))
      .WillOnce(Reply(reply));
  // The reply lists none of its one job: the client pages it in.
  EXPECT_CALL(m.collections(), GetCollection(_, EqualsProto(GetRequest("c-1")), _))
      .WillOnce(Reply(GetReply(reply.collection())));
  std::ostringstream out, err;
  EXPECT_EQ(RunCancel(m.session(), "c-1", "wrong seed", out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "collection c-1  cancelled  0/1 succeeded, 0 failed, 1 cancelled  (created -)\n");
}

TEST(ListTest, SendsLabelsAndPageTokenAndPrintsOneLinePerCollection) {
  MockSession m;
  auto req = Proto<v1::ListCollectionsRequest>(R"pb(labels { key: "branch" value: "main" }
                                                    page_token: "p2")pb");
  auto reply = Proto<v1::ListCollectionsResponse>(R"pb(
    collections {
      id: "c-2"
      state: COLLECTION_STATE_SUCCEEDED
      counts { total: 4 succeeded: 4 }
      created_at { seconds: 1800000000 }
    }
    next_page_token: "p3")pb");
  EXPECT_CALL(m.collections(),
              ListCollections(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), EqualsProto(req), _))
      .WillOnce(Reply(reply));
  std::ostringstream out, err;
  EXPECT_EQ(RunList(m.session(), {"branch=main"}, "p2", out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "c-2              succeeded    4/4   2027-01-15T08:00:00Z\n"
            "(more: --page-token p3)\n");
}

TEST(ListTest, JsonListsCollectionsAndTheNextPageToken) {
  MockSession m(JsonConfig());
  auto reply = Proto<v1::ListCollectionsResponse>(R"pb(collections { id: "c-2" })pb");
  EXPECT_CALL(m.collections(), ListCollections(_, _, _)).WillOnce(Reply(reply));
  std::ostringstream out, err;
  ASSERT_EQ(RunList(m.session(), {}, "", out, err), kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j["collections"].is_array());
  EXPECT_EQ(j["collections"][0]["id"], "c-2");
  EXPECT_TRUE(j["next_page_token"].is_string());
}

TEST(ListTest, AMalformedLabelFailsBeforeAnyCall) {
  MockSession m;  // StrictMock: any call fails the test
  std::ostringstream out, err;
  EXPECT_EQ(RunList(m.session(), {"branch"}, "", out, err), kExitError);
  EXPECT_EQ(err.str(), "npuperf: INVALID_ARGUMENT: --label 'branch': want key=value\n");
}

// ---- round, rounds, agents ------------------------------------------------

TEST(RoundTest, PrintsTheEvidenceOfOneRound) {
  MockSession m;
  auto reply = Proto<v1::GetRoundResponse>(
      R"pb(round {
             id: 42
             operator_name: "add"
             case_id: "p1"
             collection_id: "c-1"
             created_at { seconds: 1800000000 }
             evidence {
               op_name: "add_kernel"
               task_type: "AI_VECTOR_CORE"
               duration {
                 aggregate_us: 12.5
                 samples_us: [ 12.4, 12.6 ]
               }
               bound { label: "MTE2_BOUND" routing_label: "data_movement" }
               per_core { verdict: "PASS" spread_pct: 3.25 }
               fingerprint { soc: "Ascend910B2" device_id: 3 host: "npu-host" mode: "standard" }
             }
           })pb");
  EXPECT_CALL(m.queries(), GetRound(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                    EqualsProto(Proto<v1::GetRoundRequest>("round_id: 42")), _))
      .WillOnce(Reply(reply));
  std::ostringstream out, err;
  EXPECT_EQ(RunRound(m.session(), 42, out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "round 42  add/p1  collection c-1  2027-01-15T08:00:00Z\n"
            "  kernel add_kernel (AI_VECTOR_CORE)  12.500 us  samples [12.400, 12.600]\n"
            "  bound MTE2_BOUND (data_movement)\n"
            "  per-core PASS spread 3.2%\n"
            "  fingerprint soc Ascend910B2 device 3 host npu-host mode standard\n");
}

TEST(RoundsTest, OfAnOperatorWithAMetricSeries) {
  MockSession m;
  auto req = Proto<v1::ListRoundsRequest>(
      R"pb(operator_name: "add" case_id: "p1" metric: "duration" page_size: 1000)pb");
  auto reply = Proto<v1::ListRoundsResponse>(R"pb(
    rounds {
      id: 42
      operator_name: "add"
      case_id: "p1"
      collection_id: "c-1"
      evidence {
        duration { aggregate_us: 12.5 }
        fingerprint { soc: "Ascend910B2" }
      }
    }
    series {
      round_id: 42
      at { seconds: 1800000000 }
      value: 12.5
    })pb");
  EXPECT_CALL(m.queries(),
              ListRounds(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), EqualsProto(req), _))
      .WillOnce(Reply(reply));
  std::ostringstream out, err;
  EXPECT_EQ(RunRounds(m.session(), {"add", "p1", "", "duration"}, out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "round  operator/case                  collection       soc                 kernel_us  "
            "bound        per-core (spread)      created\n"
            "42     add/p1                         c-1              Ascend910B2            12.500  "
            "-            -                      -\n"
            "  series round 42 2027-01-15T08:00:00Z 12.5\n");
}

TEST(RoundsTest, ChangesAreAskedForAndPrintedOnePerLine) {
  MockSession m;
  auto req =
      Proto<v1::ListRoundsRequest>(
          R"pb(operator_name: "add"
               metric: "duration"
               page_size: 1000
               changes: true
               min_change_pct: 5)pb");
  auto reply = Proto<v1::ListRoundsResponse>(R"pb(
    changes {
      case_id: "p1"
      round_id: 57
      at { seconds: 1800000000 }
      before_median: 100
      after_median: 115
      change_pct: 15
      p_value: 0.005
      points_before: 12
      points_after: 8
    })pb");
  EXPECT_CALL(m.queries(), ListRounds(_, EqualsProto(req), _)).WillOnce(Reply(reply));
  std::ostringstream out, err;
  RoundsArgs args{"add", "", "", "duration", true, 5};
  EXPECT_EQ(RunRounds(m.session(), args, out, err), kExitOk);
  EXPECT_NE(out.str().find("change p1 at round 57 (2027-01-15T08:00:00Z): median 100 -> 115 "
                           "(+15.0 %), p=0.005, 12 points before, 8 from it\n"),
            std::string::npos)
      << out.str();
}

TEST(RoundsTest, NoChangePointsIsSaidAndChangesNeedAMetric) {
  MockSession m;
  EXPECT_CALL(m.queries(), ListRounds(_, _, _))
      .WillOnce(Reply(Proto<v1::ListRoundsResponse>(R"pb(series { round_id: 1 value: 2 })pb")));
  std::ostringstream out, err;
  EXPECT_EQ(RunRounds(m.session(), {"add", "", "", "duration", true}, out, err), kExitOk);
  EXPECT_NE(out.str().find("no change points in 1 points\n"), std::string::npos) << out.str();
  EXPECT_EQ(RunRounds(m.session(), {"add", "", "", "", true}, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--changes needs --metric"), std::string::npos) << err.str();
}

TEST(RoundsTest, OfACollectionAsJson) {
  MockSession m(JsonConfig());
  auto req = Proto<v1::ListRoundsRequest>(R"pb(collection_id: "c-1" page_size: 1000)pb");
  auto reply = Proto<v1::ListRoundsResponse>(R"pb(rounds { id: 42 })pb");
  EXPECT_CALL(m.queries(), ListRounds(_, EqualsProto(req), _)).WillOnce(Reply(reply));
  std::ostringstream out, err;
  ASSERT_EQ(RunRounds(m.session(), {"", "", "c-1", ""}, out, err), kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j["rounds"].is_array());
  EXPECT_EQ(j["rounds"][0]["id"], "42");
  EXPECT_TRUE(j["series"].is_array());
}

TEST(RoundsTest, NeedsExactlyOneOfOperatorAndCollection) {
  MockSession m;  // no call either way
  std::ostringstream out, err;
  EXPECT_EQ(RunRounds(m.session(), {}, out, err), kExitUsage);
  EXPECT_EQ(RunRounds(m.session(), {"add", "", "c-1", ""}, out, err), kExitUsage);
  EXPECT_EQ(err.str(),
            "npuperf rounds: give an operator or --collection\n"
            "npuperf rounds: give an operator or --collection\n");
}

TEST(AgentsTest, PrintsAgentsAndTheirDevices) {
  MockSession m;
  auto reply = Proto<v1::ListAgentsResponse>(
      R"pb(agents {
             agent_id: "a-1"
             host: "npu-host"
             state: "online"
             version: "0.4.0"
             last_seen { seconds: 1800000000 }
             devices { device_id: 0 soc: "Ascend910B2" state: "busy" job_id: 8 }
             devices { device_id: 1 soc: "Ascend910B2" state: "free" }
           })pb");
  EXPECT_CALL(m.queries(), ListAgents(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), _, _))
      .WillOnce(Reply(reply));
  std::ostringstream out, err;
  EXPECT_EQ(RunAgents(m.session(), out, err), kExitOk);
  EXPECT_EQ(out.str(),
            "a-1  npu-host  online  v0.4.0  last seen 2027-01-15T08:00:00Z\n"
            "  device 0  Ascend910B2  busy  job 8\n"
            "  device 1  Ascend910B2  free\n");
}

TEST(AgentsTest, PermissionDeniedIsAnError) {
  MockSession m;
  EXPECT_CALL(m.queries(), ListAgents(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "agent token")));
  std::ostringstream out, err;
  EXPECT_EQ(RunAgents(m.session(), out, err), kExitError);
  EXPECT_EQ(err.str(), "npuperf: PERMISSION_DENIED: agent token\n");
}

}  // namespace
}  // namespace npuperf::client
