// Store conformance: device quarantine (issue 33, "Device health"; migration 0017). A device has
// at most one current quarantine, inserted once however many callers race to quarantine it; a
// release ends it once, with who and why, and leaves it in the device's history; releasing a
// device that is not quarantined writes nothing.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

QuarantineRecord Critical(const std::string& host, int32_t device, int64_t since_ms = 1000) {
  QuarantineRecord q;
  q.host = host;
  q.device_id = device;
  q.soc = "Ascend910B2";
  q.reason = "npu-smi: Health Status Critical (error code 80CB8002)";
  q.source = "npu_smi";
  q.since_ms = since_ms;
  return q;
}

TEST_P(StoreConformanceTest, AQuarantinedDeviceIsQuarantinedOnceWhoeverAsksAgain) {
  ASSERT_OK_AND_ASSIGN(first, store_->QuarantineDevice(Critical("h1", 3)));
  EXPECT_TRUE(first.second);
  EXPECT_GT(first.first.id, 0);
  EXPECT_EQ(first.first.released_ms, 0);
  QuarantineRecord again = Critical("h1", 3, 5000);
  again.source = "canary";
  again.reason = "slow canary";
  ASSERT_OK_AND_ASSIGN(second, store_->QuarantineDevice(again));
  EXPECT_FALSE(second.second) << "the current quarantine stays as it was";
  EXPECT_EQ(second.first.id, first.first.id);
  EXPECT_EQ(second.first.source, "npu_smi");
  EXPECT_EQ(second.first.since_ms, 1000);
  ASSERT_OK_AND_ASSIGN(other, store_->QuarantineDevice(Critical("h1", 4)));
  EXPECT_TRUE(other.second) << "another device of the host is another quarantine";
  ASSERT_OK_AND_ASSIGN(current, store_->ListQuarantines(false, 100));
  ASSERT_EQ(current.size(), 2u);
  EXPECT_EQ(current[0].device_id, 4) << "newest first";
  EXPECT_EQ(current[1].reason, "npu-smi: Health Status Critical (error code 80CB8002)");
}

TEST_P(StoreConformanceTest, AReleaseEndsTheQuarantineOnceWithWhoAndWhyAndKeepsTheHistory) {
  ASSERT_TRUE(store_->QuarantineDevice(Critical("h1", 0)).ok());
  ASSERT_OK_AND_ASSIGN(released, store_->ReleaseDevice("h1", 0, "infra", "chip reseated", 9000));
  EXPECT_EQ(released.released_ms, 9000);
  EXPECT_EQ(released.released_by, "infra");
  EXPECT_EQ(released.release_note, "chip reseated");
  const auto twice = store_->ReleaseDevice("h1", 0, "infra", "again", 9500);
  EXPECT_TRUE(absl::IsFailedPrecondition(twice.status())) << twice.status();
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->ReleaseDevice("h2", 0, "x", "", 1).status()));
  ASSERT_OK_AND_ASSIGN(current, store_->ListQuarantines(false, 100));
  EXPECT_TRUE(current.empty());
  // A later quarantine is a new one; the released one stays in the history.
  ASSERT_OK_AND_ASSIGN(later, store_->QuarantineDevice(Critical("h1", 0, 12000)));
  EXPECT_TRUE(later.second);
  ASSERT_OK_AND_ASSIGN(history, store_->ListQuarantines(true, 100));
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].since_ms, 12000);
  EXPECT_EQ(history[0].released_ms, 0);
  EXPECT_EQ(history[1].release_note, "chip reseated");
  ASSERT_OK_AND_ASSIGN(one, store_->ListQuarantines(true, 1));
  EXPECT_EQ(one.size(), 1u) << "the limit holds";
}

TEST_P(StoreConformanceTest, ReplicasQuarantiningOneDeviceAtOnceInsertItOnce) {
  UseSqliteFile();
  ASSERT_OK_AND_ASSIGN(other, OpenStore());
  Store* replicas[2] = {store_.get(), other.get()};
  std::atomic<int> inserted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int attempt = 0; attempt < 5; ++attempt) {
        auto got = replicas[t % 2]->QuarantineDevice(Critical("h9", 1, 1000 + t));
        if (!got.ok() && absl::IsAborted(got.status())) continue;
        EXPECT_TRUE(got.ok()) << got.status();
        if (got.ok() && got->second) ++inserted;
        return;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(inserted.load(), 1);
  ASSERT_OK_AND_ASSIGN(current, store_->ListQuarantines(false, 100));
  EXPECT_EQ(current.size(), 1u);
}

}  // namespace
}  // namespace npuperf::server
