#pragma once
// The Store conformance suite (style.md §4 seam 1): every backend passes the same tests. SQLite
// always runs (a fresh ":memory:" database per test); PostgreSQL when NPUPERF_TEST_PG_URL is set
// (deploy/with-postgres.sh), each test in a schema of its own (CREATE SCHEMA t_<random>).
//
// This header holds the fixture and its building blocks; the TEST_Ps live by domain in
// store_conformance_{collections,claims,results,transitions}_test.cc, all in the one
// store_conformance_test binary. The suite is instantiated once, in
// store_conformance_collections_test.cc (gtest instantiates every TEST_P of a suite, whichever
// file defines it).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/assignment.h"
#include "server/store/store.h"
#include "tests/fakes/pg_schema.h"
#include "tests/server/store/store_builders.h"
#if NPUPERF_WITH_POSTGRES
#include "server/backends/postgres/postgres_store.h"
#endif

namespace npuperf::server {

enum class Backend { kSqlite, kPostgres };

// Binds lhs to the value of a StatusOr, failing the test when it is an error.
#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto& lhs = *lhs##_or

// ---- Building blocks ----

// A CollectionFilter or RoundFilter for one team.
template <typename Filter>
Filter ForTeam(const std::string& team, int32_t limit = 100) {
  Filter f;
  f.team = team;
  f.limit = limit;
  return f;
}

// ---- Fixture: one fresh database per test ----

class StoreConformanceTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
#if NPUPERF_WITH_POSTGRES
      if (PgTestSchema::BaseUrl().empty()) GTEST_SKIP() << "NPUPERF_TEST_PG_URL is not set";
      pg_ = std::make_unique<PgTestSchema>("t");
#else
      GTEST_SKIP() << "built without PostgreSQL";
#endif
    }
    ASSERT_OK_AND_ASSIGN(s, OpenStore());
    store_ = std::move(s);
  }

  void TearDown() override {
    store_.reset();
    pg_.reset();
    if (!sqlite_path_.empty()) std::filesystem::remove_all(sqlite_path_);
  }

  // Another Store on the same database (a second replica). SQLite: only when
  // UseSqliteFile() was called first (":memory:" databases are private).
  absl::StatusOr<std::unique_ptr<Store>> OpenStore() {
    if (GetParam() == Backend::kSqlite) {
      auto s = SqliteStore::Open(sqlite_path_.empty() ? ":memory:" : sqlite_path_.string());
      if (!s.ok()) return s.status();
      return std::unique_ptr<Store>(std::move(*s));
    }
#if NPUPERF_WITH_POSTGRES
    return PostgresStore::Open(pg_->url(), clock_, 4);
#else
    return absl::UnimplementedError("no PostgreSQL");
#endif
  }

  // Reopens the primary store on a temporary SQLite file (no-op on Postgres).
  void UseSqliteFile() {
    if (GetParam() != Backend::kSqlite) return;
    sqlite_path_ = std::filesystem::temp_directory_path() /
                   absl::StrFormat("npuperf-conf-%016x", absl::Uniform<uint64_t>(absl::BitGen()));
    std::filesystem::create_directories(sqlite_path_);
    sqlite_path_ /= "store.db";
    ASSERT_OK_AND_ASSIGN(s, OpenStore());
    store_ = std::move(s);
  }

  void Insert(const NewCollection& c) {
    EXPECT_EQ(store_->InsertCollection(c).status(), absl::OkStatus());
  }

  std::optional<v1::JobAssignment> Claim(const ClaimRequest& req,
                                         const ClaimChooser& choose = ChooseClaim) {
    auto got = store_->ClaimJob(req, choose);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::nullopt;
  }

  v1::Job JobOf(const std::string& collection, int64_t job_id) {
    auto c = store_->GetCollection("", collection);
    for (int i = 0; c.ok() && i < c->jobs_size(); ++i) {
      if (c->jobs(i).id() == job_id) return c->jobs(i);
    }
    ADD_FAILURE() << "job " << job_id << " not in " << collection << ": " << c.status();
    return v1::Job();
  }

  v1::CollectionState StateOf(const std::string& collection) {
    return store_->GetCollection("", collection).value_or(v1::Collection()).state();
  }

  // Reports success for a and returns the round id (0 on error).
  int64_t Finish(const v1::JobAssignment& a, const std::string& uuid, int64_t now, double us) {
    auto ack = store_->RecordResult(Result(a, uuid, v1::ATTEMPT_OUTCOME_SUCCEEDED, now, us));
    EXPECT_TRUE(ack.ok()) << ack.status();
    return ack.ok() ? ack->round_id : 0;
  }

  size_t RoundCount(const std::string& team) {
    auto page = store_->ListRounds(ForTeam<RoundFilter>(team, 1000));
    return page.value_or(RoundPage()).rounds.size();
  }

  RealClock clock_;  // PostgreSQL stores': retry backoff, deadlines, listener reconnects
  std::unique_ptr<Store> store_;
  std::unique_ptr<PgTestSchema> pg_;  // PostgreSQL runs only
  std::filesystem::path sqlite_path_;
};

}  // namespace npuperf::server
