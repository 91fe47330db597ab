// The Store conformance suite (style.md §4 seam 1): every backend passes the same tests. SQLite
// always runs (a fresh ":memory:" database per test); PostgreSQL when NPUPERF_TEST_PG_URL is set
// (deploy/with-postgres.sh), each test in a schema of its own (CREATE SCHEMA t_<random>).
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/core/job_state.h"
#include "server/core/scheduler.h"
#include "server/store/sqlite/sqlite_store.h"
#include "server/store/store.h"
#include "server/store/factory.h"
#include "tests/fakes/pg_schema.h"
#include "tests/server/store/store_builders.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>

#include "server/store/postgres/postgres_store.h"
#endif

namespace npuperf::server {
namespace {

enum class Backend { kSqlite, kPostgres };

using google::protobuf::util::TimeUtil;

// Binds lhs to the value of a StatusOr, failing the test when it is an error.
#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto& lhs = *lhs##_or

// ---- Building blocks ----

v1::RegisterAgentRequest AgentInfo(const std::string& host, const std::string& boot, int devices) {
  v1::RegisterAgentRequest info;
  info.set_host(host);
  info.set_boot_id(boot);
  info.set_instance_id("i-" + host);
  (*info.mutable_labels())["rack"] = "r1";
  for (int d = 0; d < devices; ++d) {
    auto* dev = info.add_devices();
    dev->set_device_id(d);
    dev->set_soc("Ascend910B2");
    dev->set_state(v1::DEVICE_STATE_IDLE);
  }
  return info;
}

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

// ---- Tokens and bundles ----

TEST_P(StoreConformanceTest, TokensAndBundles) {
  ASSERT_TRUE(store_->InsertToken("h1", "team", "alpha", 1).ok());
  ASSERT_OK_AND_ASSIGN(got, store_->LookupToken("h1"));
  EXPECT_EQ(got, std::make_pair(std::string("team"), std::string("alpha")));
  EXPECT_TRUE(absl::IsNotFound(store_->LookupToken("nope").status()));
  EXPECT_TRUE(absl::IsAlreadyExists(store_->InsertToken("h1", "agent", "x", 2)));
  // Bundles are content-addressed and deduplicated.
  const std::string content("tar\0with\xffzero", 13);
  EXPECT_FALSE(store_->PutBundle("alpha", "op", "sha1", content, 1).value_or(true));
  EXPECT_TRUE(store_->PutBundle("beta", "op", "sha1", content, 2).value_or(false));  // deduplicated
  ASSERT_OK_AND_ASSIGN(bundle, store_->GetBundle("sha1"));
  EXPECT_EQ(bundle, content);
  EXPECT_TRUE(*store_->HasBundle("sha1"));
  EXPECT_FALSE(*store_->HasBundle("sha2"));
  EXPECT_TRUE(absl::IsNotFound(store_->GetBundle("sha2").status()));
}

// ---- Collections ----

TEST_P(StoreConformanceTest, InsertCollectionAndIdempotencyKey) {
  NewCollection c = MakeCollection("c1", "alpha", 3);
  (*c.spec.mutable_labels())["branch"] = "main";
  c.idempotency_key = "key-1";
  ASSERT_OK_AND_ASSIGN(first, store_->InsertCollection(c));
  EXPECT_TRUE(first.second);
  EXPECT_EQ(first.first.id(), "c1");
  EXPECT_EQ(first.first.jobs_size(), 3);
  EXPECT_EQ(first.first.counts().queued(), 3);
  EXPECT_EQ(first.first.state(), v1::COLLECTION_STATE_QUEUED);
  EXPECT_EQ(first.first.idempotency_key(), "key-1");
  EXPECT_EQ(first.first.spec().labels().at("branch"), "main");
  NewCollection resubmit = MakeCollection("c2", "alpha", 5);
  resubmit.idempotency_key = "key-1";
  ASSERT_OK_AND_ASSIGN(second, store_->InsertCollection(resubmit));
  EXPECT_FALSE(second.second);
  EXPECT_EQ(second.first.id(), "c1");
  EXPECT_EQ(second.first.jobs_size(), 3);
  EXPECT_TRUE(absl::IsNotFound(store_->GetCollection("", "c2").status()));
  // The key is per team.
  NewCollection other = MakeCollection("c3", "beta", 1);
  other.idempotency_key = "key-1";
  ASSERT_OK_AND_ASSIGN(third, store_->InsertCollection(other));
  EXPECT_TRUE(third.second);
  // Reads are team-scoped (empty team: any).
  EXPECT_TRUE(store_->GetCollection("alpha", "c1").ok());
  EXPECT_TRUE(store_->GetCollection("", "c3").ok());
  EXPECT_TRUE(absl::IsNotFound(store_->GetCollection("beta", "c1").status()));
}

TEST_P(StoreConformanceTest, ListCollectionsFiltersAndPages) {
  for (int i = 0; i < 5; ++i) {
    NewCollection c = MakeCollection(absl::StrCat("c", i), "alpha", 1);
    c.now_ms = 1000 + i;
    (*c.spec.mutable_labels())["branch"] = i % 2 == 0 ? "main" : "dev";
    (*c.spec.mutable_labels())["tag"] = absl::StrCat("t", i);
    Insert(c);
  }
  Insert(MakeCollection("other", "beta", 1));
  auto f = ForTeam<CollectionFilter>("alpha");
  ASSERT_OK_AND_ASSIGN(all, store_->ListCollections(f));
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].id(), "c4");  // newest first
  EXPECT_EQ(all[0].counts().total(), 1);
  EXPECT_EQ(all[0].jobs_size(), 0);  // list views carry counts only
  f.labels = {{"branch", "main"}};
  EXPECT_EQ(store_->ListCollections(f)->size(), 3u);
  f.labels = {{"branch", "main"}, {"tag", "t2"}};
  auto one = store_->ListCollections(f);
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].id(), "c2");
  f.labels.clear();
  f.limit = 2;
  auto page1 = store_->ListCollections(f);
  ASSERT_EQ(page1->size(), 2u);
  f.before_created_ms = TimeUtil::TimestampToMilliseconds(page1->back().created_at());
  f.before_id = page1->back().id();
  auto page2 = store_->ListCollections(f);
  ASSERT_EQ(page2->size(), 2u);
  EXPECT_EQ((*page2)[0].id(), "c2");
  f = ForTeam<CollectionFilter>("alpha");
  f.states = {v1::COLLECTION_STATE_RUNNING};
  EXPECT_TRUE(store_->ListCollections(f)->empty());
  f.states = {v1::COLLECTION_STATE_QUEUED};
  EXPECT_EQ(store_->ListCollections(f)->size(), 5u);
}

// ---- Agents ----

TEST_P(StoreConformanceTest, AgentsAndDevices) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 2), 100).ok());
  ASSERT_OK_AND_ASSIGN(info, store_->GetAgent("a1"));
  EXPECT_EQ(info.host(), "h1");
  EXPECT_TRUE(absl::IsNotFound(store_->GetAgent("zz").status()));
  EXPECT_TRUE(absl::IsNotFound(store_->UpdateDevices("zz", {}, 1)));
  Insert(MakeCollection("c1", "alpha", 1));
  ClaimRequest req = Req("a1", {1});
  req.host = "h1";
  auto a = Claim(req);
  ASSERT_TRUE(a);
  ASSERT_OK_AND_ASSIGN(agents, store_->ListAgents());
  ASSERT_EQ(agents.size(), 1u);
  const v1::AgentStatus& s = agents[0];
  EXPECT_EQ(s.state(), "online");
  EXPECT_EQ(s.labels().at("rack"), "r1");
  ASSERT_EQ(s.devices_size(), 2);
  EXPECT_EQ(s.devices(0).state(), "idle");
  EXPECT_EQ(s.devices(1).state(), "busy");
  EXPECT_EQ(s.devices(1).job_id(), a->job_id());
  // A new instance of the same host and boot replaces the old one.
  ASSERT_TRUE(store_->UpsertAgent("a2", AgentInfo("h1", "boot1", 2), 200).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->GetAgent("a1").status()));
  EXPECT_TRUE(store_->GetAgent("a2").ok());
}

// ---- Claims ----

TEST_P(StoreConformanceTest, ClaimPriorityCapAndAssignment) {
  Insert(MakeCollection("low", "alpha", 2, /*priority=*/0));
  Insert(MakeCollection("high", "alpha", 2, /*priority=*/5));
  auto a = Claim(Req("a1", {0, 1}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->collection_id(), "high");
  EXPECT_EQ(a->attempt(), 1);
  EXPECT_EQ(a->fencing_token(), 1);
  EXPECT_EQ(a->max_attempts(), 1);
  EXPECT_EQ(absl::StrCat(a->operator_name(), " ", a->case_id(), " ", a->op_name(), " ",
                         a->bundle_sha256(), " ", a->runner(), " ", a->device_id()),
            "op_a case0 OpA sha-a run_a.py 0");
  EXPECT_EQ(a->lease_ttl_ms(), kTtl);
  EXPECT_EQ(StateOf("high"), v1::COLLECTION_STATE_RUNNING);
  v1::Job job = JobOf("high", a->job_id());
  EXPECT_EQ(absl::StrCat(JobStateName(job.state()), " ", job.placement().agent_id(), "/",
                         job.placement().device_id()),
            "leased a1/0");
  auto b = Claim(Req("a1", {0, 1}));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->collection_id(), "high");
  EXPECT_EQ(b->device_id(), 1);
  EXPECT_NE(b->job_id(), a->job_id());
  EXPECT_FALSE(Claim(Req("a1", {0, 1})));  // both devices leased
  auto c = Claim(Req("a2", {0}));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->collection_id(), "low");
  // Per-collection cap: "capped" (top priority) allows two live jobs.
  Insert(MakeCollection("capped", "alpha", 5, /*priority=*/9, /*cap=*/2));
  auto of = [](const auto& a) { return a.value_or(v1::JobAssignment()).collection_id(); };
  EXPECT_EQ(of(Claim(Req("a3", {0, 1, 2}))), "capped");
  EXPECT_EQ(of(Claim(Req("a3", {0, 1, 2}))), "capped");
  EXPECT_EQ(of(Claim(Req("a3", {0, 1, 2}))), "low");
}

TEST_P(StoreConformanceTest, LeasedDeviceIsNeverOfferedAgain) {
  Insert(MakeCollection("c1", "alpha", 4));
  auto a = Claim(Req("a1", {3}));
  ASSERT_TRUE(a);
  std::set<int> offered;  // over every chooser call
  ClaimChooser spy = [&](const std::vector<ClaimCandidate>& c, const std::vector<OfferedDevice>& d,
                         const std::map<std::string, std::string>& l) {
    for (const auto& dev : d) offered.insert(dev.device_id);
    return ChooseClaim(c, d, l);
  };
  EXPECT_FALSE(Claim(Req("a1", {3}), spy));
  EXPECT_TRUE(offered.empty());
  auto b = Claim(Req("a1", {3, 4}), spy);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->device_id(), 4);
  EXPECT_EQ(offered, std::set<int>{4});
  // The same device number on another agent is another device.
  EXPECT_TRUE(Claim(Req("a2", {3})));
#if NPUPERF_WITH_POSTGRES
  if (GetParam() != Backend::kPostgres) return;
  // Migration 0002: even a writer that skips the claim protocol cannot double-book.
  pqxx::connection conn(pg_->url());
  pqxx::work tx(conn);
  EXPECT_THROW(tx.exec("UPDATE jobs SET state = 2, agent_id = 'a1', device_id = 3 WHERE state = 1"),
               pqxx::unique_violation);
#endif
}

TEST_P(StoreConformanceTest, ClaimHonoursConstraintsThroughTheChooser) {
  NewCollection c = MakeCollection("c1", "alpha", 1);
  c.spec.mutable_constraints()->add_socs("Ascend950PR_9589");
  Insert(c);
  std::string seen;  // what the chooser was offered
  ClaimChooser spy = [&](const std::vector<ClaimCandidate>& cs, const std::vector<OfferedDevice>& d,
                         const std::map<std::string, std::string>& l) {
    for (const auto& c : cs)
      absl::StrAppend(&seen, c.collection_id, "/", c.team, "/", c.spec->constraints().socs(0), " ");
    return ChooseClaim(cs, d, l);
  };
  EXPECT_FALSE(Claim(Req("a1", {0}, 2000, "Ascend910B2"), spy));
  EXPECT_EQ(seen, "c1/alpha/Ascend950PR_9589 ");
  ClaimRequest both = Req("a1", {0}, 2000, "Ascend910B2");
  both.devices.push_back({1, "Ascend950PR_9589"});
  auto a = Claim(both, spy);
  ASSERT_TRUE(a);
  EXPECT_EQ(absl::StrCat(a->device_id(), " ", a->soc()), "1 Ascend950PR_9589");
}

// ---- Leases ----

TEST_P(StoreConformanceTest, RenewLeasesDropsStaleAndReportsCancelled) {
  Insert(MakeCollection("c1", "alpha", 2));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  AttemptRef stale = Ref(*a);
  stale.fencing_token += 7;
  ASSERT_OK_AND_ASSIGN(r, store_->RenewLeases("a1", {Ref(*a), stale}, 2000 + kTtl - 1, kTtl));
  ASSERT_EQ(r.dropped.size(), 1u);
  EXPECT_EQ(r.dropped[0].fencing_token, stale.fencing_token);
  EXPECT_TRUE(r.cancelled.empty());
  // Renewed: not expired at the original deadline.
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  EXPECT_TRUE(expired.empty());
  // Another agent cannot renew it.
  EXPECT_EQ(store_->RenewLeases("a2", {Ref(*a)}, 5000, kTtl)->dropped.size(), 1u);
  ASSERT_TRUE(store_->CancelCollection("alpha", "c1", "user", 6000).ok());
  ASSERT_OK_AND_ASSIGN(after, store_->RenewLeases("a1", {Ref(*a)}, 6001, kTtl));
  EXPECT_TRUE(after.dropped.empty());
  ASSERT_EQ(after.cancelled.size(), 1u);
  EXPECT_EQ(after.cancelled[0].job_id, a->job_id());
}

TEST_P(StoreConformanceTest, AdoptAttemptsOnReRegistration) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 2), 100).ok());
  Insert(MakeCollection("c1", "alpha", 1));
  ClaimRequest req = Req("a1", {0});
  req.host = "h1";
  auto a = Claim(req);
  ASSERT_TRUE(a);
  ASSERT_TRUE(store_->UpsertAgent("a1b", AgentInfo("h1", "boot1", 2), 2500).ok());
  AttemptRef wrong = Ref(*a);
  wrong.fencing_token = 99;
  ASSERT_OK_AND_ASSIGN(adopted, store_->AdoptAttempts("a1b", {wrong, Ref(*a)}, 2600, kTtl));
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].fencing_token, a->fencing_token());
  EXPECT_EQ(JobOf("c1", a->job_id()).placement().agent_id(), "a1b");
  // An agent on another host cannot adopt it; an expired lease is not adopted.
  ASSERT_TRUE(store_->UpsertAgent("x", AgentInfo("h2", "boot9", 1), 2700).ok());
  EXPECT_TRUE(store_->AdoptAttempts("x", {Ref(*a)}, 2700, kTtl)->empty());
  EXPECT_TRUE(store_->AdoptAttempts("a1b", {Ref(*a)}, 2600 + kTtl + 1, kTtl)->empty());
}

TEST_P(StoreConformanceTest, RecordProgressChecksTheFencingToken) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  v1::JobProgress p;
  p.set_step(2);
  p.set_step_count(9);
  ASSERT_OK_AND_ASSIGN(cancel, store_->RecordProgress("a1", Ref(*a), p, 2100, kTtl));
  EXPECT_FALSE(cancel);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job.progress().step(), 2);
  AttemptRef stale = Ref(*a);
  stale.fencing_token -= 1;
  EXPECT_TRUE(
      absl::IsFailedPrecondition(store_->RecordProgress("a1", stale, p, 2200, kTtl).status()));
  ASSERT_TRUE(store_->CancelCollection("", "c1", "stop", 2300).ok());
  ASSERT_OK_AND_ASSIGN(cancelled, store_->RecordProgress("a1", Ref(*a), p, 2400, kTtl));
  EXPECT_TRUE(cancelled);
}

// ---- Results ----

TEST_P(StoreConformanceTest, SuccessStoresExactlyOneRound) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED)));
  EXPECT_FALSE(ack.duplicate);
  EXPECT_GT(ack.round_id, 0);
  EXPECT_EQ(ack.collection_id, "c1");
  auto again = store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->round_id, ack.round_id);
  EXPECT_EQ(RoundCount("alpha"), 1u);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.round_id(), ack.round_id);
  EXPECT_DOUBLE_EQ(job.kernel_time_us(), 12.5);
  EXPECT_EQ(job.bound_label(), "compute");
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_SUCCEEDED);
  // A new uuid for the finished attempt is stale: nothing more is stored.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      store_->RecordResult(Result(*a, "u2", v1::ATTEMPT_OUTCOME_SUCCEEDED)).status()));
  EXPECT_EQ(RoundCount("alpha"), 1u);
}

TEST_P(StoreConformanceTest, StaleTokenResultIsRejectedAndNotStored) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/2));
  auto first = Claim(Req("a1", {0}));
  ASSERT_TRUE(first);
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  auto second = Claim(Req("a2", {0}, 20'000));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job_id(), first->job_id());
  EXPECT_EQ(second->fencing_token(), first->fencing_token() + 1);
  auto late = store_->RecordResult(Result(*first, "late", v1::ATTEMPT_OUTCOME_SUCCEEDED, 21'000));
  EXPECT_TRUE(absl::IsFailedPrecondition(late.status())) << late.status();
  EXPECT_EQ(RoundCount("alpha"), 0u);
  EXPECT_EQ(JobOf("c1", first->job_id()).state(), v1::JOB_STATE_LEASED);
  auto ok = store_->RecordResult(Result(*second, "fresh", v1::ATTEMPT_OUTCOME_SUCCEEDED, 22'000));
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_OK_AND_ASSIGN(round, store_->GetRound("alpha", ok->round_id));
  EXPECT_EQ(round.attempt(), second->attempt());
}

TEST_P(StoreConformanceTest, FailureRequeuesWhileAttemptsRemain) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->max_attempts(), 2);
  ASSERT_TRUE(store_->RecordResult(Result(*a, "f1", v1::ATTEMPT_OUTCOME_FAILED)).ok());
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(absl::StrContains(job.reason(), "retrying")) << job.reason();
  auto b = Claim(Req("a1", {0}, 4000));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->attempt(), 2);
  ASSERT_TRUE(store_->RecordResult(Result(*b, "f2", v1::ATTEMPT_OUTCOME_FAILED, 5000)).ok());
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_FAILED);
  // A non-retryable failure fails at once.
  Insert(MakeCollection("c2", "alpha", 1, 0, 8, /*retry=*/3));
  auto c = Claim(Req("a1", {0}, 6000));
  ASSERT_TRUE(c);
  AttemptResult fatal = Result(*c, "f3", v1::ATTEMPT_OUTCOME_FAILED, 7000);
  fatal.retryable = false;
  ASSERT_TRUE(store_->RecordResult(fatal).ok());
  EXPECT_EQ(JobOf("c2", c->job_id()).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(RoundCount("alpha"), 0u);
}

TEST_P(StoreConformanceTest, InterruptedDoesNotUseTheRetryBudget) {
  // Two attempts allowed: interrupted, failed (one real failure: retry), succeeded.
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  AttemptResult cut = Result(*a, "i1", v1::ATTEMPT_OUTCOME_INTERRUPTED);
  cut.max_lost = 2;
  ASSERT_TRUE(store_->RecordResult(cut).ok());
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  auto b = Claim(Req("a1", {0}, 4000));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->attempt(), 2);
  ASSERT_TRUE(store_->RecordResult(Result(*b, "f2", v1::ATTEMPT_OUTCOME_FAILED, 5000)).ok());
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  auto c = Claim(Req("a1", {0}, 6000));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->attempt(), 3);
  auto done = store_->RecordResult(Result(*c, "s3", v1::ATTEMPT_OUTCOME_SUCCEEDED, 7000));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_SUCCEEDED);
  // Interrupted max_lost times: failed for good.
  Insert(MakeCollection("c2", "alpha", 1, 0, 8, /*retry=*/5));
  for (int i = 0; i < 2; ++i) {
    auto d = Claim(Req("a1", {0}, 8000 + i));
    ASSERT_TRUE(d);
    AttemptResult r = Result(*d, absl::StrCat("c2-", i), v1::ATTEMPT_OUTCOME_INTERRUPTED, 9000 + i);
    r.max_lost = 2;
    ASSERT_TRUE(store_->RecordResult(r).ok());
  }
  EXPECT_EQ(StateOf("c2"), v1::COLLECTION_STATE_FAILED);
}

// ---- Expiry and cancellation ----

TEST_P(StoreConformanceTest, ExpireLeasesRequeuesThenFails) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/5));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(store_->ExpireLeases(2000 + kTtl - 1, 2)->empty());  // still live
  ASSERT_OK_AND_ASSIGN(first, store_->ExpireLeases(2000 + kTtl + 1, 2));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first[0].requeued);
  EXPECT_EQ(first[0].agent_id, "a1");
  EXPECT_EQ(first[0].collection_id, "c1");
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  auto b = Claim(Req("a2", {0}, 20'000));
  ASSERT_TRUE(b);
  ASSERT_OK_AND_ASSIGN(second, store_->ExpireLeases(20'000 + kTtl + 1, 2));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_FALSE(second[0].requeued);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(job.reason(), "giving up")) << job.reason();
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_FAILED);
}

TEST_P(StoreConformanceTest, CancelCollection) {
  Insert(MakeCollection("c1", "alpha", 3));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(absl::IsNotFound(store_->CancelCollection("beta", "c1", "x", 2100).status()));
  ASSERT_OK_AND_ASSIGN(orders, store_->CancelCollection("alpha", "c1", "user asked", 2200));
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0].agent_id, "a1");
  EXPECT_EQ(orders[0].job_id, a->job_id());
  EXPECT_EQ(orders[0].fencing_token, a->fencing_token());
  auto c = store_->GetCollection("alpha", "c1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->counts().cancelled(), 2);
  EXPECT_EQ(c->state(), v1::COLLECTION_STATE_RUNNING);
  EXPECT_EQ(c->cancel_reason(), "user asked");
  EXPECT_FALSE(Claim(Req("a1", {1}, 2300)));  // nothing left to claim
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_FALSE(expired[0].requeued);
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_CANCELLED);
  // A retryable failure after the cancel is not retried.
  Insert(MakeCollection("c2", "alpha", 1, 0, 8, /*retry=*/3));
  auto b = Claim(Req("a1", {0}, 20'000));
  ASSERT_TRUE(b);
  ASSERT_TRUE(store_->CancelCollection("", "c2", "stop", 20'100).ok());
  ASSERT_TRUE(store_->RecordResult(Result(*b, "f", v1::ATTEMPT_OUTCOME_FAILED, 20'200)).ok());
  EXPECT_EQ(StateOf("c2"), v1::COLLECTION_STATE_CANCELLED);
}

// ---- Rounds ----

TEST_P(StoreConformanceTest, GetRoundAndListRounds) {
  NewCollection c = MakeCollection("c1", "alpha", 4);
  (*c.spec.mutable_labels())["branch"] = "main";
  Insert(c);
  std::vector<int64_t> rounds;
  for (int i = 0; i < 4; ++i) {
    auto a = Claim(Req("a1", {0}, 2000 + i * 100));
    ASSERT_TRUE(a);
    rounds.push_back(Finish(*a, absl::StrCat("u", i), 3000 + i * 100, 10.0 + i));
  }
  Insert(MakeCollection("b1", "beta", 1));
  ASSERT_OK_AND_ASSIGN(round, store_->GetRound("alpha", rounds[1]));
  EXPECT_EQ(round.collection_id(), "c1");
  EXPECT_EQ(round.case_id(), "case1");
  EXPECT_EQ(round.labels().at("branch"), "main");
  EXPECT_EQ(round.evidence().evidence_json(), "{\"big\": true}");
  EXPECT_DOUBLE_EQ(round.evidence().duration().aggregate_us(), 11.0);
  EXPECT_TRUE(absl::IsNotFound(store_->GetRound("beta", rounds[1]).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetRound("alpha", 999'999).status()));
  auto f = ForTeam<RoundFilter>("alpha");
  f.metric = "duration";
  ASSERT_OK_AND_ASSIGN(page, store_->ListRounds(f));
  ASSERT_EQ(page.rounds.size(), 4u);
  EXPECT_TRUE(page.rounds[0].evidence().evidence_json().empty());  // list view
  ASSERT_EQ(page.series.size(), 4u);
  EXPECT_DOUBLE_EQ(page.series[3].value(), 13.0);
  EXPECT_EQ(page.series[3].round_id(), rounds[3]);
  EXPECT_EQ(page.last_id, 0);
  f.case_id = "case2";
  EXPECT_EQ(store_->ListRounds(f)->rounds.size(), 1u);
  f.case_id.clear();
  f.since_ms = 3100;
  f.until_ms = 3300;
  EXPECT_EQ(store_->ListRounds(f)->rounds.size(), 2u);
  f = ForTeam<RoundFilter>("alpha");
  f.labels = {{"branch", "dev"}};
  EXPECT_TRUE(store_->ListRounds(f)->rounds.empty());
  f.labels = {{"branch", "main"}};
  f.operator_name = "op_a";
  f.collection_id = "c1";
  f.limit = 3;
  auto first = store_->ListRounds(f);
  ASSERT_EQ(first->rounds.size(), 3u);
  EXPECT_EQ(first->last_id, rounds[2]);
  f.after_id = first->last_id;
  auto rest = store_->ListRounds(f);
  ASSERT_EQ(rest->rounds.size(), 1u);
  EXPECT_EQ(rest->rounds[0].id(), rounds[3]);
  f = ForTeam<RoundFilter>("beta");
  EXPECT_TRUE(store_->ListRounds(f)->rounds.empty());
}

// ---- Replicas: two stores on one database ----

// What the replica test saw: claimed jobs, devices held between claim and result, broken rules.
struct ClaimLedger {
  void Take(int64_t job_id, std::pair<int, int> device) {
    absl::MutexLock lock(&mu);
    if (!claimed.insert(job_id).second) violations.push_back("a job was claimed twice");
    if (!held.insert(device).second) violations.push_back("a device was double-booked");
  }
  void Release(std::pair<int, int> device) {
    absl::MutexLock lock(&mu);
    held.erase(device);
  }
  void Note(const absl::Status& s) {
    absl::MutexLock lock(&mu);
    if (!s.ok()) violations.push_back(s.ToString());
  }
  absl::Mutex mu;
  std::set<int64_t> claimed ABSL_GUARDED_BY(mu);
  std::set<std::pair<int, int>> held ABSL_GUARDED_BY(mu);
  std::vector<std::string> violations ABSL_GUARDED_BY(mu);
};

// Several threads on two Store instances claim for 4 agents x 4 devices over
// 200 queued jobs and finish each job: no job is handed out twice and no
// device holds two leases at once.
TEST_P(StoreConformanceTest, TwoReplicasNeverDoubleBook) {
  UseSqliteFile();
  ASSERT_OK_AND_ASSIGN(second, OpenStore());
  Store* replicas[2] = {store_.get(), second.get()};
  constexpr int kCollections = 10, kJobsEach = 20, kAgents = 4;
  for (int i = 0; i < kCollections; ++i) {
    Insert(MakeCollection(absl::StrCat("c", i), absl::StrCat("team", i % 3), kJobsEach, i % 2));
  }
  ClaimLedger ledger;
  std::atomic<int> done{0};
  auto worker = [&](int t) {
    Store* store = replicas[t % 2];
    const int agent = t / 2;  // two threads per agent, one on each replica
    for (int idle = 0; done.load() < kCollections * kJobsEach && idle < 20'000;) {
      auto got = store->ClaimJob(Req(absl::StrCat("a", agent), {0, 1, 2, 3}), ChooseClaim);
      if (!got.ok() && !absl::IsAborted(got.status())) return ledger.Note(got.status());
      if (!got.ok() || !got->has_value()) {
        idle += got.ok() ? 1 : 0;  // ABORTED (a lost race): just claim again
        std::this_thread::yield();
        continue;
      }
      const v1::JobAssignment& a = **got;
      ledger.Take(a.job_id(), {agent, a.device_id()});
      std::this_thread::yield();
      ledger.Release({agent, a.device_id()});  // its lease stays live until the result
      ledger.Note(store
                      ->RecordResult(Result(a, absl::StrCat("u", a.job_id()),
                                            v1::ATTEMPT_OUTCOME_SUCCEEDED, 3000))
                      .status());
      ++done;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kAgents * 2; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  {
    absl::MutexLock lock(&ledger.mu);
    EXPECT_TRUE(ledger.violations.empty()) << ledger.violations.front();
    EXPECT_EQ(ledger.claimed.size(), static_cast<size_t>(kCollections * kJobsEach));
  }
  size_t rounds = 0;
  for (int team = 0; team < 3; ++team) rounds += RoundCount(absl::StrCat("team", team));
  EXPECT_EQ(rounds, static_cast<size_t>(kCollections * kJobsEach));
  for (int i = 0; i < kCollections; ++i) {
    EXPECT_EQ(StateOf(absl::StrCat("c", i)), v1::COLLECTION_STATE_SUCCEEDED);
  }
}

// Replicas opening together serialize their migrations (advisory lock; BEGIN IMMEDIATE).
TEST_P(StoreConformanceTest, ReplicasOpenTogether) {
  UseSqliteFile();
  std::vector<absl::StatusOr<std::unique_ptr<Store>>> opened;
  for (int i = 0; i < 3; ++i) opened.emplace_back(absl::UnknownError("unset"));
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back([&, i] { opened[i] = OpenStore(); });
  for (auto& t : threads) t.join();
  for (const auto& s : opened) ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*opened[0])->InsertToken("h", "team", "x", 1).ok());
  EXPECT_TRUE(store_->LookupToken("h").ok());
}

// ---- Gauges and cross-replica wake-ups ----

TEST_P(StoreConformanceTest, CountByStateCountsJobsAgentsAndDevices) {
  Insert(MakeCollection("c1", "team", 3));
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot", 2), 1000).ok());
  ASSERT_TRUE(Claim(Req("a1", {0})));
  ASSERT_TRUE(store_->UpsertAgent("a2", AgentInfo("h2", "boot", 1), 1000).ok());
  // A new instance of h2 (same boot): a2 is lost, its device offline.
  ASSERT_TRUE(store_->UpsertAgent("a3", AgentInfo("h2", "boot", 1), 1000).ok());
  ASSERT_OK_AND_ASSIGN(counts, store_->CountByState());
  EXPECT_EQ(counts.jobs[v1::JOB_STATE_QUEUED], 2);
  EXPECT_EQ(counts.jobs[v1::JOB_STATE_LEASED], 1);
  EXPECT_EQ(counts.jobs.count(v1::JOB_STATE_SUCCEEDED), 0u);
  EXPECT_EQ(counts.agents["online"], 2);
  EXPECT_EQ(counts.agents["lost"], 1);
  EXPECT_EQ(counts.devices["busy"], 1);  // a1's device 0 holds the lease
  EXPECT_EQ(counts.devices["idle"], 2);  // a1's device 1, a3's device 0
  EXPECT_EQ(counts.devices["offline"], 1);
}

// A LeaseJob long-poll on replica B wakes within moments when replica A
// queues work (PostgreSQL LISTEN/NOTIFY), not after B's own 30 s wait.
TEST_P(StoreConformanceTest, SubmitOnOneReplicaWakesALongPollOnAnother) {
  if (GetParam() == Backend::kSqlite) GTEST_SKIP() << "one process owns a SQLite database";
  ASSERT_OK_AND_ASSIGN(second, OpenStore());
  RealClock clock;
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  Scheduler replica_a(*store_, clock, metrics, SchedulerOptions());
  Scheduler replica_b(*second, clock, metrics, SchedulerOptions());
  v1::RegisterAgentRequest info = AgentInfo("h1", "boot", 1);
  ASSERT_OK_AND_ASSIGN(registered, replica_b.RegisterAgent(info));
  // Give B's listener time to LISTEN (it connects on its own thread).
  clock.SleepFor(std::chrono::milliseconds(300));
  v1::LeaseJobRequest req;
  req.set_agent_id(registered.agent_id());
  req.set_wait_ms(30'000);
  auto* device = req.add_free_devices();
  device->set_device_id(0);
  device->set_soc("Ascend910B2");
  std::atomic<bool> stop{false};
  auto waiter = std::async(std::launch::async, [&] {
    return replica_b.LeaseJob(req, [&] { return stop.load(); });
  });
  clock.SleepFor(std::chrono::milliseconds(300));  // B is waiting now
  const auto submitted = clock.MonotonicNow();
  Insert(MakeCollection("c1", "team", 1));  // on replica A's store
  const bool woken = waiter.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  const absl::Duration took = absl::FromChrono(clock.MonotonicNow() - submitted);
  stop = true;  // ends B's wait at once if it was not woken
  ASSERT_TRUE(woken) << "replica B was not woken";
  auto got = waiter.get();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->collection_id(), "c1");
  EXPECT_LT(took, absl::Seconds(2)) << took;
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformanceTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const auto& info) {
                           return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace npuperf::server
