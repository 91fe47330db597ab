// Store conformance: claims, leases, adoption, expiry and cancellation (the fixture:
// store_conformance.h).
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/core/job_state.h"
#include "tests/server/store/store_conformance.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>
#endif

namespace npuperf::server {
namespace {

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
  auto of = [](const auto& got) { return got.value_or(v1::JobAssignment()).collection_id(); };
  EXPECT_EQ(of(Claim(Req("a3", {0, 1, 2}))), "capped");
  EXPECT_EQ(of(Claim(Req("a3", {0, 1, 2}))), "capped");
  EXPECT_EQ(of(Claim(Req("a3", {0, 1, 2}))), "low");
}

// At equal priority a claim goes to the team with the fewest live jobs,
// counted over all its collections, those with nothing left to queue
// included (a1 after the third claim); ties go to the queue order.
TEST_P(StoreConformanceTest, ClaimFavoursTheTeamWithTheFewestLiveJobsOverAllItsCollections) {
  Insert(MakeCollection("a1", "alpha", 2));
  Insert(MakeCollection("a2", "alpha", 3));
  Insert(MakeCollection("b1", "beta", 3));
  std::vector<std::string> got;
  for (int i = 0; i < 6; ++i) {
    auto a = Claim(Req(absl::StrCat("agent", i), {0}));
    ASSERT_TRUE(a) << i;
    got.push_back(a->collection_id());
  }
  EXPECT_EQ(got, (std::vector<std::string>{"a1", "b1", "a1", "b1", "a2", "b1"}));
}

TEST_P(StoreConformanceTest, ALeaseCarriesTheLaunchSelectorOfItsCaseElseOfItsOperator) {
  NewCollection c = MakeCollection("launch", "alpha", 2);
  c.spec.mutable_operators(0)->set_launch("all");
  (*c.spec.mutable_operators(0)->mutable_launch_map())["case1"] = "-1";
  Insert(c);
  std::map<std::string, std::string> launch_of_case;
  for (int i = 0; i < 2; ++i) {
    auto a = Claim(Req("a1", {0, 1}));
    ASSERT_TRUE(a);
    launch_of_case[a->case_id()] = a->launch();
  }
  EXPECT_EQ(launch_of_case,
            (std::map<std::string, std::string>{{"case0", "all"}, {"case1", "-1"}}));
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
    for (const auto& cand : cs) {
      absl::StrAppend(&seen, cand.collection_id, "/", cand.team, "/",
                      cand.spec->constraints().socs(0), " ");
    }
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

// One claim of several (Store::ClaimJobs, issue 36): a job on every free
// device up to the number of secrets, each lease with its own secret; the
// chooser sees the claim's own leases, so the cap holds within the claim.
TEST_P(StoreConformanceTest, OneClaimLeasesAJobForEachFreeDeviceUpToItsSecrets) {
  Insert(MakeCollection("capped", "alpha", 5, /*priority=*/5, /*cap=*/2));
  Insert(MakeCollection("low", "alpha", 3));
  ClaimRequest req = Req("a1", {0, 1, 2, 3, 4});
  req.more_lease_secrets = {"s1", "s2", "s3"};  // four leases at most
  ASSERT_OK_AND_ASSIGN(got, store_->ClaimJobs(req, ChooseClaim));
  ASSERT_EQ(got.size(), 4u);
  std::map<std::string, int> per_collection;
  std::set<int> devices;
  std::set<int64_t> jobs;
  std::set<std::string> secrets;
  for (const v1::JobAssignment& a : got) {
    ++per_collection[a.collection_id()];
    devices.insert(a.device_id());
    jobs.insert(a.job_id());
    secrets.insert(a.lease_secret());
    EXPECT_EQ(a.attempt(), 1);
    EXPECT_EQ(JobStateName(JobOf(a.collection_id(), a.job_id()).state()), "leased");
  }
  EXPECT_EQ(per_collection, (std::map<std::string, int>{{"capped", 2}, {"low", 2}}));
  EXPECT_EQ(devices.size(), 4u);
  EXPECT_EQ(jobs.size(), 4u);
  EXPECT_EQ(secrets, (std::set<std::string>{req.lease_secret, "s1", "s2", "s3"}));
  // Each lease answers to its own secret and to no other.
  std::vector<AttemptRef> own, swapped;
  for (size_t i = 0; i < got.size(); ++i) {
    own.push_back(Ref(got[i]));
    swapped.push_back(Ref(got[i]));
    swapped.back().lease_secret = got[(i + 1) % got.size()].lease_secret();
  }
  ASSERT_OK_AND_ASSIGN(held, store_->RenewLeases("a1", own, 2001, kTtl));
  EXPECT_EQ(held.renewed.size(), 4u);
  ASSERT_OK_AND_ASSIGN(refused, store_->RenewLeases("a1", swapped, 2002, kTtl));
  EXPECT_TRUE(refused.renewed.empty());
  ASSERT_EQ(refused.dropped.size(), 4u);
  EXPECT_EQ(refused.dropped[0].reason, AgentRefusal::kBadSecret);
  // The fifth device: the cap still holds, "low" has its last job.
  ASSERT_OK_AND_ASSIGN(rest, store_->ClaimJobs(req, ChooseClaim));
  ASSERT_EQ(rest.size(), 1u);
  int free_device = -1;
  for (int d = 0; d < 5; ++d) {
    if (!devices.contains(d)) free_device = d;
  }
  EXPECT_EQ(absl::StrCat(rest[0].collection_id(), " ", rest[0].device_id()),
            absl::StrCat("low ", free_device));
  ASSERT_OK_AND_ASSIGN(none, store_->ClaimJobs(req, ChooseClaim));
  EXPECT_TRUE(none.empty());  // every device leased
}

TEST_P(StoreConformanceTest, AClaimOfSeveralStopsAtTheLastQueuedJob) {
  Insert(MakeCollection("two", "alpha", 2));
  ClaimRequest req = Req("a1", {0, 1, 2, 3});
  req.more_lease_secrets = {"s1", "s2", "s3"};
  ASSERT_OK_AND_ASSIGN(got, store_->ClaimJobs(req, ChooseClaim));
  EXPECT_EQ(got.size(), 2u);
  ASSERT_OK_AND_ASSIGN(none, store_->ClaimJobs(req, ChooseClaim));
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(StateOf("two"), v1::COLLECTION_STATE_RUNNING);
}

// A backend may find the queue heads one collection at a time (SQLite walks
// its index of queued jobs by collection id): every collection with a queued
// job is still found, whatever sorts next to it (a collection with nothing
// queued, one with a live job), and stands for its oldest queued job.
TEST_P(StoreConformanceTest, EveryCollectionWithAQueuedJobIsAHeadByItsOldestQueuedJob) {
  Insert(MakeCollection("m-first", "alpha", 2, /*priority=*/9));
  Insert(MakeCollection("b-done", "alpha", 1, /*priority=*/8));
  NewCollection later = MakeCollection("z-later", "alpha", 1);
  later.now_ms = 3000;
  Insert(later);
  NewCollection rest = MakeCollection("a-rest", "alpha", 3, /*priority=*/7);
  rest.now_ms = 4000;
  Insert(rest);
  auto ids_of = [&](const std::string& collection) {
    const v1::Collection c = store_->GetCollection("", collection).value_or(v1::Collection());
    std::vector<int64_t> ids;
    for (const auto& j : c.jobs()) ids.push_back(j.id());
    return ids;
  };
  const std::vector<int64_t> m = ids_of("m-first"), z = ids_of("z-later"), a = ids_of("a-rest");
  ASSERT_EQ(a.size(), 3u);
  int device = 0;  // each claim on a device of its own, for Finish's agent
  auto claim = [&] { return Claim(Req("a1", {device++})); };
  auto first = claim();  // m-first: one job finished, one live
  ASSERT_TRUE(first);
  Finish(*first, "u1", 2100, 10);
  EXPECT_EQ(claim().value_or(v1::JobAssignment()).job_id(), m[1]);
  auto done = claim();  // b-done: its only job finished
  ASSERT_TRUE(done);
  EXPECT_EQ(done->collection_id(), "b-done");
  Finish(*done, "u2", 2200, 10);
  EXPECT_EQ(claim().value_or(v1::JobAssignment()).job_id(), a[0]);  // a-rest: one live

  ASSERT_OK_AND_ASSIGN(queued, store_->CountQueuedByCollection(10));
  ASSERT_EQ(queued.size(), 2u);
  EXPECT_EQ(absl::StrCat(queued[0].collection_id, " ", queued[0].queued, " ",
                         queued[0].oldest_queued_ms, ", ", queued[1].collection_id, " ",
                         queued[1].queued, " ", queued[1].oldest_queued_ms),
            "z-later 1 3000, a-rest 2 4000");
  std::vector<int64_t> got;
  for (auto lease = claim(); lease; lease = claim()) got.push_back(lease->job_id());
  EXPECT_EQ(got, (std::vector<int64_t>{a[1], a[2], z[0]}));
  ASSERT_OK_AND_ASSIGN(none, store_->CountQueuedByCollection(10));
  EXPECT_TRUE(none.empty());
}

TEST_P(StoreConformanceTest, AClaimWithAnEmptySecretIsRefusedAndLeasesNothing) {
  Insert(MakeCollection("c1", "alpha", 2));
  ClaimRequest req = Req("a1", {0, 1});
  req.more_lease_secrets = {""};
  EXPECT_TRUE(absl::IsInvalidArgument(store_->ClaimJobs(req, ChooseClaim).status()));
  ASSERT_OK_AND_ASSIGN(c, store_->GetCollection("", "c1"));
  ASSERT_EQ(c.jobs_size(), 2);
  EXPECT_EQ(c.jobs(0).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(c.jobs(1).state(), v1::JOB_STATE_QUEUED);
}

// A claim of several skips a collection another claim holds and leases from
// the next one in the same call, without waiting for the lock.
TEST_P(StoreConformanceTest, AClaimOfSeveralPassesOverACollectionAnotherClaimHolds) {
#if NPUPERF_WITH_POSTGRES
  if (GetParam() != Backend::kPostgres) GTEST_SKIP() << "SQLite claims one at a time";
  Insert(MakeCollection("held", "alpha", 4, /*priority=*/5));
  Insert(MakeCollection("next", "beta", 4));
  pqxx::connection conn(pg_->url());
  pqxx::work holder(conn);
  holder.exec("SELECT id FROM collections WHERE id = 'held' FOR UPDATE");
  // Should the claim wait for the lock after all, it is let go after 20 s
  // and the leases come from "held".
  std::atomic<bool> claimed{false};
  std::thread release([&] {
    for (int i = 0; i < 200 && !claimed.load(); ++i) {
      clock_.SleepFor(std::chrono::milliseconds(100));
    }
    holder.abort();
  });
  ClaimRequest req = Req("a1", {0, 1});
  req.more_lease_secrets = {"s1"};
  auto got = store_->ClaimJobs(req, ChooseClaim);
  claimed = true;
  release.join();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].collection_id(), "next");
  EXPECT_EQ((*got)[1].collection_id(), "next");
#else
  GTEST_SKIP() << "built without PostgreSQL";
#endif
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
  EXPECT_EQ(r.dropped[0].ref.fencing_token, stale.fencing_token);
  EXPECT_EQ(r.dropped[0].reason, AgentRefusal::kStaleLease);
  ASSERT_EQ(r.renewed.size(), 1u);
  EXPECT_EQ(r.renewed[0].fencing_token, a->fencing_token());
  EXPECT_TRUE(r.cancelled.empty());
  // Renewed: not expired at the original deadline.
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  EXPECT_TRUE(expired.empty());
  // Another agent cannot renew it.
  ASSERT_OK_AND_ASSIGN(foreign, store_->RenewLeases("a2", {Ref(*a)}, 5000, kTtl));
  ASSERT_EQ(foreign.dropped.size(), 1u);
  EXPECT_EQ(foreign.dropped[0].reason, AgentRefusal::kForeignAgent);
  ASSERT_TRUE(store_->CancelCollection("alpha", "c1", "user", 6000).ok());
  ASSERT_OK_AND_ASSIGN(after, store_->RenewLeases("a1", {Ref(*a)}, 6001, kTtl));
  EXPECT_TRUE(after.dropped.empty());
  ASSERT_EQ(after.cancelled.size(), 1u);
  EXPECT_EQ(after.cancelled[0].job_id, a->job_id());
}

// A heartbeat rewrites a lease only once less than half its TTL is left
// (issue 36): before that the lease is held (renewed, cancels reported) and
// its expiry stays.
TEST_P(StoreConformanceTest, RenewLeasesRewritesALeaseOnlyOnceHalfItsTtlIsGone) {
  Insert(MakeCollection("c1", "alpha", 2));
  auto a = Claim(Req("a1", {0}));  // both at 2000: expire at 2000 + kTtl
  auto b = Claim(Req("a1", {1}));
  ASSERT_TRUE(a && b);
  // Half the TTL left: held, not rewritten.
  ASSERT_OK_AND_ASSIGN(early, store_->RenewLeases("a1", {Ref(*a)}, 2000 + kTtl / 2, kTtl));
  ASSERT_EQ(early.renewed.size(), 1u);
  EXPECT_TRUE(early.dropped.empty());
  // One millisecond less: due, so it now runs a whole TTL from then.
  ASSERT_OK_AND_ASSIGN(due, store_->RenewLeases("a1", {Ref(*b)}, 2001 + kTtl / 2, kTtl));
  ASSERT_EQ(due.renewed.size(), 1u);
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].job_id, a->job_id());
  ASSERT_OK_AND_ASSIGN(kept, store_->ExpireLeases(2001 + kTtl / 2 + kTtl, 3));
  EXPECT_TRUE(kept.empty());
  ASSERT_OK_AND_ASSIGN(later, store_->ExpireLeases(2002 + kTtl / 2 + kTtl, 3));
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].job_id, b->job_id());
}

// A cancel is reported to a held lease whether or not it was due.
TEST_P(StoreConformanceTest, RenewLeasesReportsACancelToALeaseNotYetDue) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_TRUE(store_->CancelCollection("alpha", "c1", "user", 2100).ok());
  ASSERT_OK_AND_ASSIGN(r, store_->RenewLeases("a1", {Ref(*a)}, 2200, kTtl));
  ASSERT_EQ(r.renewed.size(), 1u);
  ASSERT_EQ(r.cancelled.size(), 1u);
  EXPECT_EQ(r.cancelled[0].job_id, a->job_id());
}

TEST_P(StoreConformanceTest, AdoptAttemptsOnReRegistration) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 2), 100).ok());
  Insert(MakeCollection("c1", "alpha", 1));
  ClaimRequest req = ReqOnHost("h1", "a1", {0});
  auto a = Claim(req);
  ASSERT_TRUE(a);
  ASSERT_TRUE(store_->UpsertAgent("a1b", AgentInfo("h1", "boot1", 2), 2500).ok());
  AttemptRef wrong = Ref(*a);
  wrong.fencing_token = 99;
  ASSERT_OK_AND_ASSIGN(adopted, store_->AdoptAttempts("a1b", {wrong, Ref(*a)}, 2600, kTtl));
  ASSERT_EQ(adopted.renewed.size(), 1u);
  EXPECT_EQ(adopted.renewed[0].fencing_token, a->fencing_token());
  ASSERT_EQ(adopted.dropped.size(), 1u);
  EXPECT_EQ(adopted.dropped[0].reason, AgentRefusal::kStaleLease);
  EXPECT_EQ(JobOf("c1", a->job_id()).placement().agent_id(), "a1b");
  // An agent on another host cannot adopt it, nor one without the secret;
  // an expired lease is not adopted.
  ASSERT_TRUE(store_->UpsertAgent("x", AgentInfo("h2", "boot9", 1), 2700).ok());
  ASSERT_OK_AND_ASSIGN(foreign, store_->AdoptAttempts("x", {Ref(*a)}, 2700, kTtl));
  ASSERT_EQ(foreign.dropped.size(), 1u);
  EXPECT_EQ(foreign.dropped[0].reason, AgentRefusal::kForeignAgent);
  AttemptRef guessed = Ref(*a);
  guessed.lease_secret = "guess";
  ASSERT_OK_AND_ASSIGN(bad, store_->AdoptAttempts("a1b", {guessed}, 2700, kTtl));
  ASSERT_EQ(bad.dropped.size(), 1u);
  EXPECT_EQ(bad.dropped[0].reason, AgentRefusal::kBadSecret);
  EXPECT_TRUE(store_->AdoptAttempts("a1b", {Ref(*a)}, 2600 + kTtl + 1, kTtl)->renewed.empty());
}

// ---- Expiry and cancellation ----

// Issue #18 (the chaos soak): an agent killed -9 and restarted registers as a
// new instance of its host and offers the same devices, while its
// predecessor's lease still holds one of them until it expires. That device is
// not handed out again before the lease ends; another host's device 0 is.
TEST_P(StoreConformanceTest, ARestartedAgentIsNotHandedItsPredecessorsLeasedDevice) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 2), 100).ok());
  Insert(MakeCollection("c1", "alpha", 4));
  ClaimRequest first = ReqOnHost("h1", "a1", {0});
  auto a = Claim(first);
  ASSERT_TRUE(a);
  ASSERT_TRUE(store_->UpsertAgent("a1b", AgentInfo("h1", "boot1", 2), 2500).ok());
  ClaimRequest restarted = ReqOnHost("h1", "a1b", {0, 1}, 2600);
  auto b = Claim(restarted);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->device_id(), 1) << "device 0 is still leased to the replaced instance";
  ClaimRequest only0 = ReqOnHost("h1", "a1b", {0}, 2700);
  EXPECT_FALSE(Claim(only0));
  ClaimRequest elsewhere = ReqOnHost("h2", "x", {0}, 2700);
  EXPECT_TRUE(Claim(elsewhere));
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].job_id, a->job_id());
  only0.now_ms = 2000 + kTtl + 2;
  EXPECT_TRUE(Claim(only0));
}

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

// ---- Placement history (core/placement.h) ----

// run_ms is the device time of the attempt that succeeded: from its lease to
// its result. Failures give nothing, a retry counts from its own lease, and
// the newest runs come first.
TEST_P(StoreConformanceTest, ASucceededJobGivesItsDurationKeyTheTimeFromItsLeaseToItsResult) {
  NewCollection first = MakeCollection("h1", "alpha", 3, 0, 8, /*retry=*/1);
  first.jobs[0].duration_key = "aa01";
  first.jobs[1].duration_key = "bb02";  // fails for good
  Insert(first);                        // jobs[2] has no key
  auto a = Claim(Req("a1", {0, 1, 2}, 2000));
  auto b = Claim(Req("a1", {0, 1, 2}, 2500));
  auto c = Claim(Req("a1", {0, 1, 2}, 2600));
  ASSERT_TRUE(a && b && c);
  EXPECT_GT(Finish(*a, "u-a", 5000, 10.0), 0);
  AttemptResult fail = Result(*b, "u-b", v1::ATTEMPT_OUTCOME_FAILED, 4000);
  fail.retryable = false;
  ASSERT_TRUE(store_->RecordResult(fail).ok());
  EXPECT_GT(Finish(*c, "u-c", 9000, 10.0), 0);
  auto runs = store_->RecentRunTimes({"aa01", "bb02", "", "cc03", "no'hex"}, 5);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(*runs, (std::map<std::string, std::vector<int64_t>>{{"aa01", {3000}}}));

  NewCollection second = MakeCollection("h2", "alpha", 1, 0, 8, /*retry=*/1);
  second.jobs[0].duration_key = "aa01";
  Insert(second);
  auto d = Claim(Req("a1", {0}, 20'000));
  ASSERT_TRUE(d);
  ASSERT_TRUE(store_->RecordResult(Result(*d, "u-d1", v1::ATTEMPT_OUTCOME_FAILED, 21'000)).ok());
  auto retry = Claim(Req("a1", {0}, 30'000));  // the retry, leased again
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->job_id(), d->job_id());
  EXPECT_GT(Finish(*retry, "u-d2", 30'500, 10.0), 0);
  auto newest = store_->RecentRunTimes({"aa01"}, 5);
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_EQ((*newest)["aa01"], (std::vector<int64_t>{500, 3000}));
  auto one = store_->RecentRunTimes({"aa01"}, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)["aa01"], (std::vector<int64_t>{500}));
}

}  // namespace
}  // namespace npuperf::server
