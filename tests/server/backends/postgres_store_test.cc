// PostgresStore beyond the conformance suite: the queue counts of migration
// 0003 (collection_queue, kept by a trigger, and once per statement for bulk
// writes since 0008) stay exact through every kind of job change, survive an upgrade from version
// 2, and hold the concurrency cap when claims race on two replicas; the listener and deadlines
// follow the store's Clock. Runs when NPUPERF_TEST_PG_URL is set (deploy/with-postgres.sh); each
// test in a schema of its own.
#include <atomic>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/backends/factory.h"
#include "server/backends/postgres/statements.h"
#include "server/core/constants.h"
#include "server/core/scheduler.h"
#include "server/service/agent_service.h"
#include "server/store/db_deadline.h"
#include "server/store/migrator.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/pg_schema.h"
#include "tests/server/store/store_builders.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>

#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#endif

namespace npuperf::server {
namespace {

// Real time for what waits on a real PostgreSQL (listeners, notifications).
RealClock& Wall() {
  static RealClock clock;
  return clock;
}

#if NPUPERF_WITH_POSTGRES

// (queued, live, first job) per collection.
using Counts = std::map<std::string, std::tuple<int, int, int64_t>>;

// The registration of host h1's agent with one Ascend910B2 device, 0.
v1::RegisterAgentRequest OneDeviceAgent() {
  v1::RegisterAgentRequest reg;
  reg.set_host("h1");
  reg.set_boot_id("boot");
  reg.set_instance_id("i1");
  auto* dev = reg.add_devices();
  dev->set_device_id(0);
  dev->set_soc("Ascend910B2");
  return reg;
}

// Another transaction holds the rows `lock_sql` (a SELECT ... FOR UPDATE) locks, until
// Release(), or for 20 s at most should the code under test wait for good after all.
class HeldRowLock {
 public:
  HeldRowLock(const std::string& url, const std::string& lock_sql) : conn_(url), holder_(conn_) {
    holder_.exec(lock_sql);
    release_ = std::thread([this] {
      for (int i = 0; i < 200 && !answered_.load(); ++i)
        Wall().SleepFor(std::chrono::milliseconds(100));
      let_go_ = !answered_.load();
      holder_.abort();
    });
  }
  ~HeldRowLock() { Release(); }

  // The code under test answered: the lock goes. True when it had gone already, after 20 s.
  bool Release() {
    answered_ = true;
    if (release_.joinable()) release_.join();
    return let_go_.load();
  }

 private:
  pqxx::connection conn_;
  pqxx::work holder_;
  std::atomic<bool> answered_{false};
  std::atomic<bool> let_go_{false};
  std::thread release_;
};

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PgTestSchema::BaseUrl().empty()) GTEST_SKIP() << "NPUPERF_TEST_PG_URL is not set";
    pg_ = std::make_unique<PgTestSchema>("p");
  }

  std::unique_ptr<Store> Open() {
    auto s = PostgresStore::Open(pg_->url(), clock_, 4);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  Counts Query(const std::string& sql) {
    pqxx::connection conn(pg_->url());
    pqxx::work tx(conn);
    Counts out;
    for (const auto& row : tx.exec(sql)) {
      out[row[0].as<std::string>()] = {row[1].as<int>(), row[2].as<int>(), row[3].as<int64_t>()};
    }
    return out;
  }
  // What the trigger keeps, and the same counted from the jobs themselves.
  Counts Kept() {
    return Query("SELECT collection_id, queued, live, first_job FROM collection_queue");
  }
  Counts Recounted() {
    return Query(
        "SELECT collection_id, COUNT(*) FILTER (WHERE state = 1), COUNT(*) FILTER (WHERE state IN "
        "(2, 3)), MIN(id) FROM jobs GROUP BY collection_id HAVING COUNT(*) FILTER (WHERE state IN "
        "(1, 2, 3)) > 0");
  }
  // The connections LISTENing for a store opened with application_name=app.
  size_t Listeners(const std::string& app) {
    pqxx::connection admin(pg_->url());
    pqxx::nontransaction tx(admin);
    return tx
        .exec_params(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND "
            "query ILIKE 'LISTEN%'",
            app)
        .size();
  }
  // Kills them (a database restart, a failover, an idle-session reaper).
  void KillListeners(const std::string& app) {
    pqxx::connection admin(pg_->url());
    pqxx::nontransaction tx(admin);
    tx.exec_params(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
        "application_name = $1 AND query ILIKE 'LISTEN%'",
        app);
  }
  int Live(const std::string& collection) {
    auto counted = Recounted();
    auto it = counted.find(collection);
    return it == counted.end() ? 0 : std::get<1>(it->second);
  }

  // Brings a fresh schema to `version` as the migrator of that version did,
  // for tests of what a later migration makes of the data stored then.
  static void MigrateTo(pqxx::work& tx, int version) {
    tx.exec(kPgCreateMigrations);
    for (const Migration& m : EmbeddedMigrations(SqlDialect::kPostgres)) {
      if (m.version > version) break;
      tx.exec(m.sql);
      tx.exec_params(kPgRecordMigration, m.version, m.name);
    }
  }

  // Runs one write of the test's own (a row no store path would leave) and
  // commits it.
  void ExecSql(const std::string& sql) {
    pqxx::connection conn(pg_->url());
    pqxx::work tx(conn);
    tx.exec(sql);
    tx.commit();
  }

  // A refused result left nothing: no round, and the job in `state`.
  void ExpectNoRoundAndJobIn(int64_t job_id, v1::JobState state) {
    pqxx::connection conn(pg_->url());
    pqxx::nontransaction tx(conn);
    EXPECT_EQ(tx.exec("SELECT count(*) FROM rounds")[0][0].as<int>(), 0);
    EXPECT_EQ(
        tx.exec("SELECT state FROM jobs WHERE id = " + std::to_string(job_id))[0][0].as<int>(),
        static_cast<int>(state));
  }

  // Waits (up to 5 s) until n npuperf_result calls wait for a lock; the
  // number seen last.
  int AwaitOneCallResultsWaiting(int n) {
    pqxx::connection watch(pg_->url());
    int waiting = 0;
    for (int i = 0; i < 500 && waiting < n; ++i) {
      pqxx::nontransaction tx(watch);
      waiting = tx.exec(
                      "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                      "query LIKE '%npuperf_result%'")[0][0]
                    .as<int>();
      if (waiting < n) Wall().SleepFor(std::chrono::milliseconds(10));
    }
    return waiting;
  }

  RealClock clock_;  // the stores': retry backoff, deadlines, listener reconnects
  std::unique_ptr<PgTestSchema> pg_;
};

TEST_F(PostgresStoreTest, QueueCountsStayExactThroughEveryJobChange) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 4, 0, 8, /*retry=*/2)).ok());
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c2", "beta", 3)).ok());
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c3", "beta", 2)).ok());
  EXPECT_EQ(Kept(), Recounted());
  EXPECT_EQ(std::get<0>(Kept()["c1"]), 4);

  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);  // c1: leased
  auto b = *store->ClaimJob(Req("a1", {1}), ChooseClaim);  // fair share: beta's c2
  auto c = *store->ClaimJob(Req("a1", {2}), ChooseClaim);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(Kept(), Recounted());
  // Progress (LEASED -> RUNNING) moves nothing between queued and live.
  ASSERT_TRUE(store->RecordProgress("a1", Ref(*a), v1::JobProgress(), 2100, kTtl).ok());
  EXPECT_EQ(Kept(), Recounted());
  // A retryable failure queues the job again; a success finishes it.
  ASSERT_TRUE(store->RecordResult(Result(*a, "fa", v1::ATTEMPT_OUTCOME_FAILED, 2200)).ok());
  ASSERT_TRUE(store->RecordResult(Result(*b, "sb", v1::ATTEMPT_OUTCOME_SUCCEEDED, 2200)).ok());
  EXPECT_EQ(Kept(), Recounted());
  // An expired lease is requeued; cancelling c2 ends its queued jobs.
  ASSERT_TRUE(store->ExpireLeases(2000 + kTtl + 1, 3).ok());
  ASSERT_TRUE(store->CancelCollection("", "c2", "stop", 2300).ok());
  EXPECT_EQ(Kept(), Recounted());
  EXPECT_FALSE(Kept().contains("c2"))
      << "a collection with nothing queued or live leaves the queue";
  // Draining everything empties the queue table.
  for (int i = 0; i < 10; ++i) {
    auto got = store->ClaimJob(Req("a2", {0}, 30'000 + i), ChooseClaim);
    ASSERT_TRUE(got.ok()) << got.status();
    if (!got->has_value()) break;
    ASSERT_TRUE(store
                    ->RecordResult(Result(**got, absl::StrCat("s", i),
                                          v1::ATTEMPT_OUTCOME_SUCCEEDED, 30'000 + i, 12.5, "a2"))
                    .ok());
    EXPECT_EQ(Kept(), Recounted());
  }
  EXPECT_TRUE(Kept().empty());
}

// Inserts and cancellations of many jobs count once per statement (migration
// 0008), with the same counts the row trigger keeps: a big collection, one of
// its jobs leased, then cancelled while a small one stays queued.
TEST_F(PostgresStoreTest, BulkInsertAndCancelKeepTheSameCounts) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("small", "beta", 2)).ok());
  ASSERT_TRUE(store->InsertCollection(MakeCollection("big", "alpha", 3000)).ok());
  EXPECT_EQ(Kept(), Recounted());
  EXPECT_EQ(std::get<0>(Kept()["big"]), 3000);
  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);
  auto b = *store->ClaimJob(Req("a1", {1}), ChooseClaim);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(store->CancelCollection("", "big", "stop", 2300).ok());
  EXPECT_EQ(Kept(), Recounted());
  const bool big_leased = a->collection_id() == "big" || b->collection_id() == "big";
  EXPECT_EQ(Kept().contains("big"), big_leased) << "only its leased job keeps it in the queue";
  EXPECT_EQ(std::get<0>(Kept()["small"]), big_leased ? 1 : 0);
  // The bulk setting ended with its transaction: a claim still counts per row.
  auto c = *store->ClaimJob(Req("a1", {2}, 2400), ChooseClaim);
  EXPECT_EQ(Kept(), Recounted());
  (void)c;
}

// A database at version 2 with queued and leased jobs gets exact counts from
// migration 0003, and claims then respect the cap the leased jobs already use.
TEST_F(PostgresStoreTest, UpgradeFromVersion2CountsExistingJobs) {
  {
    pqxx::connection conn(pg_->url());
    pqxx::work tx(conn);
    MigrateTo(tx, 2);
    // As version 2 stored them: c1 (cap 2) with one leased and two queued
    // jobs, c2 finished.
    for (const char* c : {"c1", "c2"}) {
      NewCollection n = MakeCollection(c, "alpha", 0, 0, 2);
      tx.exec_params(
          "INSERT INTO collections (id, team, spec, state, priority, max_concurrent, "
          "created_ms) VALUES ($1, 'alpha', $2, 1, 0, 2, 1000)",
          c, pqxx::binarystring(n.spec.SerializeAsString()));
    }
    tx.exec(
        "INSERT INTO jobs (collection_id, team, priority, operator_name, case_id, op_name, "
        "state, max_attempts, queued_ms, agent_id, device_id) VALUES "
        "('c1', 'alpha', 0, 'op_a', 'case0', 'OpA', 2, 1, 1000, 'old', 0), "
        "('c1', 'alpha', 0, 'op_a', 'case1', 'OpA', 1, 1, 1000, NULL, NULL), "
        "('c1', 'alpha', 0, 'op_a', 'case2', 'OpA', 1, 1, 1000, NULL, NULL), "
        "('c2', 'alpha', 0, 'op_a', 'case0', 'OpA', 4, 1, 1000, NULL, NULL)");
    tx.commit();
  }
  auto store = Open();  // migrates to the newest version
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Kept(), Recounted());
  EXPECT_EQ(std::get<0>(Kept()["c1"]), 2);
  EXPECT_EQ(std::get<1>(Kept()["c1"]), 1);
  EXPECT_FALSE(Kept().contains("c2"));
  EXPECT_TRUE(*store->ClaimJob(Req("a1", {0, 1}), ChooseClaim));
  EXPECT_FALSE(*store->ClaimJob(Req("a1", {0, 1}), ChooseClaim)) << "c1 is at its cap of 2";
  EXPECT_EQ(Live("c1"), 2);
}

// The jobs by state, as CountByState gives them, and the same counted from
// the jobs themselves.
std::map<v1::JobState, int64_t> JobCounts(Store& store) {
  std::map<v1::JobState, int64_t> out;
  for (const auto& [state, n] : store.CountByState().value_or(StateCounts()).jobs) {
    if (n != 0) out[state] = n;
  }
  return out;
}

// Collections stored finished before migration 0027 (or by a replica of an
// older version during an upgrade) are not marked counted: the first
// refresh after it counts their jobs once, in batches, beside a collection
// still live.
TEST_F(PostgresStoreTest, UpgradeTo27CountsTheJobsOfCollectionsFinishedBeforeOnce) {
  {
    pqxx::connection conn(pg_->url());
    pqxx::work tx(conn);
    MigrateTo(tx, 26);
    for (int i = 0; i < 3; ++i) {
      NewCollection n = MakeCollection(absl::StrCat("c", i), "alpha", 0);
      tx.exec_params(
          "INSERT INTO collections (id, team, spec, state, priority, max_concurrent, created_ms) "
          "VALUES ($1, 'alpha', $2, $3, 0, 2, 1000)",
          n.id, pqxx::binarystring(n.spec.SerializeAsString()), i == 2 ? 1 : 3 + i);
    }
    tx.exec(
        "INSERT INTO jobs (collection_id, team, priority, operator_name, case_id, op_name, state, "
        "max_attempts, queued_ms) VALUES ('c0', 'alpha', 0, 'op', 'a', 'Op', 4, 1, 1000), ('c0', "
        "'alpha', 0, 'op', 'b', 'Op', 5, 1, 1000), ('c1', 'alpha', 0, 'op', 'a', 'Op', 5, 1, "
        "1000), ('c2', 'alpha', 0, 'op', 'a', 'Op', 1, 1, 1000)");
    // More than one batch of count_newly_finished: 2,500 cancelled ones.
    tx.exec(
        "INSERT INTO collections (id, team, spec, state, priority, max_concurrent, created_ms) "
        "SELECT 'b' || g, 'alpha', '\\x', 5, 0, 2, 1000 FROM generate_series(1, 2500) g");
    tx.exec(
        "INSERT INTO jobs (collection_id, team, priority, operator_name, case_id, op_name, state, "
        "max_attempts, queued_ms) SELECT 'b' || g, 'alpha', 0, 'op', 'a', 'Op', 6, 1, 1000 FROM "
        "generate_series(1, 2500) g");
    tx.commit();
  }
  auto store = Open();  // migrates to the newest version
  ASSERT_NE(store, nullptr);
  const std::map<v1::JobState, int64_t> want = {{v1::JOB_STATE_QUEUED, 1},
                                                {v1::JOB_STATE_SUCCEEDED, 1},
                                                {v1::JOB_STATE_FAILED, 2},
                                                {v1::JOB_STATE_CANCELLED, 2500}};
  EXPECT_EQ(JobCounts(*store), want);
  EXPECT_EQ(JobCounts(*store), want) << "counted once";
  EXPECT_EQ(Query("SELECT id, 0, 0, 0 FROM collections WHERE state IN (3, 4, 5) AND NOT "
                  "jobs_counted")
                .size(),
            0u);
  auto other = Open();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(JobCounts(*other), want) << "a second replica";
}

// Replicas refreshing at the same time count each finished collection once:
// a collection another replica is counting (its row locked) is skipped and
// counted live, so the counts stay exact while it waits, and it is counted
// once the lock is gone; eight refreshes at once on two replicas agree.
TEST_F(PostgresStoreTest, ReplicasRefreshingTogetherCountEachFinishedCollectionOnce) {
  auto a = Open();
  auto b = Open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const auto finish = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string id = absl::StrCat("f", i);
      ASSERT_TRUE(a->InsertCollection(MakeCollection(id, "team", 2)).ok());
      ASSERT_TRUE(a->CancelCollection("team", id, "done", 1500).ok()) << id;
    }
  };
  const auto uncounted = [&] {
    return std::get<0>(
        Query("SELECT 'n', COUNT(*)::integer, 0, 0 FROM collections WHERE state IN "
              "(3, 4, 5) AND NOT jobs_counted")["n"]);
  };
  finish(0, 100);
  {
    // What another replica's refresh holds while it counts: 50 of them.
    pqxx::connection conn(pg_->url());
    pqxx::work holder(conn);
    holder.exec("SELECT id FROM collections ORDER BY id LIMIT 50 FOR UPDATE");
    EXPECT_EQ(JobCounts(*a), (std::map<v1::JobState, int64_t>{{v1::JOB_STATE_CANCELLED, 200}}));
    EXPECT_EQ(uncounted(), 50) << "the held ones are skipped";
  }  // rolled back: the locks go
  EXPECT_EQ(JobCounts(*b), (std::map<v1::JobState, int64_t>{{v1::JOB_STATE_CANCELLED, 200}}));
  EXPECT_EQ(uncounted(), 0);
  finish(100, 300);
  std::vector<std::map<v1::JobState, int64_t>> seen(8);
  std::vector<std::thread> refreshes;
  for (int t = 0; t < 8; ++t) {
    refreshes.emplace_back([&, t] { seen[t] = JobCounts(t % 2 == 0 ? *a : *b); });
  }
  for (auto& t : refreshes) t.join();
  const std::map<v1::JobState, int64_t> want = {{v1::JOB_STATE_CANCELLED, 600}};
  for (int t = 0; t < 8; ++t) EXPECT_EQ(seen[t], want) << "refresh " << t;
  EXPECT_EQ(JobCounts(*a), want);
  EXPECT_EQ(JobCounts(*b), want);
  EXPECT_EQ(uncounted(), 0);
}

// Migration 0023 moves every figure of round_metrics into its round's
// figures, bit for bit: the shortest double above 0.3, the smallest
// subnormal, the most negative finite double, and a NaN stored before 0005
// refused them (in a round whose duration is NaN too: the copy must not trip
// over 0005's constraint). A round without figures has none after.
TEST_F(PostgresStoreTest, UpgradeTo23MovesEveryFigureIntoItsRoundExactly) {
  {
    pqxx::connection conn(pg_->url());
    pqxx::work tx(conn);
    MigrateTo(tx, 4);
    NewCollection n = MakeCollection("c1", "alpha", 0);
    tx.exec_params(
        "INSERT INTO collections (id, team, spec, state, priority, max_concurrent, created_ms) "
        "VALUES ('c1', 'alpha', $1, 3, 0, 2, 1000)",
        pqxx::binarystring(n.spec.SerializeAsString()));
    tx.exec(
        "INSERT INTO jobs (collection_id, team, priority, operator_name, case_id, op_name, "
        "state, max_attempts, queued_ms) VALUES ('c1', 'alpha', 0, 'op_a', 'case0', 'OpA', 4, 1, "
        "1000), ('c1', 'alpha', 0, 'op_a', 'case1', 'OpA', 4, 1, 1000)");
    tx.exec(
        "INSERT INTO rounds (collection_id, job_id, attempt, team, operator_name, case_id, "
        "kernel_time_us, bound_label, evidence, created_ms) SELECT 'c1', id, 1, 'alpha', 'op_a', "
        "case_id, CASE case_id WHEN 'case0' THEN 'NaN'::float8 ELSE 2.5 END, 'MTE2', '\\x', "
        "1000 + id FROM jobs ORDER BY id");
    tx.exec(
        "INSERT INTO round_metrics (round_id, name, value) SELECT r.id, f.name, f.value::float8 "
        "FROM rounds r, (VALUES ('sum', '0.30000000000000004'), ('tiny', '5e-324'), "
        "('low', '-1.7976931348623157e308'), ('nan', 'NaN')) f (name, value) WHERE r.case_id = "
        "'case0'");
    tx.commit();
  }
  auto store = Open();  // migrates to the newest version
  ASSERT_NE(store, nullptr);
  auto figure = [&](const std::string& name) -> std::vector<double> {
    RoundFilter f;
    f.team = "alpha";
    f.metric = name;
    auto page = store->ListRounds(f);
    EXPECT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(page.ok() ? page->rounds.size() : 0u, 2u);
    std::vector<double> values;
    if (page.ok()) {
      for (const auto& p : page->series) values.push_back(p.value());
    }
    return values;
  };
  EXPECT_EQ(figure("sum"), std::vector<double>{0.1 + 0.2});
  EXPECT_EQ(figure("tiny"), std::vector<double>{std::numeric_limits<double>::denorm_min()});
  EXPECT_EQ(figure("low"), std::vector<double>{-std::numeric_limits<double>::max()});
  const std::vector<double> nan = figure("nan");
  ASSERT_EQ(nan.size(), 1u) << "case1 has no figures; case0's NaN survives";
  EXPECT_TRUE(std::isnan(nan[0]));
  EXPECT_TRUE(figure("absent").empty());
  pqxx::connection conn(pg_->url());
  pqxx::nontransaction tx(conn);
  EXPECT_EQ(tx.exec("SELECT figures FROM rounds WHERE case_id = 'case1'")[0][0].as<std::string>(),
            "{}");
  EXPECT_TRUE(tx.exec("SELECT to_regclass('round_metrics') IS NULL")[0][0].as<bool>());
  // Both constraints hold for what is written from now on: figures are an
  // object of numbers (not an array of them, not null), durations finite.
  for (const char* bad :
       {R"({"a": [1]})", R"({"a": []})", R"({"a": null})", R"({"a": "1"})", "[1]"}) {
    EXPECT_THROW(tx.exec_params("UPDATE rounds SET figures = $1::jsonb WHERE case_id = 'case1'",
                                std::string(bad)),
                 pqxx::check_violation)
        << bad;
  }
  EXPECT_THROW(tx.exec("UPDATE rounds SET kernel_time_us = 'Infinity' WHERE case_id = 'case1'"),
               pqxx::check_violation);
}

// Migration 0024: a round's evidence and figures are compressed with lz4, not
// pglz (most of the round's insert). Skipped on a PostgreSQL without lz4,
// where the migration leaves pglz.
TEST_F(PostgresStoreTest, ARoundsEvidenceIsCompressedWithLz4) {
  {
    pqxx::connection conn(pg_->url());
    pqxx::nontransaction tx(conn);
    try {
      tx.exec("SET default_toast_compression = lz4");
    } catch (const pqxx::sql_error&) {
      GTEST_SKIP() << "this PostgreSQL has no lz4";
    }
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 1)).ok());
  auto a = store->ClaimJob(Req("a1", {0}), ChooseClaim);
  ASSERT_TRUE(a.ok() && *a) << a.status();
  AttemptResult r = Result(**a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  std::string json = "[";
  for (int i = 0; i < 2000; ++i) absl::StrAppend(&json, i ? "," : "", "{\"core\": ", i % 24, "}");
  r.evidence.set_evidence_json(json + "]");  // about 24 KB: stored compressed
  for (int i = 0; i < 300; ++i) r.metrics.emplace_back(absl::StrCat("Memory.figure_", i), i / 7.0);
  ASSERT_TRUE(store->RecordResult(r).ok());
  pqxx::connection conn(pg_->url());
  pqxx::nontransaction tx(conn);
  auto row = tx.exec(
      "SELECT pg_column_compression(evidence), pg_column_compression(figures) FROM rounds")[0];
  EXPECT_EQ(row[0].as<std::string>(""), "lz4");
  EXPECT_EQ(row[1].as<std::string>(""), "lz4");
  // The columns', not the server's default_toast_compression.
  EXPECT_EQ(
      tx.exec("SELECT string_agg(attname || '=' || attcompression::text, ',' ORDER BY attname) "
              "FROM pg_attribute WHERE attrelid = 'rounds'::regclass AND attname IN "
              "('evidence', 'figures')")[0][0]
          .as<std::string>(),
      "evidence=l,figures=l");
}

// npuperf_claim has one definition (migrations/postgres/definitions/), run
// after the migrations on every open: a database that version 3 left with the
// first, nine-argument claim ends with exactly the current one (the old
// signature dropped, so no caller can lease without a secret), and opening
// it again changes nothing.
TEST_F(PostgresStoreTest, TheClaimFunctionHasOneDefinitionWhateverVersionTheDatabaseHad) {
  {
    pqxx::connection conn(pg_->url());
    pqxx::work tx(conn);
    MigrateTo(tx, 3);
    // What version 3 defined (its signature; the body does not matter here).
    tx.exec(
        "CREATE FUNCTION npuperf_claim(p_collection text, p_skip_locked boolean, p_agent text, "
        "p_host text, p_device integer, p_soc text, p_expires_ms bigint, p_now_ms bigint, "
        "p_running_state integer) RETURNS integer LANGUAGE sql AS 'SELECT 1'");
    tx.commit();
  }
  const auto claim_signatures = [this] {
    pqxx::connection conn(pg_->url());
    pqxx::nontransaction tx(conn);
    std::vector<int> args;
    for (const auto& row :
         tx.exec("SELECT pronargs FROM pg_proc WHERE proname = 'npuperf_claim' ORDER BY 1")) {
      args.push_back(row[0].as<int>());
    }
    return args;
  };
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(claim_signatures(), std::vector<int>({10}));
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 1)).ok());
  EXPECT_TRUE(*store->ClaimJob(Req("a1", {0}), ChooseClaim));
  auto again = Open();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(claim_signatures(), std::vector<int>({10}));
}

// A claim of one job tries the chooser's picks in turn until one leases,
// several in one statement (npuperf_claim_first): with a chooser that
// ignores caps, six collections at their cap of 1 come first (more picks
// than one statement sends), then one below it, which leases. When every
// pick fails, nothing is leased.
TEST_F(PostgresStoreTest, AClaimOfOneJobTriesTheChoosersPicksInTurnUntilOneLeases) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(
        store->InsertCollection(MakeCollection(absl::StrCat("c", i), "alpha", 2, 0, /*cap=*/1))
            .ok());
  }
  for (int i = 0; i < 6; ++i) {  // the queue's order: c0 .. c5, one live job each
    auto a = store->ClaimJob(Req("a1", {i}), ChooseClaim);
    ASSERT_TRUE(a.ok() && a->has_value()) << i;
    EXPECT_EQ((*a)->collection_id(), absl::StrCat("c", i));
  }
  const ClaimChooser ignores_caps =
      [](const std::vector<ClaimCandidate>& candidates, const std::vector<OfferedDevice>& devices,
         const std::map<std::string, std::string>&) -> std::optional<std::pair<size_t, size_t>> {
    if (candidates.empty() || devices.empty()) return std::nullopt;
    return std::make_pair(size_t{0}, size_t{0});
  };
  auto seventh = store->ClaimJob(Req("a1", {6}), ignores_caps);
  ASSERT_TRUE(seventh.ok() && seventh->has_value()) << seventh.status();
  EXPECT_EQ((*seventh)->collection_id(), "c6");
  auto none = store->ClaimJob(Req("a1", {7}), ignores_caps);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value()) << "every collection is at its cap";
  for (int i = 0; i < 7; ++i) EXPECT_EQ(Live(absl::StrCat("c", i)), 1) << i;
}

// A replica counts its claims in flight as live jobs (ClaimsInFlight, issue
// 36): a second claim does not queue on the collection a first one is
// leasing from when that fills its cap, it takes the next one. Here the
// first claim waits on c0's row lock (held by another transaction) and the
// second, on the same replica, leases from c1 meanwhile.
TEST_F(PostgresStoreTest, AConcurrentClaimPassesOverTheCollectionAClaimInFlightFills) {
  const std::string app = "claims-in-flight";  // its claims alone are watched below
  auto opened = PostgresStore::Open(pg_->url() + "&application_name=" + app, clock_, 4);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<Store> store = std::move(*opened);
  for (const char* id : {"c0", "c1"}) {
    ASSERT_TRUE(store->InsertCollection(MakeCollection(id, "alpha", 2, 0, /*cap=*/1)).ok());
  }
  HeldRowLock c0(pg_->url(), "SELECT 1 FROM collections WHERE id = 'c0' FOR UPDATE");
  auto first =
      std::async(std::launch::async, [&] { return store->ClaimJob(Req("a1", {0}), ChooseClaim); });
  {
    pqxx::connection watch(pg_->url());
    int waiting = 0;
    for (int i = 0; i < 500 && waiting == 0; ++i) {
      pqxx::nontransaction tx(watch);
      waiting = tx.exec_params(
                      "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                      "application_name = $1 AND query LIKE '%npuperf_claim_first%'",
                      app)[0][0]
                    .as<int>();
      if (waiting == 0) Wall().SleepFor(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(waiting, 1) << "the first claim waits for c0";
  }
  auto second = store->ClaimJob(Req("a2", {1}), ChooseClaim);
  EXPECT_FALSE(c0.Release()) << "the second claim waited for c0 too";
  ASSERT_TRUE(second.ok() && second->has_value()) << second.status();
  EXPECT_EQ((*second)->collection_id(), "c1");
  auto leased = first.get();
  ASSERT_TRUE(leased.ok() && leased->has_value()) << leased.status();
  EXPECT_EQ((*leased)->collection_id(), "c0");
  EXPECT_EQ(Live("c0"), 1);
  EXPECT_EQ(Live("c1"), 1);
}

// npuperf_result applies a common success in one call (issue 36): it must
// leave every row the general path leaves. The first of two jobs takes the
// one call, the collection's last the general path; their rows differ only
// in ids and times.
TEST_F(PostgresStoreTest, ASuccessInOneCallLeavesTheRowsOfTheGeneralPath) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 2)).ok());
  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);
  auto b = *store->ClaimJob(Req("a1", {1}, 2100), ChooseClaim);
  ASSERT_TRUE(a && b);
  auto one = store->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5000));
  auto general = store->RecordResult(Result(*b, "u-b", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5100));
  ASSERT_TRUE(one.ok() && general.ok()) << one.status() << general.status();
  pqxx::connection conn(pg_->url());
  pqxx::nontransaction tx(conn);
  // What one job's result left, with its own round, times and ids named.
  const auto rows = [&](int64_t job, int64_t round, int64_t now, int64_t leased) {
    const std::string j = std::to_string(job);
    const std::string r = std::to_string(round);
    auto q = [&](const std::string& sql) {
      std::string out;
      for (const auto& row : tx.exec(sql)) {
        for (const auto& field : row) absl::StrAppend(&out, field.c_str(), "|");
        out += "\n";
      }
      return out;
    };
    std::string all = q("SELECT state, reason, round_id = " + r +
                        ", kernel_time_us, bound_label, "
                        "lease_expires_ms IS NULL, finished_ms = " +
                        std::to_string(now) + ", run_ms = " + std::to_string(now - leased) +
                        ", lost_count, progress IS NULL FROM jobs WHERE id = " + j);
    all += q("SELECT attempt, fencing_token, round_id = " + r +
             ", applied_ms = " + std::to_string(now) + " FROM result_updates WHERE job_id = " + j);
    all += q("SELECT collection_id, detail, at_ms = " + std::to_string(now) +
             " FROM events WHERE kind = 'job_result' AND job_id = " + j);
    all += q("SELECT collection_id, job_id = " + j +
             ", team, operator_name, kernel_time_us, "
             "bound_label, created_ms = " +
             std::to_string(now) +
             ", figures::text, "
             "length(evidence) > 0 FROM rounds WHERE id = " +
             r);
    return all;
  };
  const std::string by_one_call = rows(a->job_id(), one->round_id, 5000, 2000);
  EXPECT_EQ(by_one_call, rows(b->job_id(), general->round_id, 5100, 2100));
  EXPECT_TRUE(absl::StrContains(by_one_call, "c1|succeeded |t|")) << by_one_call;
  EXPECT_EQ(tx.exec("SELECT count(*) FROM rounds")[0][0].as<int>(), 2);
  EXPECT_EQ(tx.exec("SELECT state FROM collections WHERE id = 'c1'")[0][0].as<int>(),
            static_cast<int>(v1::COLLECTION_STATE_SUCCEEDED));
}

// The one-call path reads, without a lock, whether its job is the last of
// the collection, and again under the collection's lock: two last results
// that both passed the first read (both saw two live jobs) are serialized by
// the lock, and the second, seeing the first's finish, leaves it to the
// general path, which ends the collection.
TEST_F(PostgresStoreTest, TwoLastResultsThatRaceEndTheirCollection) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 2)).ok());
  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);
  auto b = *store->ClaimJob(Req("a1", {1}, 2100), ChooseClaim);
  ASSERT_TRUE(a && b);
  pqxx::connection conn(pg_->url());
  pqxx::work holder(conn);
  holder.exec("SELECT id FROM collections WHERE id = 'c1' FOR UPDATE");
  auto ra = std::async(std::launch::async, [&] {
    return store->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5000));
  });
  auto rb = std::async(std::launch::async, [&] {
    return store->RecordResult(Result(*b, "u-b", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5000));
  });
  // Both wait for the collection's lock, past their first read.
  EXPECT_EQ(AwaitOneCallResultsWaiting(2), 2);
  holder.abort();
  auto got_a = ra.get();
  auto got_b = rb.get();
  ASSERT_TRUE(got_a.ok() && got_b.ok()) << got_a.status() << got_b.status();
  EXPECT_GT(got_a->round_id, 0);
  EXPECT_GT(got_b->round_id, 0);
  auto c = store->GetCollection("", "c1");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->state(), v1::COLLECTION_STATE_SUCCEEDED);
}

// The one-call path stores its round before it takes the locks; a lease that
// expires in between (ExpireLeases does not change the token: the next claim
// does) is seen under the locks, and the result is refused with no round left.
TEST_F(PostgresStoreTest, AResultWhoseLeaseExpiresWhileItWaitsForTheLockIsRefused) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 3)).ok());
  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);
  ASSERT_TRUE(a);
  pqxx::connection conn(pg_->url());
  pqxx::work holder(conn);
  holder.exec("SELECT id FROM collections WHERE id = 'c1' FOR UPDATE");
  auto result = std::async(std::launch::async, [&] {
    return store->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5000));
  });
  ASSERT_EQ(AwaitOneCallResultsWaiting(1), 1);
  // What ExpireLeases writes for a lease it takes back, under the collection's lock.
  holder.exec(
      "UPDATE jobs SET state = 1, lease_expires_ms = NULL, lost_count = lost_count + 1 "
      "WHERE id = " +
      std::to_string(a->job_id()));
  holder.commit();
  auto got = result.get();
  EXPECT_TRUE(absl::IsFailedPrecondition(got.status())) << got.status();
  ExpectNoRoundAndJobIn(a->job_id(), v1::JOB_STATE_QUEUED);
}

// The one call's checks are NULL-safe: a live job stored without a holder
// (no path writes one; a damaged or hand-edited row) is refused, not
// finished, and keeps no round.
TEST_F(PostgresStoreTest, ALiveJobWithoutAHolderIsRefusedByTheOneCall) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 3)).ok());
  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);
  ASSERT_TRUE(a);
  ExecSql("UPDATE jobs SET agent_id = NULL WHERE id = " + std::to_string(a->job_id()));
  auto got = store->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5000));
  EXPECT_TRUE(absl::IsPermissionDenied(got.status())) << got.status();
  ExpectNoRoundAndJobIn(a->job_id(), v1::JOB_STATE_LEASED);
}

// A collection not stored as RUNNING (left so by an older server) is never
// kept as it is by the one-call path: its result takes the general path,
// which recounts it.
TEST_F(PostgresStoreTest, AResultOfACollectionNotStoredRunningRecountsIt) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 3)).ok());
  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);
  ASSERT_TRUE(a);
  ExecSql("UPDATE collections SET state = " +
          std::to_string(static_cast<int>(v1::COLLECTION_STATE_QUEUED)) + " WHERE id = 'c1'");
  auto got = store->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5000));
  ASSERT_TRUE(got.ok()) << got.status();
  auto c = store->GetCollection("", "c1");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->state(), v1::COLLECTION_STATE_RUNNING);
}

// Eight threads on two replicas race to claim from collections with small
// caps; nobody reports, so every collection ends at exactly its cap (or its
// size), whatever the interleaving. Then results free the slots and the race
// runs again until everything is done.
TEST_F(PostgresStoreTest, CapHoldsWhenClaimsRaceOnTwoReplicas) {
  auto first = Open();
  auto second = Open();
  ASSERT_TRUE(first && second);
  Store* replicas[2] = {first.get(), second.get()};
  const std::map<std::string, int> caps = {{"c0", 1}, {"c1", 2}, {"c2", 3}};
  for (const auto& [id, cap] : caps) {
    ASSERT_TRUE(
        first->InsertCollection(MakeCollection(id, id == "c0" ? "alpha" : "beta", 6, 0, cap)).ok());
  }
  std::map<std::string, int> done;
  for (int wave = 0; wave < 20; ++wave) {
    absl::Mutex mu;
    std::vector<std::pair<v1::JobAssignment, std::string>> leased;  // with the agent id
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 4; ++i) {
          // One agent per (wave, thread): every device is free.
          const std::string agent = absl::StrCat("a", wave, "-", t);
          auto got = replicas[t % 2]->ClaimJob(Req(agent, {0, 1, 2, 3}, 2000 + wave), ChooseClaim);
          if (got.ok() && got->has_value()) {
            absl::MutexLock lock(&mu);
            leased.emplace_back(**got, agent);
          } else if (!got.ok() && !absl::IsAborted(got.status())) {
            ADD_FAILURE() << got.status();
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    if (leased.empty()) break;
    for (const auto& [id, cap] : caps) {
      EXPECT_EQ(Live(id), std::min(cap, 6 - done[id])) << id << " in wave " << wave;
    }
    EXPECT_EQ(Kept(), Recounted());
    for (const auto& [a, agent] : leased) {
      ASSERT_TRUE(
          first
              ->RecordResult(Result(a, absl::StrCat("u", a.job_id()), v1::ATTEMPT_OUTCOME_SUCCEEDED,
                                    3000 + wave, 12.5, agent))
              .ok());
      ++done[a.collection_id()];
    }
  }
  for (const auto& [id, cap] : caps) EXPECT_EQ(done[id], 6) << id;
  EXPECT_TRUE(Kept().empty());
}

// The LISTEN connection of a replica is killed (a database restart, a
// failover, an idle-session reaper): the listener reconnects, wakes its
// waiters once for whatever it missed, and hears the next notification.
TEST_F(PostgresStoreTest, ListenerReconnectsAfterItsConnectionIsKilled) {
  const std::string app = "listener_" + pg_->name();
  auto b = PostgresStore::Open(pg_->url() + "&application_name=" + app, clock_, 2);
  auto a = Open();
  ASSERT_TRUE(b.ok() && a) << b.status();
  absl::Mutex mu;
  int calls = 0;
  (*b)->SetChangeCallback([&](StoreChange) {
    absl::MutexLock lock(&mu);
    ++calls;
  });
  auto calls_reach = [&](int n, absl::Duration timeout) {
    for (const absl::Time deadline = absl::FromChrono(Wall().SystemNow()) + timeout;
         absl::FromChrono(Wall().SystemNow()) < deadline;) {
      {
        absl::MutexLock lock(&mu);
        if (calls >= n) return true;
      }
      Wall().SleepFor(std::chrono::milliseconds(10));
    }
    return false;
  };
  for (int i = 0; i < 100 && Listeners(app) == 0; ++i)
    Wall().SleepFor(std::chrono::milliseconds(50));
  ASSERT_EQ(Listeners(app), 1u) << "replica B never listened";
  ASSERT_TRUE(a->InsertCollection(MakeCollection("c1", "alpha", 1)).ok());
  ASSERT_TRUE(calls_reach(1, absl::Seconds(5))) << "no notification before the kill";

  KillListeners(app);
  // One call on reconnection (notifications may have been missed), within
  // the listener's backoff.
  ASSERT_TRUE(calls_reach(2, absl::Seconds(10))) << "no wake-up after reconnecting";
  for (int i = 0; i < 100 && Listeners(app) == 0; ++i)
    Wall().SleepFor(std::chrono::milliseconds(50));
  ASSERT_EQ(Listeners(app), 1u) << "replica B did not LISTEN again";
  ASSERT_TRUE(a->InsertCollection(MakeCollection("c2", "alpha", 1)).ok());
  EXPECT_TRUE(calls_reach(3, absl::Seconds(5))) << "notifications lost after the reconnect";
  (*b)->SetChangeCallback(nullptr);
}

// Progress reported through replica A wakes WatchCollection streams on
// replica B at once (NOTIFY on npuperf_updates), without waking B's agents
// that wait for work; a submission on A wakes both.
TEST_F(PostgresStoreTest, ProgressOnOneReplicaWakesWatchersOnAnother) {
  auto store_a = Open();
  auto store_b = Open();
  ASSERT_TRUE(store_a && store_b);
  RealClock clock;
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  Scheduler a(*store_a, clock, metrics, SchedulerOptions());
  Scheduler b(*store_b, clock, metrics, SchedulerOptions());
  auto waits_for = [](ChangeNotifier& n, uint64_t seen, absl::Duration timeout) {
    return n.WaitNewer(seen, timeout, [] { return false; }) > seen;
  };
  // B's listener connects on its own thread: submit on A until B hears it.
  uint64_t claimable = 0;
  bool heard = false;
  for (int i = 0; i < 20 && !heard; ++i) {
    claimable = b.changes().version();
    ASSERT_TRUE(store_a->InsertCollection(MakeCollection(absl::StrCat("c", i), "alpha", 1)).ok());
    heard = waits_for(b.changes(), claimable, absl::Milliseconds(500));
  }
  ASSERT_TRUE(heard) << "B never heard A's submissions";
  ASSERT_TRUE(store_a->UpsertAgent("a1", AgentInfo("host-a1", "boot", 1), 0).ok());
  auto lease = store_a->ClaimJob(Req("a1", {0}, ToUnixMillis(clock.SystemNow())), ChooseClaim);
  ASSERT_TRUE(lease.ok() && lease->has_value()) << lease.status();
  claimable = b.changes().version();
  const uint64_t updated = b.updates().version();
  v1::ReportProgressRequest p;
  p.set_agent_id("a1");
  p.set_job_id((*lease)->job_id());
  p.set_attempt((*lease)->attempt());
  p.set_fencing_token((*lease)->fencing_token());
  p.set_lease_secret((*lease)->lease_secret());
  p.mutable_progress()->set_phase(v1::JOB_PHASE_PREPARING);
  const absl::Time sent = absl::FromChrono(Wall().SystemNow());
  ASSERT_TRUE(a.ReportProgress(AgentIdentity::ForHost("host-a1"), p).ok());
  ASSERT_TRUE(waits_for(b.updates(), updated, absl::Seconds(3))) << "B's watchers were not woken";
  EXPECT_LT(absl::FromChrono(Wall().SystemNow()) - sent, absl::Seconds(2));
  EXPECT_EQ(b.changes().version(), claimable) << "progress frees nothing to claim";
  // The same for the progress a heartbeat carries (one statement for many jobs).
  const uint64_t again = b.updates().version();
  ProgressReport report{{p.job_id(), p.attempt(), p.fencing_token(), p.lease_secret()}, {}};
  report.progress.set_phase(v1::JOB_PHASE_METRIC_RUN);
  auto stored = store_a->RecordProgressMany("a1", {report}, ToUnixMillis(clock.SystemNow()), kTtl);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->renewed.size(), 1u);
  ASSERT_TRUE(waits_for(b.updates(), again, absl::Seconds(3)))
      << "B's watchers were not woken by a heartbeat's progress";
}

// An AgentSession stream has no deadline of its own: each heartbeat's store work stops after
// kAgentStoreDeadline (server/core/constants.h), so a heartbeat that a lock blocks ends the
// stream with DEADLINE_EXCEEDED instead of holding its database connection for good.
TEST_F(PostgresStoreTest, AHeartbeatsStatementsStopAtTheHeartbeatsOwnDeadline) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  // The service's clock runs kAgentStoreDeadline - 1 s behind the wall, which the pool reads:
  // a heartbeat's deadline is one real second away.
  testing::FakeClock service_clock(Wall().SystemNow() - kAgentStoreDeadline +
                                   std::chrono::seconds(1));
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  Scheduler scheduler(*store, service_clock, metrics, SchedulerOptions());
  Authenticator auth(*store, {}, /*required=*/false);
  std::atomic<bool> stopping{false};
  AgentServiceImpl service(scheduler, ServiceContext{auth, metrics, service_clock}, stopping);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = v1::AgentService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  const v1::RegisterAgentRequest reg = OneDeviceAgent();
  const v1::DeviceInfo* dev = &reg.devices(0);
  v1::RegisterAgentResponse registered;
  grpc::ClientContext reg_ctx;
  ASSERT_TRUE(stub->RegisterAgent(&reg_ctx, reg, &registered).ok());
  // Another transaction holds the agent's row: the heartbeat's first statement waits for it.
  HeldRowLock held(pg_->url(),
                   "SELECT id FROM agents WHERE id = '" + registered.agent_id() + "' FOR UPDATE");
  grpc::ClientContext session_ctx;
  auto session = stub->AgentSession(&session_ctx);
  v1::AgentSessionRequest beat;
  beat.mutable_heartbeat()->set_agent_id(registered.agent_id());
  // A device state other than the registered one: the heartbeat writes the agent's row
  // (agent_rules.h SeenWriteDue).
  *beat.mutable_heartbeat()->add_devices() = *dev;
  beat.mutable_heartbeat()->mutable_devices(0)->set_state(v1::DEVICE_STATE_UNHEALTHY);
  ASSERT_TRUE(session->Write(beat));
  v1::AgentSessionResponse resp;
  EXPECT_FALSE(session->Read(&resp)) << "the heartbeat was answered";
  session->WritesDone();
  const grpc::Status s = session->Finish();
  EXPECT_FALSE(held.Release()) << "the heartbeat waited until the lock was let go";
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  server->Shutdown();
}

// A LeaseJob long poll's deadline is its wait plus a margin; each of its looks
// runs its claim under kAgentStoreDeadline (or the call's deadline, when
// sooner), so the pool sets the agents' one statement timeout (issue 36) and
// a claim that a lock blocks stops after it, not at the end of the call.
TEST_F(PostgresStoreTest, ALongPollsClaimStopsAtTheAgentStoreDeadline) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 1)).ok());
  // The scheduler's clock runs kAgentStoreDeadline - 1 s behind the wall, which the pool
  // reads: a look's deadline is one real second away, the call's 25.
  testing::FakeClock scheduler_clock(Wall().SystemNow() - kAgentStoreDeadline +
                                     std::chrono::seconds(1));
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  Scheduler scheduler(*store, scheduler_clock, metrics, SchedulerOptions());
  v1::RegisterAgentRequest reg = OneDeviceAgent();
  reg.mutable_devices(0)->set_state(v1::DEVICE_STATE_IDLE);
  const AgentIdentity h1 = AgentIdentity::ForHost("h1");
  auto registered = scheduler.RegisterAgent(h1, reg);
  ASSERT_TRUE(registered.ok()) << registered.status();
  // Another transaction holds the collection's row: the claim waits for it.
  HeldRowLock held(pg_->url(), "SELECT id FROM collections WHERE id = 'c1' FOR UPDATE");
  v1::LeaseJobRequest lease;
  lease.set_agent_id(registered->agent_id());
  auto* offered = lease.add_free_devices();
  offered->set_device_id(0);
  offered->set_soc("Ascend910B2");
  absl::StatusOr<std::optional<v1::JobAssignment>> got;
  {
    DbDeadlineScope call(absl::FromChrono(Wall().SystemNow()) + absl::Seconds(25));
    got = scheduler.LeaseJob(h1, lease, [] { return false; });
  }
  EXPECT_FALSE(held.Release()) << "the claim waited until the lock was let go";
  EXPECT_TRUE(absl::IsDeadlineExceeded(got.status())) << got.status();
}

// A heartbeat's progress for a collection not stored as RUNNING (one an older
// server left otherwise) takes the locked path, which recounts the collection.
TEST_F(PostgresStoreTest, HeartbeatProgressOfACollectionNotStoredRunningRecountsIt) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 2)).ok());
  auto a = *store->ClaimJob(Req("a1", {0}), ChooseClaim);
  ASSERT_TRUE(a);
  ExecSql("UPDATE collections SET state = " +
          std::to_string(static_cast<int>(v1::COLLECTION_STATE_QUEUED)) + " WHERE id = 'c1'");
  ProgressReport report{Ref(*a), {}};
  report.progress.set_step(4);
  auto stored = store->RecordProgressMany("a1", {report}, 2100, kTtl);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->renewed.size(), 1u);
  auto c = store->GetCollection("", "c1");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->state(), v1::COLLECTION_STATE_RUNNING);
  v1::Job job;
  for (const v1::Job& j : c->jobs()) {
    if (j.id() == a->job_id()) job = j;
  }
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job.progress().step(), 4);
}

// Style R9: a call's deadline carries into the database. A cancel that has
// to wait for a collection row another transaction holds gives up at the
// deadline (DEADLINE_EXCEEDED, nothing changed); a deadline already passed
// starts nothing; without a deadline the same call waits and succeeds.
TEST_F(PostgresStoreTest, StatementsStopAtTheCallsDeadline) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertCollection(MakeCollection("c1", "alpha", 2)).ok());
  pqxx::connection holder(pg_->url());
  auto held = std::make_unique<pqxx::work>(holder);
  held->exec("SELECT 1 FROM collections WHERE id = 'c1' FOR UPDATE");
  // On its own thread (the scope is per thread), so that a statement the
  // deadline fails to stop is released below instead of hanging the test.
  auto waiting = std::async(std::launch::async, [&] {
    DbDeadlineScope deadline(absl::FromChrono(Wall().SystemNow()) + absl::Milliseconds(300));
    return store->CancelCollection("", "c1", "stop", 2000);
  });
  bool released = false;
  if (waiting.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    held->commit();
    released = true;
    ADD_FAILURE() << "the deadline did not stop the waiting statement";
  }
  auto cancelled = waiting.get();
  EXPECT_TRUE(absl::IsDeadlineExceeded(cancelled.status())) << cancelled.status();
  {
    DbDeadlineScope deadline(absl::FromChrono(Wall().SystemNow()) - absl::Seconds(1));
    EXPECT_TRUE(absl::IsDeadlineExceeded(store->GetCollection("", "c1").status()));
  }
  if (!released) {
    EXPECT_EQ(store->GetCollection("", "c1")->cancel_reason(), "") << "nothing changed";
    held->commit();
  }
  held.reset();
  // No scope: no timeout left on the pooled connection either.
  EXPECT_TRUE(store->CancelCollection("", "c1", "stop", 2000).ok());
  EXPECT_EQ(store->GetCollection("", "c1")->cancel_reason(), "stop");
}

// The time left to a call's deadline is read from the store's Clock, not the
// wall clock: on a FakeClock set in 2001, a deadline 5 s after its now lets
// the call run (by the wall clock it passed long ago), and once the clock has
// moved past it, nothing starts.
TEST_F(PostgresStoreTest, DeadlinesAreReadFromTheStoresClock) {
  testing::FakeClock fake(Clock::SystemTime(std::chrono::seconds(1'000'000'000)));
  auto store = PostgresStore::Open(pg_->url(), fake, 2);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->InsertCollection(MakeCollection("c1", "alpha", 1)).ok());
  const absl::Time deadline = absl::FromChrono(fake.SystemNow()) + absl::Seconds(5);
  {
    DbDeadlineScope scope(deadline);
    EXPECT_TRUE((*store)->GetCollection("", "c1").ok());
  }
  fake.Advance(std::chrono::seconds(6));
  {
    DbDeadlineScope scope(deadline);
    auto got = (*store)->GetCollection("", "c1");
    EXPECT_TRUE(absl::IsDeadlineExceeded(got.status())) << got.status();
  }
}

// Every transaction runs under its own call's statement timeout (whole
// seconds, and beyond 10 s a multiple of 5 s), whichever pooled connection
// it gets, and a connection already set to that timeout is
// preferred over resetting another (issue 36: calls of different deadlines
// kept resetting it, a round trip each): with one connection left at 5 s and
// one at none, calls of either kind take the one that fits.
TEST_F(PostgresStoreTest, EachCallGetsItsOwnTimeoutAndAConnectionThatHasItAlready) {
  ASSERT_NE(Open(), nullptr);  // migrates the schema the pool prepares its statements for
  testing::FakeClock fake;
  PgPool pool(pg_->url(), 3, fake);
  const absl::Time in_5s = absl::FromChrono(fake.SystemNow()) + absl::Seconds(5);
  const absl::Time in_9s = absl::FromChrono(fake.SystemNow()) + absl::Seconds(9);
  // (statement_timeout as SHOW prints it, backend pid) of a call under `deadline`.
  auto call = [&](absl::Time deadline, const std::function<void()>& inside = {}) {
    DbDeadlineScope scope(deadline);
    return pool.Run("show", [&](pqxx::work& tx) -> absl::StatusOr<std::pair<std::string, int>> {
      if (inside) inside();
      return std::make_pair(tx.exec1("SHOW statement_timeout")[0].as<std::string>(),
                            tx.exec1("SELECT pg_backend_pid()")[0].as<int>());
    });
  };
  absl::StatusOr<std::pair<std::string, int>> none_inside;
  auto five = call(in_5s, [&] { none_inside = call(absl::InfiniteFuture()); });
  ASSERT_TRUE(five.ok()) << five.status();
  ASSERT_TRUE(none_inside.ok()) << none_inside.status();
  EXPECT_EQ(five->first, "5s");
  EXPECT_EQ(none_inside->first, "0");
  ASSERT_NE(five->second, none_inside->second) << "two calls at once, two connections";
  for (int round = 0; round < 2; ++round) {
    auto none = call(absl::InfiniteFuture());
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_EQ(*none, *none_inside) << "round " << round << ": the connection without a timeout";
    auto again = call(in_5s);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *five) << "round " << round << ": the connection at 5 s";
  }
  // No connection fits: one of them is set, and the next call of the old
  // kind is set back.
  auto nine = call(in_9s);
  ASSERT_TRUE(nine.ok()) << nine.status();
  EXPECT_EQ(nine->first, "9s");
  auto none = call(absl::InfiniteFuture());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->first, "0");
  auto again = call(in_5s);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->first, "5s");
  // Beyond 10 s, less up to a second, a multiple of 5 s: an agent's 15 s
  // calls, which gRPC delivers with a little more than 15 s left, want 15.
  for (const auto& [left, shown] :
       std::vector<std::pair<absl::Duration, std::string>>{{absl::Seconds(10), "10s"},
                                                           {absl::Milliseconds(10'001), "10s"},
                                                           {absl::Milliseconds(11'001), "15s"},
                                                           {absl::Seconds(14), "15s"},
                                                           {absl::Seconds(15), "15s"},
                                                           {absl::Milliseconds(15'050), "15s"},
                                                           {absl::Seconds(16), "15s"},
                                                           {absl::Milliseconds(16'001), "20s"},
                                                           {absl::Seconds(20), "20s"}}) {
    auto got = call(absl::FromChrono(fake.SystemNow()) + left);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->first, shown) << left;
  }
  fake.Advance(std::chrono::seconds(3));  // 2 s left of the 5
  auto later = call(in_5s);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->first, "2s");
}

// Waiting for a free connection counts against the call's deadline: a call
// with 5 s left that waits while the only connection is busy and the clock
// moves 3 s runs under a 2 s timeout.
TEST_F(PostgresStoreTest, WaitingForAConnectionCountsAgainstTheDeadline) {
  ASSERT_NE(Open(), nullptr);
  testing::FakeClock fake;
  PgPool pool(pg_->url(), 1, fake);
  const absl::Time in_5s = absl::FromChrono(fake.SystemNow()) + absl::Seconds(5);
  std::future<absl::StatusOr<std::string>> waiting;
  auto held = pool.Run("hold", [&](pqxx::work&) -> absl::Status {
    waiting = std::async(std::launch::async, [&] {
      DbDeadlineScope scope(in_5s);
      return pool.Run("show", [](pqxx::work& tx) -> absl::StatusOr<std::string> {
        return tx.exec1("SHOW statement_timeout")[0].as<std::string>();
      });
    });
    // Real time for the other thread to start waiting for the connection.
    Wall().SleepFor(std::chrono::milliseconds(200));
    fake.Advance(std::chrono::seconds(3));
    return absl::OkStatus();
  });
  ASSERT_TRUE(held.ok()) << held;
  const absl::StatusOr<std::string> shown = waiting.get();
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_EQ(*shown, "2s");
}

// The listener waits its reconnect backoff (200 ms after a lost connection)
// on the store's Clock: with a FakeClock it stays down until the clock has
// moved 200 ms, then listens again and wakes its waiters once.
TEST_F(PostgresStoreTest, ListenerWaitsItsReconnectBackoffOnTheClock) {
  const std::string app = "backoff_" + pg_->name();
  testing::FakeClock fake;
  auto b = PostgresStore::Open(pg_->url() + "&application_name=" + app, fake, 2);
  ASSERT_TRUE(b.ok()) << b.status();
  absl::Mutex mu;
  int calls = 0;
  (*b)->SetChangeCallback([&](StoreChange) {
    absl::MutexLock lock(&mu);
    ++calls;
  });
  auto calls_now = [&] {
    absl::MutexLock lock(&mu);
    return calls;
  };
  // Polls in real time for what other processes and threads do.
  auto eventually = [](const std::function<bool()>& done) {
    for (int i = 0; i < 200 && !done(); ++i) Wall().SleepFor(std::chrono::milliseconds(50));
    return done();
  };
  ASSERT_TRUE(eventually([&] { return Listeners(app) == 1; })) << "B never listened";
  KillListeners(app);
  ASSERT_TRUE(eventually([&] { return fake.waiters() == 1; }))
      << "the listener does not wait for its backoff on the clock";
  // Counted from here: other test binaries share the database (and so the
  // NOTIFY channel), and a notice of theirs may have reached B before the kill.
  const int before = calls_now();
  fake.Advance(std::chrono::milliseconds(199));
  EXPECT_EQ(fake.waiters(), 1u) << "reconnected before its backoff";
  EXPECT_TRUE(eventually([&] { return Listeners(app) == 0; })) << "the killed connection stays";
  EXPECT_EQ(calls_now(), before) << "woke its waiters while still disconnected";
  fake.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(eventually([&] { return calls_now() > before; })) << "no wake-up after reconnecting";
  EXPECT_TRUE(eventually([&] { return Listeners(app) == 1; })) << "B did not LISTEN again";
  (*b)->SetChangeCallback(nullptr);
}

#endif  // NPUPERF_WITH_POSTGRES

TEST(PostgresStoreOpenTest, UnreachableDatabaseIsUnavailable) {  // style.md R3, through --db
#if NPUPERF_WITH_POSTGRES
  RealClock clock;
  auto s = OpenStore("postgresql://nobody@127.0.0.1:1/none", clock);
  EXPECT_TRUE(absl::IsUnavailable(s.status())) << s.status();
#else
  GTEST_SKIP() << "built without PostgreSQL";
#endif
}

}  // namespace
}  // namespace npuperf::server
