// Store conformance: tokens, bundles, collections, agents and the state gauges (the fixture:
// store_conformance.h). The suite's one INSTANTIATE_TEST_SUITE_P is at the end of this file.
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/core/job_state.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// ---- Tokens and bundles ----

TEST_P(StoreConformanceTest, Tokens) {
  EXPECT_EQ(store_->CountTokens().value_or(-1), 0);
  ASSERT_TRUE(store_->InsertToken("h1", "team", "alpha", 1).ok());
  ASSERT_OK_AND_ASSIGN(got, store_->LookupToken("h1"));
  EXPECT_EQ(got, std::make_pair(std::string("team"), std::string("alpha")));
  EXPECT_TRUE(absl::IsNotFound(store_->LookupToken("nope").status()));
  EXPECT_TRUE(absl::IsAlreadyExists(store_->InsertToken("h1", "agent", "x", 2)));
  EXPECT_EQ(store_->CountTokens().value_or(-1), 1);
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

// Every field of a job as a page of its collection gives it, each from the
// write that set it: the queue, the claim (placement, start), a progress
// report, a result (round, figures, finish).
TEST_P(StoreConformanceTest, ACollectionPageCarriesEveryFieldOfItsJobs) {
  Insert(MakeCollection("c1", "alpha", 2));  // queued at 1000
  auto a = Claim(Req("a1", {3}, 2000, "Ascend910B3"));
  ASSERT_TRUE(a);
  v1::JobProgress p;
  p.set_phase(v1::JOB_PHASE_METRIC_RUN);
  p.set_step(4);
  p.set_step_count(7);
  p.set_detail("Memory");
  ASSERT_TRUE(store_->RecordProgress("a1", Ref(*a), p, 2100, kTtl).ok());
  auto b = Claim(Req("a2", {5}, 2200));
  ASSERT_TRUE(b);
  ASSERT_OK_AND_ASSIGN(
      ack, store_->RecordResult(Result(*b, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED, 3000, 12.5, "a2")));
  const int64_t round = ack.round_id;
  ASSERT_GT(round, 0);
  ASSERT_OK_AND_ASSIGN(page, store_->GetCollectionPage("alpha", "c1", 0, 10));
  ASSERT_EQ(page.jobs_size(), 2);
  const bool a_first = page.jobs(0).id() == a->job_id();
  const v1::Job& running = page.jobs(a_first ? 0 : 1);
  const v1::Job& done = page.jobs(a_first ? 1 : 0);
  auto ms = [](const google::protobuf::Timestamp& t) {
    return google::protobuf::util::TimeUtil::TimestampToMilliseconds(t);
  };
  EXPECT_EQ(
      absl::StrCat(running.id(), " ", running.collection_id(), " ", running.operator_name(), " ",
                   running.case_id(), " ", running.op_name(), " ", JobStateName(running.state()),
                   " ", running.attempt(), "/", running.max_attempts()),
      absl::StrCat(a->job_id(), " c1 op_a ", a->case_id(), " OpA running 1/1"));
  EXPECT_EQ(absl::StrCat(running.placement().agent_id(), " ", running.placement().host(), " ",
                         running.placement().device_id(), " ", running.placement().soc()),
            "a1 host-a1 3 Ascend910B3");
  EXPECT_EQ(running.progress().SerializeAsString(), p.SerializeAsString());
  EXPECT_EQ(running.round_id(), 0);
  EXPECT_FALSE(running.has_finished_at()) << "unset, not 1970-01-01";
  EXPECT_FALSE(page.has_finished_at());
  EXPECT_EQ(absl::StrCat(ms(running.queued_at()), " ", ms(running.started_at())), "1000 2000");
  EXPECT_EQ(absl::StrCat(JobStateName(done.state()), " ", done.placement().agent_id(), " ",
                         done.placement().host(), " ", done.placement().device_id(), " ",
                         done.placement().soc()),
            "succeeded a2 host-a2 5 Ascend910B2");
  EXPECT_EQ(absl::StrCat(done.round_id(), " ", done.kernel_time_us(), " ", done.bound_label()),
            absl::StrCat(round, " 12.5 compute"));
  EXPECT_EQ(
      absl::StrCat(ms(done.queued_at()), " ", ms(done.started_at()), " ", ms(done.finished_at())),
      "1000 2200 3000");
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
  ClaimRequest req = ReqOnHost("h1", "a1", {1});
  auto a = Claim(req);
  ASSERT_TRUE(a);
  ASSERT_OK_AND_ASSIGN(agents, store_->ListAgents());
  ASSERT_EQ(agents.size(), 1u);
  const v1::AgentStatus& s = agents[0].status;
  EXPECT_EQ(s.state(), "online");
  EXPECT_EQ(s.labels().at("rack"), "r1");
  ASSERT_EQ(s.devices_size(), 2);
  EXPECT_EQ(s.devices(0).state(), "idle");
  EXPECT_EQ(s.devices(1).state(), "busy");
  EXPECT_EQ(s.devices(1).job_id(), a->job_id());
  EXPECT_EQ(agents[0].job_teams, (std::vector<std::string>{"", "alpha"}));
  // A new instance of the same host, boot and slot replaces the old one.
  ASSERT_TRUE(store_->UpsertAgent("a2", AgentInfo("h1", "boot1", 2), 200).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->GetAgent("a1").status()));
  EXPECT_TRUE(store_->GetAgent("a2").ok());
  // Another installation on the host (another slot) is another agent: both stay.
  v1::RegisterAgentRequest other = AgentInfo("h1", "boot1", 2);
  other.set_slot("second-work-dir");
  ASSERT_TRUE(store_->UpsertAgent("a3", other, 300).ok());
  EXPECT_TRUE(store_->GetAgent("a2").ok());
  EXPECT_TRUE(store_->GetAgent("a3").ok());
  ASSERT_TRUE(store_->UpsertAgent("a4", other, 400).ok());  // a3 restarted
  EXPECT_TRUE(absl::IsNotFound(store_->GetAgent("a3").status()));
  EXPECT_TRUE(store_->GetAgent("a2").ok());
}

// ---- Gauges ----

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

// The job counts (the state gauges) after every kind of transition equal a
// recount of the jobs, and a state no job is in is absent: the specification
// for a backend that keeps counts as jobs move rather than count them.
TEST_P(StoreConformanceTest, CountByStateFollowsEveryJobTransition) {
  Insert(MakeCollection("c1", "team", 4));
  Insert(MakeCollection("c2", "team", 2));
  auto stored = [&] {
    std::map<v1::JobState, int64_t> n;
    for (const auto& [state, count] : store_->CountByState().value_or(StateCounts()).jobs) {
      if (count != 0) n[state] = count;
    }
    return n;
  };
  auto recount = [&] {
    std::map<v1::JobState, int64_t> n;
    for (const char* id : {"c1", "c2"}) {
      const v1::Collection c = store_->GetCollection("", id).value_or(v1::Collection());
      for (const auto& j : c.jobs()) ++n[j.state()];
    }
    return n;
  };
  EXPECT_EQ(stored(), recount()) << "inserted";
  std::vector<v1::JobAssignment> leases;
  for (int d = 0; d < 4; ++d) {
    auto a = Claim(Req("a1", {d}));
    ASSERT_TRUE(a) << d;
    leases.push_back(*a);
  }
  EXPECT_EQ(stored(), recount()) << "leased";
  ASSERT_TRUE(store_->RecordProgress("a1", Ref(leases[0]), v1::JobProgress(), 2100, kTtl).ok());
  EXPECT_EQ(stored(), recount()) << "running";
  Finish(leases[1], "u1", 2200, 10);
  ASSERT_TRUE(store_->RecordResult(Result(leases[2], "u2", v1::ATTEMPT_OUTCOME_FAILED, 2300)).ok());
  EXPECT_EQ(stored(), recount()) << "finished";
  ASSERT_TRUE(store_->ExpireLeases(10 * kTtl + 10'000, /*max_lost=*/1).ok());
  EXPECT_EQ(stored(), recount()) << "expired";
  ASSERT_TRUE(store_->CancelCollection("team", "c2", "enough", 3000).ok());
  EXPECT_EQ(stored(), recount()) << "cancelled";
  EXPECT_EQ(stored().count(v1::JOB_STATE_LEASED), 0u);
  EXPECT_EQ(stored()[v1::JOB_STATE_CANCELLED], 2);
}

// The jobs of a finished collection never change again, so they are counted
// once, in the database (migration 0027): the first refresh beside many
// finished collections counts them, one that finishes later is added once,
// and a second store on the same database agrees.
TEST_P(StoreConformanceTest, CountByStateCountsEachFinishedCollectionOnceAndStoresAgree) {
  UseSqliteFile();
  for (int i = 0; i < 300; ++i) {
    const std::string id = absl::StrCat("f", i);
    Insert(MakeCollection(id, "team", 1));
    ASSERT_TRUE(store_->CancelCollection("team", id, "done", 1500).ok()) << id;
  }
  Insert(MakeCollection("live", "team", 2));
  auto jobs = [](Store& store) {
    std::string out;
    for (const auto& [state, n] : store.CountByState().value_or(StateCounts()).jobs) {
      if (n != 0) absl::StrAppend(&out, JobStateName(state), " ", n, " ");
    }
    return out;
  };
  EXPECT_EQ(jobs(*store_), "queued 2 cancelled 300 ");
  for (int d = 0; d < 2; ++d) {
    auto a = Claim(Req("a1", {d}));
    ASSERT_TRUE(a) << d;
    Finish(*a, absl::StrCat("u", d), 2100, 10);
  }
  EXPECT_EQ(StateOf("live"), v1::COLLECTION_STATE_SUCCEEDED);
  EXPECT_EQ(jobs(*store_), "succeeded 2 cancelled 300 ");
  EXPECT_EQ(jobs(*store_), "succeeded 2 cancelled 300 ");  // counted once
  ASSERT_OK_AND_ASSIGN(other, OpenStore());
  EXPECT_EQ(jobs(*other), "succeeded 2 cancelled 300 ");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformanceTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const auto& param_info) {
                           return param_info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace npuperf::server
