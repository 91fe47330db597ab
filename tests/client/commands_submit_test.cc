// client/commands.cc against StrictMock stubs: submit (bundle uploads, the
// spec naming them, then watching; watch itself: watch_command_test.cc).
#include <fstream>
#include <sstream>

#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/test/mock_stream.h"
#include "nlohmann/json.hpp"
#include "tests/client/mock_session.h"
#include "tests/client/watch_events.h"
#include "tests/fakes/temp_dir.h"
#include "tests/fixtures/manifest_fixtures.h"

namespace npuperf::client {
namespace {

namespace fs = std::filesystem;
using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::HasDeadline;
using ::npuperf::testing::JsonConfig;
using ::npuperf::testing::kDefaultCallTimeout;
using ::npuperf::testing::kTwoJobsLines;
using ::npuperf::testing::kWatchTimeout;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::OneJobCollection;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::npuperf::testing::Stream;
using ::npuperf::testing::TwoJobsSucceed;
using ::npuperf::testing::WatchRequest;
using ::testing::_;
using ::testing::DoAll;
using ::testing::HasSubstr;
using ::testing::Property;
using ::testing::Return;
using ::testing::SetArgPointee;
using ::testing::StrictMock;
using Writer = StrictMock<grpc::testing::MockClientWriter<v1::UploadBundleRequest>>;

constexpr std::chrono::seconds kUploadTimeout(300);  // per bundle

// ---- submit ---------------------------------------------------------------

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// Records one bundle upload: the header, then the tar bytes of the chunks.
struct Upload {
  v1::BundleHeader header;
  std::string bytes;
  int messages = 0;
};

// A client stream that records what is written into `upload`, then finishes
// with status.
Writer* UploadStream(Upload* upload, grpc::Status status = grpc::Status::OK) {
  auto* writer = new Writer();
  EXPECT_CALL(*writer, Write(_, _))
      .WillRepeatedly([upload](const v1::UploadBundleRequest& r, grpc::WriteOptions) {
        if (upload->messages++ == 0) {
          EXPECT_TRUE(r.has_header()) << "the header comes first";
          upload->header = r.header();
        } else {
          EXPECT_EQ(r.part_case(), v1::UploadBundleRequest::kChunk);
          EXPECT_LE(r.chunk().size(), 1u << 20);
          upload->bytes += r.chunk();
        }
        return true;
      });
  EXPECT_CALL(*writer, WritesDone()).WillOnce(Return(true));
  EXPECT_CALL(*writer, Finish()).WillOnce(Return(status));
  return writer;
}

v1::GetCollectionResponse Page(const v1::Collection& c) {
  v1::GetCollectionResponse r;
  *r.mutable_collection() = c;
  return r;
}

v1::SubmitCollectionResponse Submitted(const v1::Collection& c, bool created = true) {
  v1::SubmitCollectionResponse r;
  *r.mutable_collection() = c;
  r.set_created(created);
  return r;
}

class SubmitTest : public ::testing::Test {
 protected:
  SubmitTest() {
    op_ = dir_.path() / "add";
    WriteFile(op_ / "test_add.py", "print('add')\n");
    WriteFile(op_ / "kernel/add.cpp", "// kernel\n");
    args_.operator_dirs = {op_.string()};
    args_.op_name = "add_kernel";
    args_.wait = false;
  }

  npuperf::testing::TempDir dir_;
  fs::path op_;
  SubmitArgs args_;
};

TEST_F(SubmitTest, UploadsTheBundleThenSubmitsASpecNamingIt) {
  MockSession m;
  args_.mode = v1::PROFILE_MODE_QUICK;
  args_.case_ids = {"p1", "p2"};
  args_.warm_up = 0;
  args_.repeats = 5;
  args_.seed = 7;
  args_.labels = {"branch=main", "pr=12=a"};
  args_.socs = {"Ascend910B2"};
  args_.device_range = "0-3";
  args_.idempotency_key = "k-1";
  args_.launch = "-1";
  Upload upload;
  v1::SubmitCollectionRequest sent;
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), UploadBundleRaw(HasDeadline(m.DeadlineIn(kUploadTimeout)), _))
      .WillOnce(Return(UploadStream(&upload)));
  EXPECT_CALL(m.collections(),
              SubmitCollection(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)), _, _))
      .WillOnce(DoAll(::testing::SaveArg<1>(&sent),
                      Reply(Submitted(OneJobCollection(v1::COLLECTION_STATE_QUEUED)))));
  // The reply lists none of its one job: the client pages the rest in.
  EXPECT_CALL(m.collections(),
              GetCollection(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                            Property(&v1::GetCollectionRequest::collection_id, "c-1"), _))
      .WillOnce(Reply(Page(OneJobCollection(v1::COLLECTION_STATE_QUEUED))));
  std::ostringstream out, err;
  // --no-wait: once queued it is done (a bot must not read it as a failure).
  EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitOk);
  EXPECT_EQ(err.str(), "submitted c-1: 1 jobs\n");
  EXPECT_EQ(out.str(),
            "collection c-1  queued  0/1 succeeded, 0 failed, 0 cancelled  (created -)\n");

  EXPECT_EQ(upload.header.name(), "add");
  EXPECT_EQ(upload.header.size_bytes(), static_cast<int64_t>(upload.bytes.size()));
  EXPECT_EQ(upload.header.sha256(), Sha256Hex(upload.bytes));
  EXPECT_GE(upload.messages, 2);
  auto want = Proto<v1::SubmitCollectionRequest>(R"pb(
    spec {
      kind: COLLECTION_KIND_UNSPECIFIED
      params { mode: PROFILE_MODE_QUICK skip_warm_up: true repeats: 5 seed: 7 }
      labels { key: "branch" value: "main" }
      labels { key: "pr" value: "12=a" }
      constraints { socs: "Ascend910B2" device_range: "0-3" }
      operators {
        name: "add"
        op_name: "add_kernel"
        case_ids: [ "p1", "p2" ]
        launch: "-1"
      }
    }
    idempotency_key: "k-1")pb");
  want.mutable_spec()->mutable_operators(0)->set_bundle_sha256(upload.header.sha256());
  EXPECT_THAT(sent, EqualsProto(want));
}

TEST_F(SubmitTest, WaitsByWatchingTheCollectionItCreated) {
  MockSession m;
  args_.wait = true;
  Upload upload;
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), UploadBundleRaw(_, _)).WillOnce(Return(UploadStream(&upload)));
  EXPECT_CALL(m.collections(), SubmitCollection(_, _, _))
      .WillOnce(Reply(Submitted(OneJobCollection(v1::COLLECTION_STATE_QUEUED), /*created=*/false)));
  EXPECT_CALL(m.collections(), WatchCollectionRaw(HasDeadline(m.DeadlineIn(kWatchTimeout)),
                                                  EqualsProto(WatchRequest("c-1"))))
      .WillOnce(Return(Stream(TwoJobsSucceed())));
  std::ostringstream out, err;
  EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitOk);
  EXPECT_EQ(err.str(),
            std::string("already submitted (idempotency key) c-1: 1 jobs\n") + kTwoJobsLines);
  EXPECT_EQ(out.str(),
            "collection c-1  succeeded  2/2 succeeded, 0 failed, 0 cancelled  (created -)\n");
}

TEST_F(SubmitTest, NoWaitFailsOnlyForACollectionTheKeyFoundAlreadyFailed) {
  for (const auto state : {v1::COLLECTION_STATE_RUNNING, v1::COLLECTION_STATE_SUCCEEDED,
                           v1::COLLECTION_STATE_FAILED, v1::COLLECTION_STATE_CANCELLED}) {
    MockSession m;
    Upload upload;
    EXPECT_CALL(m.collections(), UploadBundleRaw(_, _)).WillOnce(Return(UploadStream(&upload)));
    EXPECT_CALL(m.collections(), SubmitCollection(_, _, _))
        .WillOnce(Reply(Submitted(OneJobCollection(state), /*created=*/false)));
    EXPECT_CALL(m.collections(), GetCollection(_, _, _))
        .WillOnce(Reply(Page(OneJobCollection(state))));
    std::ostringstream out, err;
    const bool bad =
        state == v1::COLLECTION_STATE_FAILED || state == v1::COLLECTION_STATE_CANCELLED;
    EXPECT_EQ(RunSubmit(m.session(), args_, out, err), bad ? kExitError : kExitOk)
        << v1::CollectionState_Name(state);
  }
}

TEST_F(SubmitTest, ABatchWithManifestsTakesEveryOperatorDirectoryInOrder) {
  MockSession m(JsonConfig());
  const fs::path base = dir_.path() / "ops";
  WriteFile(base / "b_op/PERFORMANCE_CASES.json",
            R"({"schema_version": 1, "cases": [{"id": "d1", "shape": "[8]", "dtype": "fp16"}]})");
  WriteFile(base / "a_op/PERFORMANCE_CASES.json", R"({"schema_version": 1, "cases": [
                {"id": "c1", "shape": "[8]", "dtype": "fp16"},
                {"id": " c2 ", "shape": "[16]", "dtype": "fp16"}]})");
  WriteFile(base / "notes/readme.txt", "not an operator\n");
  WriteFile(dir_.path() / "map.json", R"({"b_op": "b_kernel"})");
  args_.operator_dirs.clear();
  args_.batch_dir = base.string();
  args_.manifest = true;
  args_.op_name_map = (dir_.path() / "map.json").string();
  // The bundles upload at once (in either order), and both before the submit.
  Upload first, second;
  Writer* first_stream = UploadStream(&first);  // outside the sequence: the two interleave
  Writer* second_stream = UploadStream(&second);
  v1::SubmitCollectionRequest sent;
  ::testing::InSequence in_order;
  EXPECT_CALL(m.collections(), UploadBundleRaw(_, _))
      .WillOnce(Return(first_stream))
      .WillOnce(Return(second_stream));
  EXPECT_CALL(m.collections(), SubmitCollection(_, _, _))
      .WillOnce(DoAll(::testing::SaveArg<1>(&sent),
                      Reply(Submitted(OneJobCollection(v1::COLLECTION_STATE_SUCCEEDED)))));
  EXPECT_CALL(m.collections(), GetCollection(_, _, _))
      .WillOnce(Reply(Page(OneJobCollection(v1::COLLECTION_STATE_SUCCEEDED))));
  std::ostringstream out, err;
  EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitOk) << err.str();
  EXPECT_EQ(nlohmann::json::parse(out.str())["state"], "COLLECTION_STATE_SUCCEEDED");
  const bool a_first = first.header.name() == "a_op";
  const Upload& a = a_first ? first : second;
  const Upload& b = a_first ? second : first;
  EXPECT_EQ(a.header.name(), "a_op");
  EXPECT_EQ(b.header.name(), "b_op");
  EXPECT_NE(a.header.sha256(), b.header.sha256());
  const auto& spec = sent.spec();
  EXPECT_EQ(spec.kind(), v1::COLLECTION_KIND_MANIFEST);
  ASSERT_EQ(spec.operators_size(), 2);
  EXPECT_THAT(spec.operators(0), EqualsProto(Proto<v1::OperatorSpec>(
                                     R"pb(name: "a_op"
                                          op_name: "add_kernel"
                                          case_ids: [ "c1", "c2" ]
                                          manifest_path: "PERFORMANCE_CASES.json")pb" +
                                     ("bundle_sha256: '" + a.header.sha256() + "'"))));
  EXPECT_THAT(spec.operators(1), EqualsProto(Proto<v1::OperatorSpec>(
                                     R"pb(name: "b_op"
                                          op_name: "b_kernel"
                                          case_ids: [ "d1" ]
                                          manifest_path: "PERFORMANCE_CASES.json")pb" +
                                     ("bundle_sha256: '" + b.header.sha256() + "'"))));
}

// submit --manifest reads the shared fixtures (tests/fixtures/manifests) as
// evidence/cases.cc, the server and the Python client do.
TEST_F(SubmitTest, ManifestsFollowTheOneRule) {
  const fs::path op = dir_.path() / "fixture_op";
  const fs::path manifest = op / "PERFORMANCE_CASES.json";
  for (const auto& f : ::npuperf::testing::ManifestFixtures()) {
    WriteFile(manifest, f.bytes);
    auto ids = ManifestCaseIds(op);
    if (f.good) {
      ASSERT_TRUE(ids.ok()) << f.name << ": " << ids.status();
      EXPECT_EQ(absl::StrJoin(*ids, ","), f.expected) << f.name;
    } else {
      ASSERT_TRUE(absl::IsInvalidArgument(ids.status())) << f.name << ": " << ids.status();
      EXPECT_THAT(std::string(ids.status().message()), HasSubstr(f.expected)) << f.name;
      EXPECT_EQ(ids.status().message().rfind(manifest.string() + ": case manifest ", 0), 0u)
          << ids.status();
    }
  }
}

TEST_F(SubmitTest, ABadManifestIsRefusedBeforeAnyCall) {
  MockSession m;  // StrictMock: neither upload nor submit
  WriteFile(fs::path(args_.operator_dirs[0]) / "PERFORMANCE_CASES.json",
            R"({"schema_version": 1, "cases": [{"id": "a", "shape": "[8]", "dtype": "fp16"},
                                               {"id": "a", "shape": "[9]", "dtype": "fp16"}]})");
  args_.manifest = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitError);
  EXPECT_EQ(err.str(), "npuperf: INVALID_ARGUMENT: " +
                           (fs::path(args_.operator_dirs[0]) / "PERFORMANCE_CASES.json").string() +
                           ": case manifest contains duplicate case id 'a'\n");
}

TEST_F(SubmitTest, FieldViolationsFromTheServerAreListed) {
  MockSession m;
  Upload upload;
  EXPECT_CALL(m.collections(), UploadBundleRaw(_, _)).WillOnce(Return(UploadStream(&upload)));
  EXPECT_CALL(m.collections(), SubmitCollection(_, _, _))
      .WillOnce(Return(ToGrpcStatus(InvalidArgumentWithFields(
          {{"spec.max_concurrent_jobs", "must be 1..8"}, {"spec.priority", "must be -10..10"}}))));
  std::ostringstream out, err;
  EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitError);
  EXPECT_EQ(err.str(),
            "npuperf: INVALID_ARGUMENT: invalid request: spec.max_concurrent_jobs: must be 1..8; "
            "spec.priority: must be -10..10\n"
            "  spec.max_concurrent_jobs: must be 1..8\n"
            "  spec.priority: must be -10..10\n");
  EXPECT_EQ(out.str(), "");
}

TEST_F(SubmitTest, AFailedUploadNamesTheDirectoryAndSubmitsNothing) {
  MockSession m;
  Upload upload;
  EXPECT_CALL(m.collections(), UploadBundleRaw(_, _))
      .WillOnce(Return(UploadStream(
          &upload, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "not a tar archive"))));
  std::ostringstream out, err;
  EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitError);
  EXPECT_EQ(err.str(), "npuperf: INVALID_ARGUMENT: upload " + args_.operator_dirs[0] +
                           ": not a tar archive\n");
}

// Bundles upload two at a time, the server's default per-team limit; an
// upload refused as over the team's limit (a lower limit, a teammate's
// upload) is tried once more on its own, after the others.
TEST_F(SubmitTest, AnUploadOverTheTeamsLimitIsTriedOnceMoreAlone) {
  const grpc::Status busy(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "team default has 2 uploads in progress");
  {
    MockSession m;
    Upload refused, again;
    Writer* refused_stream = UploadStream(&refused, busy);
    Writer* again_stream = UploadStream(&again);
    ::testing::InSequence in_order;
    EXPECT_CALL(m.collections(), UploadBundleRaw(_, _))
        .WillOnce(Return(refused_stream))
        .WillOnce(Return(again_stream));
    EXPECT_CALL(m.collections(), SubmitCollection(_, _, _))
        .WillOnce(Reply(Submitted(OneJobCollection(v1::COLLECTION_STATE_QUEUED))));
    EXPECT_CALL(m.collections(), GetCollection(_, _, _))
        .WillOnce(Reply(Page(OneJobCollection(v1::COLLECTION_STATE_QUEUED))));
    std::ostringstream out, err;
    EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitOk) << err.str();
    EXPECT_EQ(again.header.sha256(), refused.header.sha256()) << "the same bundle, resent";
  }
  MockSession m;
  Upload refused, again;
  EXPECT_CALL(m.collections(), UploadBundleRaw(_, _))
      .WillOnce(Return(UploadStream(&refused, busy)))
      .WillOnce(Return(UploadStream(&again, busy)));
  std::ostringstream out, err;
  EXPECT_EQ(RunSubmit(m.session(), args_, out, err), kExitError);
  EXPECT_EQ(err.str(), "npuperf: RESOURCE_EXHAUSTED: upload " + args_.operator_dirs[0] +
                           ": team default has 2 uploads in progress\n");
}

TEST_F(SubmitTest, LocalMistakesFailBeforeAnyCall) {
  MockSession m;  // StrictMock: neither upload nor submit
  std::ostringstream out, err;
  SubmitArgs none = args_;
  none.operator_dirs.clear();
  EXPECT_EQ(RunSubmit(m.session(), none, out, err), kExitError);
  SubmitArgs label = args_;
  label.labels = {"=x"};
  EXPECT_EQ(RunSubmit(m.session(), label, out, err), kExitError);
  SubmitArgs manifest = args_;
  manifest.manifest = true;  // add/ has no PERFORMANCE_CASES.json
  EXPECT_EQ(RunSubmit(m.session(), manifest, out, err), kExitNotFound);
  SubmitArgs map = args_;
  map.op_name_map = (dir_.path() / "missing.json").string();
  EXPECT_EQ(RunSubmit(m.session(), map, out, err), kExitError);
  SubmitArgs batch = args_;
  batch.batch_dir = (dir_.path() / "none").string();
  EXPECT_EQ(RunSubmit(m.session(), batch, out, err), kExitNotFound);
  EXPECT_EQ(err.str(),
            "npuperf: INVALID_ARGUMENT: no operator directory given (positional or --batch)\n"
            "npuperf: INVALID_ARGUMENT: --label '=x': want key=value\n"
            "npuperf: NOT_FOUND: " +
                args_.operator_dirs[0] +
                ": no PERFORMANCE_CASES.json\n"
                "npuperf: INVALID_ARGUMENT: --op-name-map " +
                map.op_name_map +
                ": want a JSON object {operator: op name}\n"
                "npuperf: NOT_FOUND: --batch " +
                batch.batch_dir + ": No such file or directory\n");
}

}  // namespace
}  // namespace npuperf::client
