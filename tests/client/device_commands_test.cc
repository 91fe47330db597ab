// client/device_commands.cc against StrictMock stubs: `devices list` prints each quarantine (and
// with --all who released it and why), `devices release HOST:DEV --note` sends exactly the
// device and note, refuses a malformed device or an empty note before any call (exit 2), and
// reports a refusal of the server with its code.
#include "client/device_commands.h"

#include <sstream>

#include "tests/client/mock_session.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::EqualsProto;
using ::npuperf::testing::HasDeadline;
using ::npuperf::testing::JsonConfig;
using ::npuperf::testing::kDefaultCallTimeout;
using ::npuperf::testing::MockSession;
using ::npuperf::testing::Proto;
using ::npuperf::testing::Reply;
using ::testing::_;
using ::testing::HasSubstr;

TEST(DevicesTest, ListsEachQuarantineAndWhoReleasedIt) {
  MockSession m;
  EXPECT_CALL(
      m.devices(),
      ListQuarantines(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                      EqualsProto(Proto<v1::ListQuarantinesRequest>("include_released: true")), _))
      .WillOnce(Reply(Proto<v1::ListQuarantinesResponse>(R"pb(
        quarantines {
          host: "h1"
          device_id: 3
          soc: "Ascend910B2"
          source: "npu_smi"
          reason: "npu-smi: Health Status Critical (error code 80CB8002)"
          since { seconds: 1764633600 }
        }
        quarantines {
          device_id: 1
          soc: "Ascend910B2"
          source: "npu_smi"
          reason: "npu-smi: Health Status Alarm (error code 80E18005)"
          since { seconds: 1764547200 }
          released_at { seconds: 1764550800 }
          released_by: "infra"
          release_note: "chip reseated"
        })pb")));
  std::ostringstream out, err;
  EXPECT_EQ(RunDevices(m.session(), true, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("h1:3"));
  EXPECT_THAT(out.str(), HasSubstr("since 2025-12-02T00:00:00Z: npu-smi: Health Status Critical"));
  EXPECT_THAT(out.str(), HasSubstr("device 1 ")) << "a host hidden from this team";
  EXPECT_THAT(out.str(), HasSubstr("released 2025-12-01T01:00:00Z by infra: chip reseated"));
}

TEST(DevicesTest, NothingQuarantinedSaysSo) {
  MockSession m;
  EXPECT_CALL(m.devices(), ListQuarantines(_, _, _)).WillOnce(Reply(v1::ListQuarantinesResponse()));
  std::ostringstream out, err;
  EXPECT_EQ(RunDevices(m.session(), false, out, err), kExitOk);
  EXPECT_EQ(out.str(), "no device is quarantined\n");
}

TEST(DeviceReleaseTest, SendsTheDeviceAndNote) {
  MockSession m(JsonConfig());
  EXPECT_CALL(m.devices(), ReleaseDevice(_, EqualsProto(Proto<v1::ReleaseDeviceRequest>(R"pb(
                                           host: "npu-host-3"
                                           device_id: 5
                                           note: "reseated")pb")),
                                         _))
      .WillOnce(Reply(Proto<v1::ReleaseDeviceResponse>(R"pb(
        quarantine { host: "npu-host-3" device_id: 5 released_by: "infra" })pb")));
  std::ostringstream out, err;
  EXPECT_EQ(RunDeviceRelease(m.session(), {"npu-host-3:5", "reseated"}, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("\"released_by\": \"infra\""));
}

TEST(DeviceReleaseTest, AMalformedDeviceOrAnEmptyNoteIsAUsageErrorBeforeAnyCall) {
  for (const std::string bad : {"npu-host-3", ":5", "h:-1", "h:x", ""}) {
    MockSession m;
    std::ostringstream out, err;
    EXPECT_EQ(RunDeviceRelease(m.session(), {bad, "why"}, out, err), kExitUsage) << bad;
    EXPECT_THAT(err.str(), HasSubstr("want HOST:DEV")) << bad;
  }
  MockSession m;
  std::ostringstream out, err;
  EXPECT_EQ(RunDeviceRelease(m.session(), {"h:1", ""}, out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("--note"));
}

TEST(DeviceReleaseTest, ARefusalIsReportedWithItsCode) {
  MockSession m;
  EXPECT_CALL(m.devices(), ReleaseDevice(_, _, _))
      .WillOnce(Reply(
          v1::ReleaseDeviceResponse(),
          grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "team alpha may not release devices")));
  std::ostringstream out, err;
  EXPECT_EQ(RunDeviceRelease(m.session(), {"h:1", "why"}, out, err), kExitError);
  EXPECT_THAT(err.str(), HasSubstr("PERMISSION_DENIED"));
}

}  // namespace
}  // namespace npuperf::client
