// Store conformance: device canaries (issue 33, "Device health"; migration 0020,
// compare/canaries.h). One canary per device and schedule tick (slot), inserted once however many
// replicas race to schedule it; every update is a compare-and-set on the version; listings are
// newest first, by host, device, SoC and state, paged below an id. A canary quarantine keeps when
// its device's rounds became suspect, and a device's canary quarantines, released ones included,
// are read newest first.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "common/status_util.h"
#include "server/store/migrator.h"
#include "tests/server/store/store_conformance.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>

#include "server/backends/postgres/statements.h"
#endif

namespace npuperf::server {
namespace {

// A canary as the scheduler inserts it: pending, nothing measured yet.
CanaryRecord Scheduled(const std::string& host, int32_t device, int64_t slot,
                       const std::string& soc = "Ascend910B2") {
  CanaryRecord c;
  c.host = host;
  c.device_id = device;
  c.soc = soc;
  c.slot = slot;
  c.state = "pending";
  c.created_ms = slot * 3'600'000 + 17;
  return c;
}

// A canary judged slow against its peers, every field set.
CanaryRecord Judged(CanaryRecord c) {
  c.state = "slow";
  c.collection_id = "canary-c1";
  c.round_id = 42;
  c.kernel_us = 1234.5678;
  c.reference = "peers";
  c.reference_us = 1000.25;
  c.excess_pct = 23.4567;
  c.threshold_pct = 10.5;
  c.reason = "canary 23.5 % slower than the SoC's other devices";
  c.finished_ms = c.created_ms + 90'000;
  return c;
}

void ExpectSameCanary(const CanaryRecord& got, const CanaryRecord& want) {
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.host, want.host);
  EXPECT_EQ(got.device_id, want.device_id);
  EXPECT_EQ(got.soc, want.soc);
  EXPECT_EQ(got.slot, want.slot);
  EXPECT_EQ(got.state, want.state);
  EXPECT_EQ(got.collection_id, want.collection_id);
  EXPECT_EQ(got.round_id, want.round_id);
  EXPECT_EQ(got.kernel_us, want.kernel_us);  // exactly: stored as a double
  EXPECT_EQ(got.reference, want.reference);
  EXPECT_EQ(got.reference_us, want.reference_us);
  EXPECT_EQ(got.excess_pct, want.excess_pct);
  EXPECT_EQ(got.threshold_pct, want.threshold_pct);
  EXPECT_EQ(got.reason, want.reason);
  EXPECT_EQ(got.created_ms, want.created_ms);
  EXPECT_EQ(got.finished_ms, want.finished_ms);
  EXPECT_EQ(got.version, want.version);
}

// The ids of records, in order.
template <typename Record>
std::vector<int64_t> Ids(const std::vector<Record>& records) {
  std::vector<int64_t> ids;
  for (const Record& r : records) ids.push_back(r.id);
  return ids;
}

CanaryFilter Every(int32_t limit = 1000) {
  CanaryFilter f;
  f.limit = limit;
  return f;
}

QuarantineRecord SlowCanary(const std::string& host, int32_t device, int64_t since_ms,
                            int64_t suspect_since_ms) {
  QuarantineRecord q;
  q.host = host;
  q.device_id = device;
  q.soc = "Ascend910B2";
  q.reason = "canary 15.2 % slower than the SoC's other devices";
  q.source = "canary";
  q.since_ms = since_ms;
  q.suspect_since_ms = suspect_since_ms;
  return q;
}

TEST_P(StoreConformanceTest, CanaryIsInsertedWithAnIdAtVersionOneAndReadBackWhole) {
  const CanaryRecord pending = Scheduled("h1", 3, 480);
  ASSERT_OK_AND_ASSIGN(made, store_->InsertCanary(pending));
  EXPECT_TRUE(made.second);
  EXPECT_GT(made.first.id, 0);
  EXPECT_EQ(made.first.version, 1);
  CanaryRecord want = pending;
  want.id = made.first.id;
  want.version = 1;
  ExpectSameCanary(made.first, want);
  ASSERT_OK_AND_ASSIGN(listed, store_->ListCanaries(Every()));
  ASSERT_EQ(listed.size(), 1u);
  ExpectSameCanary(listed[0], want);
  // Every field is kept as given, the created time and a finished judgement included.
  const CanaryRecord judged = Judged(Scheduled("h1", 4, 480));
  ASSERT_OK_AND_ASSIGN(whole, store_->InsertCanary(judged));
  CanaryRecord want_whole = judged;
  want_whole.id = whole.first.id;
  want_whole.version = 1;
  ExpectSameCanary(whole.first, want_whole);
  CanaryFilter device4 = Every();
  device4.device_id = 4;
  ASSERT_OK_AND_ASSIGN(read, store_->ListCanaries(device4));
  ASSERT_EQ(read.size(), 1u);
  ExpectSameCanary(read[0], want_whole);
}

TEST_P(StoreConformanceTest, CanaryOfASlotAlreadyScheduledIsReturnedAndNothingIsInserted) {
  ASSERT_OK_AND_ASSIGN(first, store_->InsertCanary(Scheduled("h1", 3, 480)));
  CanaryRecord different = Judged(Scheduled("h1", 3, 480, "Ascend910B3"));
  different.created_ms += 5000;
  ASSERT_OK_AND_ASSIGN(again, store_->InsertCanary(different));
  EXPECT_FALSE(again.second);
  ExpectSameCanary(again.first, first.first);  // the first one, as it was stored
  ASSERT_OK_AND_ASSIGN(one, store_->ListCanaries(Every()));
  ASSERT_EQ(one.size(), 1u);
  ExpectSameCanary(one[0], first.first);
  // The next slot of the device, the same slot of another device or of another host: new ones.
  ASSERT_OK_AND_ASSIGN(next_slot, store_->InsertCanary(Scheduled("h1", 3, 481)));
  EXPECT_TRUE(next_slot.second);
  ASSERT_OK_AND_ASSIGN(other_device, store_->InsertCanary(Scheduled("h1", 4, 480)));
  EXPECT_TRUE(other_device.second);
  ASSERT_OK_AND_ASSIGN(other_host, store_->InsertCanary(Scheduled("h2", 3, 480)));
  EXPECT_TRUE(other_host.second);
  ASSERT_OK_AND_ASSIGN(four, store_->ListCanaries(Every()));
  EXPECT_EQ(four.size(), 4u);
}

TEST_P(StoreConformanceTest, CanaryReplicasSchedulingOneSlotAtOnceInsertItOnceAndAllReturnIt) {
  UseSqliteFile();
  ASSERT_OK_AND_ASSIGN(other, OpenStore());
  Store* replicas[2] = {store_.get(), other.get()};
  std::atomic<int> inserted{0};
  std::vector<int64_t> ids(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      CanaryRecord c = Scheduled("h9", 1, 480);
      c.created_ms += t;
      for (int attempt = 0; attempt < 5; ++attempt) {
        auto got = replicas[t % 2]->InsertCanary(c);
        if (!got.ok() && absl::IsAborted(got.status())) continue;
        EXPECT_TRUE(got.ok()) << got.status();
        if (!got.ok()) return;
        if (got->second) ++inserted;
        ids[t] = got->first.id;
        return;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(inserted.load(), 1);
  for (int64_t id : ids) EXPECT_EQ(id, ids[0]);
  ASSERT_OK_AND_ASSIGN(all, store_->ListCanaries(Every()));
  EXPECT_EQ(all.size(), 1u);
}

TEST_P(StoreConformanceTest, CanaryUpdateStoresEveryFieldAndBumpsTheVersion) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertCanary(Scheduled("h1", 3, 480)));
  CanaryRecord submitted = made.first;
  submitted.collection_id = "canary-c1";
  ASSERT_OK_AND_ASSIGN(second, store_->UpdateCanary(submitted));
  EXPECT_EQ(second.version, 2);
  const CanaryRecord judged = Judged(second);
  ASSERT_OK_AND_ASSIGN(third, store_->UpdateCanary(judged));
  EXPECT_EQ(third.version, 3);
  CanaryRecord want = judged;
  want.version = 3;
  ExpectSameCanary(third, want);
  ASSERT_OK_AND_ASSIGN(read, store_->ListCanaries(Every()));
  ASSERT_EQ(read.size(), 1u);
  ExpectSameCanary(read[0], want);
}

TEST_P(StoreConformanceTest, CanaryUpdateFromAStaleVersionIsFailedPreconditionAndWritesNothing) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertCanary(Scheduled("h1", 3, 480)));
  CanaryRecord winner = made.first;
  winner.collection_id = "canary-c1";
  ASSERT_OK_AND_ASSIGN(stored, store_->UpdateCanary(winner));
  // A writer that read version 1 loses, names both versions, and writes nothing.
  const absl::Status lost = store_->UpdateCanary(Judged(made.first)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(lost)) << lost;
  EXPECT_NE(lost.message().find("version 1"), absl::string_view::npos) << lost;
  EXPECT_NE(lost.message().find("now 2"), absl::string_view::npos) << lost;
  ASSERT_OK_AND_ASSIGN(read, store_->ListCanaries(Every()));
  ASSERT_EQ(read.size(), 1u);
  ExpectSameCanary(read[0], stored);
  // The winner's version goes on.
  ASSERT_OK_AND_ASSIGN(next, store_->UpdateCanary(Judged(stored)));
  EXPECT_EQ(next.version, 3);
}

TEST_P(StoreConformanceTest, CanaryUpdateOfAnUnknownIdIsNotFound) {
  ASSERT_OK_AND_ASSIGN(made, store_->InsertCanary(Scheduled("h1", 3, 480)));
  CanaryRecord unknown = Judged(made.first);
  unknown.id = made.first.id + 100;
  const absl::Status got = store_->UpdateCanary(unknown).status();
  EXPECT_TRUE(absl::IsNotFound(got)) << got;
  ASSERT_OK_AND_ASSIGN(read, store_->ListCanaries(Every()));
  ASSERT_EQ(read.size(), 1u);
  ExpectSameCanary(read[0], made.first);
}

TEST_P(StoreConformanceTest, CanaryWithAStateOutsideTheFiveIsRefusedAndNothingIsWritten) {
  CanaryRecord odd = Scheduled("h1", 3, 480);
  odd.state = "running";
  const absl::Status inserted = store_->InsertCanary(odd).status();
  EXPECT_TRUE(absl::IsInvalidArgument(inserted)) << inserted;
  ASSERT_OK_AND_ASSIGN(made, store_->InsertCanary(Scheduled("h1", 3, 480)));
  CanaryRecord bad = Judged(made.first);
  bad.state = "PASS";
  const absl::Status updated = store_->UpdateCanary(bad).status();
  EXPECT_TRUE(absl::IsInvalidArgument(updated)) << updated;
  ASSERT_OK_AND_ASSIGN(read, store_->ListCanaries(Every()));
  ASSERT_EQ(read.size(), 1u);
  ExpectSameCanary(read[0], made.first);
  int64_t slot = 480;
  for (const char* state : {"pending", "pass", "slow", "inconclusive", "failed"}) {
    CanaryRecord ok = Scheduled("h2", 0, slot++);
    ok.state = state;
    EXPECT_TRUE(store_->InsertCanary(ok).ok()) << state;
  }
}

TEST_P(StoreConformanceTest, CanariesAreListedNewestFirstByHostDeviceAndSoc) {
  ASSERT_OK_AND_ASSIGN(a, store_->InsertCanary(Scheduled("h1", 0, 480)));
  ASSERT_OK_AND_ASSIGN(b, store_->InsertCanary(Scheduled("h1", 1, 480)));
  ASSERT_OK_AND_ASSIGN(c, store_->InsertCanary(Scheduled("h2", 0, 480, "Ascend310P3")));
  ASSERT_OK_AND_ASSIGN(d, store_->InsertCanary(Scheduled("h1", 0, 481)));
  const int64_t ia = a.first.id, ib = b.first.id, ic = c.first.id, id = d.first.id;

  ASSERT_OK_AND_ASSIGN(all, store_->ListCanaries(Every()));
  EXPECT_EQ(Ids(all), (std::vector<int64_t>{id, ic, ib, ia}));
  CanaryFilter h1 = Every();
  h1.host = "h1";
  ASSERT_OK_AND_ASSIGN(of_h1, store_->ListCanaries(h1));
  EXPECT_EQ(Ids(of_h1), (std::vector<int64_t>{id, ib, ia}));
  CanaryFilter h1_device0 = h1;
  h1_device0.device_id = 0;
  ASSERT_OK_AND_ASSIGN(of_device, store_->ListCanaries(h1_device0));
  EXPECT_EQ(Ids(of_device), (std::vector<int64_t>{id, ia}));
  CanaryFilter device0 = Every();
  device0.device_id = 0;  // device 0 of every host
  ASSERT_OK_AND_ASSIGN(of_device0, store_->ListCanaries(device0));
  EXPECT_EQ(Ids(of_device0), (std::vector<int64_t>{id, ic, ia}));
  CanaryFilter soc = Every();
  soc.soc = "Ascend310P3";
  ASSERT_OK_AND_ASSIGN(of_soc, store_->ListCanaries(soc));
  EXPECT_EQ(Ids(of_soc), (std::vector<int64_t>{ic}));
  CanaryFilter soc_elsewhere = soc;
  soc_elsewhere.host = "h1";
  ASSERT_OK_AND_ASSIGN(none, store_->ListCanaries(soc_elsewhere));
  EXPECT_TRUE(none.empty()) << "every filter holds at once";
  CanaryFilter unknown = Every();
  unknown.host = "h3";
  ASSERT_OK_AND_ASSIGN(of_unknown, store_->ListCanaries(unknown));
  EXPECT_TRUE(of_unknown.empty());
}

TEST_P(StoreConformanceTest, CanaryListingSplitsThePendingFromTheFinished) {
  ASSERT_OK_AND_ASSIGN(a, store_->InsertCanary(Scheduled("h1", 0, 480)));
  ASSERT_OK_AND_ASSIGN(b, store_->InsertCanary(Scheduled("h1", 1, 480)));
  ASSERT_OK_AND_ASSIGN(c, store_->InsertCanary(Scheduled("h1", 2, 480)));
  ASSERT_OK_AND_ASSIGN(d, store_->InsertCanary(Scheduled("h1", 3, 480)));
  CanaryRecord failed = a.first;
  failed.state = "failed";
  failed.reason = "the canary job failed: lease expired";
  ASSERT_TRUE(store_->UpdateCanary(failed).ok());
  ASSERT_TRUE(store_->UpdateCanary(Judged(c.first)).ok());
  CanaryRecord inconclusive = d.first;
  inconclusive.state = "inconclusive";
  ASSERT_TRUE(store_->UpdateCanary(inconclusive).ok());

  CanaryFilter pending = Every();
  pending.pending_only = true;
  ASSERT_OK_AND_ASSIGN(still, store_->ListCanaries(pending));
  EXPECT_EQ(Ids(still), (std::vector<int64_t>{b.first.id}));
  CanaryFilter finished = Every();
  finished.finished_only = true;
  ASSERT_OK_AND_ASSIGN(done, store_->ListCanaries(finished));
  EXPECT_EQ(Ids(done), (std::vector<int64_t>{d.first.id, c.first.id, a.first.id}));
  EXPECT_EQ(done[2].state, "failed");
  EXPECT_EQ(done[2].version, 2);
  CanaryFilter both = pending;
  both.finished_only = true;
  ASSERT_OK_AND_ASSIGN(neither, store_->ListCanaries(both));
  EXPECT_TRUE(neither.empty()) << "no canary is both pending and finished";
  CanaryFilter device2_pending = pending;
  device2_pending.device_id = 2;
  ASSERT_OK_AND_ASSIGN(none, store_->ListCanaries(device2_pending));
  EXPECT_TRUE(none.empty());
}

TEST_P(StoreConformanceTest, CanaryListingPagesBelowAnIdAndHonoursTheLimit) {
  std::vector<int64_t> ids;  // oldest first
  for (int64_t slot = 480; slot < 485; ++slot) {
    ASSERT_OK_AND_ASSIGN(made, store_->InsertCanary(Scheduled("h1", 0, slot)));
    ids.push_back(made.first.id);
  }
  ASSERT_OK_AND_ASSIGN(first, store_->ListCanaries(Every(2)));
  EXPECT_EQ(Ids(first), (std::vector<int64_t>{ids[4], ids[3]}));
  CanaryFilter next = Every(2);
  next.before_id = first.back().id;
  ASSERT_OK_AND_ASSIGN(second, store_->ListCanaries(next));
  EXPECT_EQ(Ids(second), (std::vector<int64_t>{ids[2], ids[1]}));
  next.before_id = second.back().id;
  ASSERT_OK_AND_ASSIGN(last, store_->ListCanaries(next));
  EXPECT_EQ(Ids(last), (std::vector<int64_t>{ids[0]}));
  next.before_id = ids[0];
  ASSERT_OK_AND_ASSIGN(past, store_->ListCanaries(next));
  EXPECT_TRUE(past.empty());
  // Paging combines with the other filters.
  CanaryFilter device = Every();
  device.host = "h1";
  device.device_id = 0;
  device.pending_only = true;
  device.before_id = ids[3];
  ASSERT_OK_AND_ASSIGN(below, store_->ListCanaries(device));
  EXPECT_EQ(Ids(below), (std::vector<int64_t>{ids[2], ids[1], ids[0]}));
}

TEST_P(StoreConformanceTest, CanaryListingRefusesALimitOutsideOneToAThousandNamingLimit) {
  ASSERT_TRUE(store_->InsertCanary(Scheduled("h1", 0, 480)).ok());
  for (int32_t limit : {0, 1001, -1}) {
    const auto got = store_->ListCanaries(Every(limit));
    EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << limit << ": " << got.status();
    const std::vector<FieldViolation> bad = FieldViolationsOf(got.status());
    ASSERT_EQ(bad.size(), 1u) << limit;
    EXPECT_EQ(bad[0].field, "limit");
  }
  for (int32_t limit : {1, 1000}) {
    ASSERT_OK_AND_ASSIGN(got, store_->ListCanaries(Every(limit)));
    EXPECT_EQ(got.size(), 1u) << limit;
  }
}

TEST_P(StoreConformanceTest, QuarantineKeepsWhenItsDevicesRoundsBecameSuspect) {
  ASSERT_OK_AND_ASSIGN(made, store_->QuarantineDevice(SlowCanary("h1", 3, 9000, 7000)));
  EXPECT_TRUE(made.second);
  EXPECT_EQ(made.first.suspect_since_ms, 7000);
  // A second quarantine of the device answers with the current one, as stored.
  ASSERT_OK_AND_ASSIGN(again, store_->QuarantineDevice(SlowCanary("h1", 3, 9500, 8000)));
  EXPECT_FALSE(again.second);
  EXPECT_EQ(again.first.suspect_since_ms, 7000);
  ASSERT_OK_AND_ASSIGN(current, store_->ListQuarantines(false, 100));
  ASSERT_EQ(current.size(), 1u);
  EXPECT_EQ(current[0].suspect_since_ms, 7000);
  ASSERT_OK_AND_ASSIGN(released, store_->ReleaseDevice("h1", 3, "infra", "reseated", 12000));
  EXPECT_EQ(released.suspect_since_ms, 7000);
  ASSERT_OK_AND_ASSIGN(history, store_->ListQuarantines(true, 100));
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].suspect_since_ms, 7000);
  EXPECT_EQ(history[0].released_ms, 12000);
  // One that never passed a canary: 0.
  ASSERT_OK_AND_ASSIGN(never, store_->QuarantineDevice(SlowCanary("h1", 4, 9000, 0)));
  EXPECT_EQ(never.first.suspect_since_ms, 0);
  ASSERT_OK_AND_ASSIGN(listed, store_->ListQuarantines(false, 100));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].suspect_since_ms, 0);
}

TEST_P(StoreConformanceTest, CanaryQuarantinesOfADeviceAreItsOwnCanaryOnesNewestFirst) {
  ASSERT_OK_AND_ASSIGN(first, store_->QuarantineDevice(SlowCanary("h1", 3, 1000, 500)));
  ASSERT_TRUE(store_->ReleaseDevice("h1", 3, "npuperf", "canary passed", 2000).ok());
  QuarantineRecord smi = SlowCanary("h1", 3, 3000, 0);
  smi.source = "npu_smi";
  smi.reason = "npu-smi: Health Status Critical (error code 80CB8002)";
  ASSERT_TRUE(store_->QuarantineDevice(smi).ok());
  ASSERT_TRUE(store_->ReleaseDevice("h1", 3, "infra", "chip reseated", 4000).ok());
  ASSERT_OK_AND_ASSIGN(current, store_->QuarantineDevice(SlowCanary("h1", 3, 5000, 4500)));
  // Other devices' canary quarantines: the same device number elsewhere, another device here.
  ASSERT_TRUE(store_->QuarantineDevice(SlowCanary("h2", 3, 1000, 900)).ok());
  ASSERT_TRUE(store_->QuarantineDevice(SlowCanary("h1", 4, 1000, 900)).ok());

  ASSERT_OK_AND_ASSIGN(of_device, store_->CanaryQuarantinesOf("h1", 3));
  EXPECT_EQ(Ids(of_device), (std::vector<int64_t>{current.first.id, first.first.id}));
  ASSERT_EQ(of_device.size(), 2u);
  EXPECT_EQ(of_device[0].released_ms, 0);
  EXPECT_EQ(of_device[0].suspect_since_ms, 4500);
  EXPECT_EQ(of_device[0].since_ms, 5000);
  EXPECT_EQ(of_device[1].released_ms, 2000);
  EXPECT_EQ(of_device[1].released_by, "npuperf");
  EXPECT_EQ(of_device[1].release_note, "canary passed");
  EXPECT_EQ(of_device[1].suspect_since_ms, 500);
  for (const QuarantineRecord& q : of_device) {
    EXPECT_EQ(q.source, "canary");
    EXPECT_EQ(q.host, "h1");
    EXPECT_EQ(q.device_id, 3);
    EXPECT_EQ(q.soc, "Ascend910B2");
  }
  ASSERT_OK_AND_ASSIGN(none, store_->CanaryQuarantinesOf("h1", 5));
  EXPECT_TRUE(none.empty());
  ASSERT_OK_AND_ASSIGN(unknown_host, store_->CanaryQuarantinesOf("h3", 3));
  EXPECT_TRUE(unknown_host.empty());
}

TEST_P(StoreConformanceTest, CanaryQuarantinesOfADeviceAreItsNewestHundred) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 101; ++i) {
    ASSERT_OK_AND_ASSIGN(q, store_->QuarantineDevice(SlowCanary("h1", 0, 1000 * i, 0)));
    ids.push_back(q.first.id);
    ASSERT_TRUE(store_->ReleaseDevice("h1", 0, "npuperf", "", 1000 * i + 500).ok());
  }
  ASSERT_OK_AND_ASSIGN(got, store_->CanaryQuarantinesOf("h1", 0));
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(got.front().id, ids.back());
  EXPECT_EQ(got.back().id, ids[1]) << "the oldest one is left out";
}

// A database that migration 0019 left with a quarantine in it: 0020 adds suspect_since_ms as 0.
TEST_P(StoreConformanceTest, AQuarantineStoredBeforeMigration20HasNoSuspectRounds) {
  constexpr char kOldQuarantine[] =
      "INSERT INTO device_quarantines (host, device_id, soc, reason, source, since_ms) VALUES "
      "('h1', 2, 'Ascend910B2', 'slow canary', 'canary', 1000)";
  store_.reset();
  if (GetParam() == Backend::kSqlite) {
    sqlite_path_ = std::filesystem::temp_directory_path() /
                   absl::StrFormat("npuperf-conf-%016x", absl::Uniform<uint64_t>(absl::BitGen()));
    std::filesystem::create_directories(sqlite_path_);
    sqlite_path_ /= "store.db";
    SQLite::Database db(sqlite_path_.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_ms INTEGER NOT NULL)");
    for (const Migration& m : EmbeddedMigrations(SqlDialect::kSqlite)) {
      if (m.version > 19) break;
      db.exec(m.sql);
      SQLite::Statement record(
          db, "INSERT INTO schema_migrations (version, name, applied_ms) VALUES (?, ?, 0)");
      record.bind(1, m.version);
      record.bind(2, m.name);
      record.exec();
    }
    db.exec(kOldQuarantine);
  } else {
#if NPUPERF_WITH_POSTGRES
    pg_ = std::make_unique<PgTestSchema>("t");  // the fixture's schema is at the newest version
    pqxx::connection conn(pg_->url());
    pqxx::work tx(conn);
    tx.exec(kPgCreateMigrations);
    for (const Migration& m : EmbeddedMigrations(SqlDialect::kPostgres)) {
      if (m.version > 19) break;
      tx.exec(m.sql);
      tx.exec_params(kPgRecordMigration, m.version, m.name);
    }
    tx.exec(kOldQuarantine);
    tx.commit();
#endif
  }
  ASSERT_OK_AND_ASSIGN(migrated, OpenStore());  // applies 0020
  store_ = std::move(migrated);
  ASSERT_OK_AND_ASSIGN(current, store_->ListQuarantines(false, 100));
  ASSERT_EQ(current.size(), 1u);
  EXPECT_EQ(current[0].host, "h1");
  EXPECT_EQ(current[0].since_ms, 1000);
  EXPECT_EQ(current[0].suspect_since_ms, 0);
  ASSERT_OK_AND_ASSIGN(of_device, store_->CanaryQuarantinesOf("h1", 2));
  ASSERT_EQ(of_device.size(), 1u);
  EXPECT_EQ(of_device[0].suspect_since_ms, 0);
  ASSERT_OK_AND_ASSIGN(canaries, store_->ListCanaries(Every()));
  EXPECT_TRUE(canaries.empty());
  EXPECT_TRUE(store_->InsertCanary(Scheduled("h1", 2, 480)).ok());
}

}  // namespace
}  // namespace npuperf::server
