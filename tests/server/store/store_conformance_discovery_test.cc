// Store conformance: discovery jobs (PROFILE_MODE_DISCOVER, issue 15): their
// candidate table is stored with the job, no round; a result of the wrong kind
// fails the job for good (the fixture: store_conformance.h).
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

// A discovery collection: its jobs have no op name (submission.h).
NewCollection DiscoveryCollection(const std::string& id, int jobs) {
  NewCollection c = MakeCollection(id, "alpha", jobs);
  c.spec.mutable_params()->set_mode(v1::PROFILE_MODE_DISCOVER);
  for (NewJob& j : c.jobs) j.op_name.clear();
  return c;
}

v1::DiscoveryResult Table() {
  v1::DiscoveryResult d;
  auto* k = d.add_candidates();
  k->set_op_name("inplace_add_rmsnorm_v2_0_mix_aiv");
  k->set_task_type("AI_VECTOR_CORE");
  k->set_count(3);
  k->set_total_duration_us(295.2);
  auto* l = k->add_launches();
  l->set_index(1);
  l->set_stream_id(2);
  l->set_task_id(7);
  l->set_start_us(-1);
  l->set_duration_us(98.4);
  auto* cast = d.add_candidates();
  cast->set_op_name("Cast_1");
  cast->set_count(1);
  cast->set_incidental("incidental kernel Cast");
  d.set_source("discovery/PROF_1/task_time_1.csv (task_time)");
  d.add_notes("skipped nothing");
  return d;
}

AttemptResult TableResult(const v1::JobAssignment& a, const std::string& uuid) {
  AttemptResult r = Result(a, uuid, v1::ATTEMPT_OUTCOME_SUCCEEDED);
  r.evidence.Clear();
  r.metrics.clear();
  r.discovery = Table();
  return r;
}

TEST_P(StoreConformanceTest, DiscoveryJobStoresItsCandidateTableAndNoRound) {
  Insert(DiscoveryCollection("c1", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->op_name(), "");
  EXPECT_EQ(a->params().mode(), v1::PROFILE_MODE_DISCOVER);
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(TableResult(*a, "u1")));
  EXPECT_FALSE(ack.duplicate);
  EXPECT_EQ(ack.round_id, 0);
  ASSERT_OK_AND_ASSIGN(again, store_->RecordResult(TableResult(*a, "u1")));
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(RoundCount("alpha"), 0u);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.round_id(), 0);
  EXPECT_EQ(job.discovery().SerializeAsString(), Table().SerializeAsString());
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_SUCCEEDED);
  // The device is free again: the lease ended with the result.
  EXPECT_FALSE(Claim(Req("a1", {0}, 4000)));
}

TEST_P(StoreConformanceTest, ADiscoveryJobReportingEvidenceFailsForGood) {
  // Two jobs: a success that leaves its collection RUNNING is PostgreSQL's
  // one-call path (npuperf_result), which must see the job is discovery.
  Insert(DiscoveryCollection("c1", 2));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED)));
  EXPECT_EQ(ack.round_id, 0);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(job.reason(), "a discovery job must report a candidate table"))
      << job.reason();
  EXPECT_FALSE(job.has_discovery());
  EXPECT_EQ(RoundCount("alpha"), 0u);
}

TEST_P(StoreConformanceTest, ACandidateTableFromAProfilingJobFailsItForGood) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/2));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(TableResult(*a, "u1")));
  EXPECT_EQ(ack.round_id, 0);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);  // not retried despite retry=2
  EXPECT_TRUE(absl::StrContains(job.reason(), "not discovery")) << job.reason();
  EXPECT_FALSE(job.has_discovery());
  EXPECT_EQ(RoundCount("alpha"), 0u);
}

TEST_P(StoreConformanceTest, AFailedDiscoveryAttemptIsRetriedWithoutATable) {
  NewCollection c = DiscoveryCollection("c1", 1);
  c.spec.mutable_params()->set_retry(1);
  Insert(c);
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_TRUE(store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_FAILED)).ok());
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_FALSE(job.has_discovery());
  auto b = Claim(Req("a1", {0}, 5000));
  ASSERT_TRUE(b);
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(TableResult(*b, "u2")));
  EXPECT_EQ(ack.round_id, 0);
  EXPECT_EQ(JobOf("c1", b->job_id()).discovery().candidates(0).op_name(),
            "inplace_add_rmsnorm_v2_0_mix_aiv");
}

}  // namespace
}  // namespace npuperf::server
