#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "client/commands.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"
#include "npuperf/v1/collection_service_mock.grpc.pb.h"
#include "npuperf/v1/device_service_mock.grpc.pb.h"
#include "npuperf/v1/query_service_mock.grpc.pb.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::testing {

// ClientConfig's default deadline of a call.
inline constexpr std::chrono::seconds kDefaultCallTimeout(30);

// A config printing JSON (--format json).
inline client::ClientConfig JsonConfig() {
  client::ClientConfig c;
  c.format = client::OutputFormat::kJson;
  return c;
}

// Collection "c-1" of one job, in `state`.
inline v1::Collection OneJobCollection(v1::CollectionState state) {
  v1::Collection c;
  c.set_id("c-1");
  c.set_state(state);
  c.mutable_counts()->set_total(1);
  return c;
}

// A Session over StrictMock stubs and a FakeClock, for the command tests:
// every call a test does not expect fails it. The clock is moved off its start
// so a deadline taken from the real clock cannot match by accident.
class MockSession {
 public:
  explicit MockSession(client::ClientConfig config = client::ClientConfig()) {
    clock_.Advance(std::chrono::seconds(5));
    auto collections = std::make_unique<::testing::StrictMock<v1::MockCollectionServiceStub>>();
    auto queries = std::make_unique<::testing::StrictMock<v1::MockQueryServiceStub>>();
    auto devices = std::make_unique<::testing::StrictMock<v1::MockDeviceServiceStub>>();
    collections_ = collections.get();
    queries_ = queries.get();
    devices_ = devices.get();
    session_ = std::make_unique<client::Session>(std::move(collections), std::move(queries),
                                                 std::move(config), clock_, std::move(devices));
  }

  client::Session& session() { return *session_; }
  ::testing::StrictMock<v1::MockCollectionServiceStub>& collections() { return *collections_; }
  ::testing::StrictMock<v1::MockQueryServiceStub>& queries() { return *queries_; }
  ::testing::StrictMock<v1::MockDeviceServiceStub>& devices() { return *devices_; }
  FakeClock& clock() { return clock_; }

  // The deadline a call made now with this timeout must carry.
  Clock::SystemTime DeadlineIn(std::chrono::seconds timeout) {
    return clock_.SystemNow() + timeout;
  }

 private:
  FakeClock clock_;
  ::testing::StrictMock<v1::MockCollectionServiceStub>* collections_ = nullptr;
  ::testing::StrictMock<v1::MockQueryServiceStub>* queries_ = nullptr;
  ::testing::StrictMock<v1::MockDeviceServiceStub>* devices_ = nullptr;
  std::unique_ptr<client::Session> session_;
};

// A grpc::ClientContext* whose deadline is exactly `deadline`.
MATCHER_P(HasDeadline, deadline, "") {
  if (arg->deadline() == deadline) return true;
  *result_listener
      << "deadline is "
      << std::chrono::duration_cast<std::chrono::milliseconds>(arg->deadline() - deadline).count()
      << " ms off";
  return false;
}

// A message equal to `expected` (field by field).
MATCHER_P(EqualsProto, expected, "") {
  if (google::protobuf::util::MessageDifferencer::Equals(arg, expected)) return true;
  *result_listener << "is " << arg.ShortDebugString();
  return false;
}

// A message parsed from the text format (fails the test when it does not parse).
template <typename M>
M Proto(const std::string& text) {
  M m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

// A unary call's action: fills the response and returns status.
template <typename Resp>
auto Reply(Resp reply, grpc::Status status = grpc::Status::OK) {
  return [reply, status](grpc::ClientContext*, const auto&, Resp* resp) {
    *resp = reply;
    return status;
  };
}

}  // namespace npuperf::testing
