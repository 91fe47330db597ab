// Timelines (compare/timelines.h) over the real Scheduler and SQLite: a timeline is an ordinary
// one-job collection pinned to the formal round's device, with the round's target and protocol;
// its result is anchored by the server to that round and stays out of series and comparisons.
#include "server/compare/timelines.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/compare/comparator.h"
#include "server/core/limits.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

class TimelinesTest : public SchedulerFixture {
 protected:
  TimelinesTest()
      : timelines_(
            *store_,
            [this](const std::string& team, const v1::SubmitCollectionRequest& req,
                   const std::map<std::string, std::string>& labels) {
              return scheduler_.SubmitForServer(team, req, labels);
            },
            [this](const std::string& team, const std::string& id, const std::string& reason) {
              return scheduler_.Cancel(team, id, reason).status();
            }) {}

  // A formal (standard) round of case c<case_index> measured on (agent, device) as the agent
  // reports it; host is the fingerprint's (the agent's own unless given).
  int64_t FormalRound(const std::string& agent, int device, const std::string& mode = "standard",
                      int cases = 1, const std::string& host = "") {
    v1::SubmitCollectionRequest req = Request(cases);
    req.mutable_spec()->mutable_params()->set_mode(mode == "quick" ? v1::PROFILE_MODE_QUICK
                                                                   : v1::PROFILE_MODE_STANDARD);
    (*req.mutable_spec()->mutable_labels())["branch"] = "main";
    last_collection_ = Submit(req);
    int64_t round = 0;
    for (int i = 0; i < cases; ++i) {
      auto a = Lease(agent, device);
      EXPECT_TRUE(a.has_value());
      if (!a) return 0;
      v1::ReportResultRequest r =
          ResultOf(*a, absl::StrCat("u", a->job_id()), v1::ATTEMPT_OUTCOME_SUCCEEDED);
      v1::Evidence* e = r.mutable_evidence();
      e->set_op_name("kernel");
      e->mutable_duration()->add_samples_us(10);
      e->mutable_duration()->set_aggregate_us(10);
      v1::Fingerprint* f = e->mutable_fingerprint();
      f->set_mode(mode);
      f->set_soc("Ascend910B2");
      f->set_host(host.empty() ? hosts_[agent] : host);
      f->set_device_id(device);
      f->set_bundle_sha256(a->bundle_sha256());
      f->set_seed(a->params().seed());
      f->set_warm_up(a->params().warm_up());
      auto got = scheduler_.ReportResult(Holder(*a), r);
      EXPECT_TRUE(got.ok()) << got.status();
      round = got.ok() ? got->round_id() : 0;
    }
    return round;
  }

  absl::StatusOr<v1::SubmitTimelineResponse> Ask(std::vector<int64_t> rounds) {
    v1::SubmitTimelineRequest req;
    for (int64_t r : rounds) req.add_round_ids(r);
    return timelines_.Submit("team", req);
  }

  // What the agent reports for a timeline job (agent/timeline_run.cc).
  static v1::Evidence TimelineEvidence(int64_t claimed_anchor) {
    v1::Evidence e;
    e.set_op_name("kernel");
    e.mutable_fingerprint()->set_mode("timeline");
    v1::TimelineSummary* t = e.mutable_timeline();
    t->set_anchor_round_id(claimed_anchor);
    t->set_attribution_status("unique_exact_target_window");
    t->set_pipeline_evidence_status("requires_tile_dag_correlation");
    t->set_target_duration_ns(20000);
    t->set_monitored_lanes(2);
    t->set_overlap_ns(5000);
    return e;
  }

  std::string last_collection_;
  Timelines timelines_;
};

TEST_F(TimelinesTest, ATimelineIsQueuedOnTheRoundsDeviceWithItsTargetAndProtocol) {
  const std::string h1 = Register("h1");
  const int64_t round = FormalRound(h1, 1);
  auto got = Ask({round});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->runs_size(), 1);
  const v1::TimelineRun& run = got->runs(0);
  EXPECT_EQ(run.round_id(), round);
  EXPECT_EQ(run.case_id(), "c0");
  EXPECT_TRUE(run.created());
  auto c = store_->GetCollection("team", run.collection_id());
  ASSERT_TRUE(c.ok()) << c.status();
  const v1::CollectionSpec& spec = c->spec();
  EXPECT_EQ(spec.params().mode(), v1::PROFILE_MODE_TIMELINE);
  EXPECT_EQ(spec.params().repeats(), 1);
  EXPECT_EQ(spec.params().seed(), 42);
  EXPECT_EQ(spec.params().warm_up(), 1);
  EXPECT_TRUE(spec.params().keep_raw_output());
  EXPECT_EQ(spec.constraints().host(), "h1");
  EXPECT_EQ(spec.constraints().device_range(), "1");
  ASSERT_EQ(spec.operators_size(), 1);
  EXPECT_EQ(spec.operators(0).op_name(), "kernel");
  EXPECT_EQ(spec.operators(0).case_ids(0), "c0");
  EXPECT_EQ(spec.labels().at(kTimelineOfLabel), absl::StrCat(round));
  EXPECT_EQ(spec.labels().at("branch"), "main");
  // Only the round's device takes it.
  EXPECT_FALSE(Lease(h1, 0).has_value());
  auto a = Lease(h1, 1);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->params().mode(), v1::PROFILE_MODE_TIMELINE);
  EXPECT_EQ(a->op_name(), "kernel");
  EXPECT_EQ(a->case_id(), "c0");
}

TEST_F(TimelinesTest, AskingAgainWhileOneIsQueuedReturnsIt) {
  const std::string h1 = Register("h1");
  const int64_t round = FormalRound(h1, 0);
  auto first = Ask({round});
  auto again = Ask({round});
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(again->runs(0).collection_id(), first->runs(0).collection_id());
  EXPECT_FALSE(again->runs(0).created());
}

TEST_F(TimelinesTest, ItsResultIsAnchoredByTheServerAndStaysOutOfSeriesAndComparisons) {
  const std::string h1 = Register("h1");
  const int64_t round = FormalRound(h1, 0);
  auto got = Ask({round});
  ASSERT_TRUE(got.ok()) << got.status();
  auto a = Lease(h1, 0);
  ASSERT_TRUE(a.has_value());
  v1::ReportResultRequest r = ResultOf(*a, "t1", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  *r.mutable_evidence() = TimelineEvidence(/*claimed_anchor=*/999);  // the agent's claim
  auto stored = scheduler_.ReportResult(Holder(*a), r);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_GT(stored->round_id(), 0);
  auto t = store_->GetRound("team", stored->round_id());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->evidence().timeline().anchor_round_id(), round);
  // Listings leave it out unless asked by its label.
  RoundFilter f;
  f.team = "team";
  f.limit = 10;
  auto listed = store_->ListRounds(f);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->rounds.size(), 1u);
  EXPECT_EQ(listed->rounds[0].id(), round);
  f.labels = {{kTimelineOfLabel, absl::StrCat(round)}};
  f.include_server_rounds = true;
  listed = store_->ListRounds(f);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->rounds.size(), 1u);
  EXPECT_EQ(listed->rounds[0].id(), stored->round_id());
  // It is never compared with the formal round.
  auto formal = store_->GetRound("team", round);
  ASSERT_TRUE(formal.ok());
  const v1::RoundComparison cmp = CompareRounds(*formal, *t, VerdictOptions{});
  EXPECT_EQ(cmp.verdict(), v1::VERDICT_NOT_COMPARABLE);
  EXPECT_TRUE(absl::StrContains(cmp.rule(), "instruction timeline")) << cmp.rule();
}

TEST_F(TimelinesTest, TimelineEvidenceFromAJobThatIsNotATimelineIsRejected) {
  const std::string h1 = Register("h1");
  Submit(1);
  auto a = Lease(h1, 0);
  ASSERT_TRUE(a.has_value());
  v1::ReportResultRequest r = ResultOf(*a, "t1", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  *r.mutable_evidence() = TimelineEvidence(1);
  auto got = scheduler_.ReportResult(Holder(*a), r);
  EXPECT_EQ(Fields(got.status()), std::vector<std::string>{"evidence.timeline"});
  auto c = store_->GetCollection("team", a->collection_id());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->jobs(0).state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(c->jobs(0).reason(), "timeline")) << c->jobs(0).reason();
}

TEST_F(TimelinesTest, OnlyFormalRoundsOnOfferedDevicesAreProfiledAndNothingIsQueuedOtherwise) {
  const std::string h1 = Register("h1");
  const int64_t quick = FormalRound(h1, 0, "quick");
  auto got = Ask({quick});
  EXPECT_TRUE(absl::IsFailedPrecondition(got.status())) << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), "quick round")) << got.status();
  const int64_t formal = FormalRound(h1, 0);
  const int64_t elsewhere = FormalRound(h1, 1, "standard", 1, "gone-host");
  got = Ask({formal, elsewhere});
  EXPECT_TRUE(absl::IsFailedPrecondition(got.status())) << got.status();
  EXPECT_TRUE(absl::StartsWith(got.status().message(), "device:")) << got.status();
  CollectionFilter f;
  f.team = "team";
  f.labels = {{kTimelineOfLabel, absl::StrCat(formal)}};
  auto queued = store_->ListCollections(f);
  ASSERT_TRUE(queued.ok());
  EXPECT_TRUE(queued->empty()) << "the formal round's timeline must not be queued alone";
  got = Ask({123456});
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
  EXPECT_TRUE(absl::StartsWith(got.status().message(), "round_ids[0]")) << got.status();
}

TEST_F(TimelinesTest, ClientsCannotQueueTimelineJobsThemselves) {
  v1::SubmitCollectionRequest req = Request(1);
  req.mutable_spec()->mutable_params()->set_mode(v1::PROFILE_MODE_TIMELINE);
  auto got = scheduler_.Submit("team", req);
  EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  EXPECT_EQ(Fields(got.status()), std::vector<std::string>{"spec.params.mode"});
}

TEST_F(TimelinesTest, BadRequestsNameTheirField) {
  v1::SubmitTimelineRequest req;
  EXPECT_EQ(Fields(timelines_.Submit("team", req).status()), std::vector<std::string>{"round_ids"});
  req.add_round_ids(0);
  req.add_round_ids(7);
  req.add_round_ids(7);
  req.add_case_ids("c0");
  EXPECT_EQ(Fields(timelines_.Submit("team", req).status()),
            (std::vector<std::string>{"round_ids[0]", "round_ids[2]", "case_ids"}));
  req.Clear();
  for (int i = 1; i <= kMaxTimelineRounds + 1; ++i) req.add_round_ids(i);
  EXPECT_EQ(Fields(timelines_.Submit("team", req).status()), std::vector<std::string>{"round_ids"});
  req.Clear();
  req.set_collection_id("c-1");
  req.add_case_ids(std::string("a\nb"));
  req.add_case_ids("");  // not "every case"
  EXPECT_EQ(Fields(timelines_.Submit("team", req).status()),
            (std::vector<std::string>{"case_ids[0]", "case_ids[1]"}));
}

TEST_F(TimelinesTest, ACollectionsNamedCasesSelectTheirRounds) {
  const std::string h1 = Register("h1");
  FormalRound(h1, 0, "standard", 3);
  v1::SubmitTimelineRequest req;
  req.set_collection_id(last_collection_);
  req.add_case_ids("c1");
  auto got = timelines_.Submit("team", req);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->runs_size(), 1);
  EXPECT_EQ(got->runs(0).case_id(), "c1");
  req.clear_case_ids();
  req.add_case_ids("zz");
  got = timelines_.Submit("team", req);
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
  EXPECT_TRUE(absl::StartsWith(got.status().message(), "case_ids[0]")) << got.status();
  req.clear_case_ids();  // every case: c1's is queued already
  got = timelines_.Submit("team", req);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->runs_size(), 3);
  int created = 0;
  for (const auto& run : got->runs()) created += run.created() ? 1 : 0;
  EXPECT_EQ(created, 2);
}

TEST_F(TimelinesTest, AnAttestationIsCheckedAgainstTheTargetAndDecidesWithTheTimeline) {
  const std::string h1 = Register("h1");
  const int64_t round = FormalRound(h1, 0);
  v1::SubmitTimelineRequest req;
  req.add_round_ids(round);
  req.set_tile_dag_attestation(
      R"({"schema_version": 1, "target_op_name": "other", "pipeline_evidence_status": "proven",
          "tile_dag": "x"})");
  auto got = timelines_.Submit("team", req);
  EXPECT_EQ(Fields(got.status()), std::vector<std::string>{"tile_dag_attestation"});
  const std::string attestation =
      R"({"schema_version": 1, "target_op_name": "kernel", "pipeline_evidence_status": "proven",
          "tile_dag": "tile i+1 loads while tile i computes"})";
  req.set_tile_dag_attestation(attestation);
  got = timelines_.Submit("team", req);
  ASSERT_TRUE(got.ok()) << got.status();
  auto a = Lease(h1, 0);
  ASSERT_TRUE(a.has_value());
  v1::ReportResultRequest r = ResultOf(*a, "t1", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  *r.mutable_evidence() = TimelineEvidence(round);
  r.mutable_evidence()->mutable_timeline()->set_completion_eligible(true);  // not the agent's say
  auto stored = scheduler_.ReportResult(Holder(*a), r);
  ASSERT_TRUE(stored.ok()) << stored.status();
  auto t = store_->GetRound("team", stored->round_id());
  ASSERT_TRUE(t.ok()) << t.status();
  const v1::TimelineSummary& tl = t->evidence().timeline();
  EXPECT_EQ(tl.tile_dag_attestation_sha256(), Sha256Hex(attestation));
  EXPECT_EQ(tl.pipeline_overlap_status(), "proven");  // attested, unique window, overlap
  // The formal round has no measured roofline: it may not be closed, and says why.
  EXPECT_EQ(tl.roofline_terminal_status(), "insufficient_evidence");
  EXPECT_FALSE(tl.completion_eligible());
  EXPECT_EQ(tl.completion_blockers_size(), 2) << tl.DebugString();
}

TEST_F(TimelinesTest, ACollectionOfMoreRoundsThanOneRequestQueuesMustNameItsCases) {
  const std::string h1 = Register("h1");
  FormalRound(h1, 0, "standard", kMaxTimelineRounds + 1);
  v1::SubmitTimelineRequest req;
  req.set_collection_id(last_collection_);
  auto got = timelines_.Submit("team", req);
  EXPECT_EQ(Fields(got.status()), std::vector<std::string>{"collection_id"});
  req.add_case_ids("c64");
  got = timelines_.Submit("team", req);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->runs_size(), 1);
  EXPECT_EQ(got->runs(0).case_id(), "c64");
}

TEST_F(TimelinesTest, AnotherTeamsRoundOrAnOversizedAttestationIsRefusedAndNothingIsQueued) {
  const std::string h1 = Register("h1");
  const int64_t round = FormalRound(h1, 0);
  v1::SubmitTimelineRequest req;
  req.add_round_ids(round);
  auto got = timelines_.Submit("other-team", req);  // the round is "team"'s
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
  req.set_tile_dag_attestation(std::string(kMaxTileDagAttestationBytes + 1, ' '));
  got = timelines_.Submit("team", req);
  EXPECT_EQ(Fields(got.status()), std::vector<std::string>{"tile_dag_attestation"});
  CollectionFilter f;
  f.team = "team";
  f.labels = {{kTimelineOfLabel, absl::StrCat(round)}};
  auto queued = store_->ListCollections(f);
  ASSERT_TRUE(queued.ok());
  EXPECT_TRUE(queued->empty());
  f.team = "other-team";
  queued = store_->ListCollections(f);
  ASSERT_TRUE(queued.ok());
  EXPECT_TRUE(queued->empty());
}

}  // namespace
}  // namespace npuperf::server
