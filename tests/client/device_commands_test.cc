// client/device_commands.cc against StrictMock stubs: `devices list` prints each quarantine (and
// with --all who released it and why), `devices release HOST:DEV --note` sends exactly the
// device and note, refuses a malformed device or an empty note before any call (exit 2), and
// reports a refusal of the server with its code; `devices canaries` sends the filters it was given
// and prints each canary with what it was judged against.
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

TEST(DeviceCanariesTest, SendsTheFiltersAndPrintsEachJudgement) {
  MockSession m;
  EXPECT_CALL(m.devices(), ListCanaries(HasDeadline(m.DeadlineIn(kDefaultCallTimeout)),
                                        EqualsProto(Proto<v1::ListCanariesRequest>(R"pb(
                                          host: "npu-host-3"
                                          device_id: 5
                                          soc: "Ascend910B2"
                                          limit: 10)pb")),
                                        _))
      .WillOnce(Reply(Proto<v1::ListCanariesResponse>(R"pb(
        canaries {
          id: 12
          host: "npu-host-3"
          device_id: 5
          soc: "Ascend910B2"
          state: "slow"
          kernel_us: 55.3
          reference: "peers"
          reference_us: 48.1
          excess_pct: 15.0
          threshold_pct: 5
          reason: "canary 15.0 % slower than the median of 15 other Ascend910B2 devices"
          created_at { seconds: 1764633600 }
        }
        canaries {
          id: 11
          device_id: 5
          soc: "Ascend910B2"
          state: "pending"
          created_at { seconds: 1764630000 }
        }
        next_page_token: "11")pb")));
  std::ostringstream out, err;
  EXPECT_EQ(RunCanaries(m.session(), {"npu-host-3:5", -1, "Ascend910B2", 10}, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("npu-host-3:5"));
  EXPECT_THAT(out.str(), HasSubstr("slow"));
  EXPECT_THAT(out.str(), HasSubstr("55.30 us vs peers 48.10 us (+15.0 %, threshold 5.0 %)"));
  EXPECT_THAT(out.str(), HasSubstr("median of 15 other"));
  EXPECT_THAT(out.str(), HasSubstr("device 5 ")) << "a host hidden from this team";
  EXPECT_THAT(out.str(), HasSubstr("more"));
}

TEST(DeviceCanariesTest, ADeviceWithoutAHostFiltersByIdAndAMalformedOneIsAUsageError) {
  MockSession m;
  EXPECT_CALL(m.devices(),
              ListCanaries(_, EqualsProto(Proto<v1::ListCanariesRequest>("device_id: 0")), _))
      .WillOnce(Reply(v1::ListCanariesResponse()));
  std::ostringstream out, err;
  EXPECT_EQ(RunCanaries(m.session(), {"", 0, "", 0}, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("--canary-interval"));
  MockSession none;
  std::ostringstream out2, err2;
  EXPECT_EQ(RunCanaries(none.session(), {"host-without-device", -1, "", 0}, out2, err2),
            kExitUsage);
  EXPECT_THAT(err2.str(), HasSubstr("want HOST:DEV"));
}

}  // namespace
}  // namespace npuperf::client
