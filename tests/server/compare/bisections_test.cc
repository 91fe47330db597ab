// Bisections (compare/bisections.h) over the real Scheduler and SQLite: every run is an ordinary
// one-job collection, leased and reported as agents do, on as many devices as are online; the
// revision a job measures is known by its bundle.
#include "server/compare/bisections.h"

#include <random>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

class BisectionsTest : public SchedulerFixture {
 protected:
  BisectionsTest() : bisections_(Make()) {}

  Bisections Make() {
    return Bisections(
        *store_, clock_,
        [this](const std::string& team, const v1::SubmitCollectionRequest& req,
               const std::map<std::string, std::string>& labels) {
          return scheduler_.SubmitForServer(team, req, labels);
        },
        [this](const std::string& team, const std::string& id, const std::string& reason) {
          return scheduler_.Cancel(team, id, reason).status();
        },
        [this](v1::BisectionState s) { finished_.push_back(s); });
  }

  // A range of n revisions, each with its own bundle ("rev<i>") uploaded by `team`.
  v1::StartBisectionRequest Range(int n, const std::string& key = "k1") {
    v1::StartBisectionRequest req;
    req.set_idempotency_key(key);
    req.set_repository("git@example.com:ops.git");
    v1::CollectionSpec* spec = req.mutable_spec();
    spec->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
    spec->mutable_case_selector()->set_case_arg("--case-id");
    v1::OperatorSpec* op = spec->add_operators();
    op->set_name("op");
    op->set_op_name("kernel");
    for (int i = 0; i < n; ++i) {
      v1::BisectionRevision* r = req.add_revisions();
      r->set_commit(absl::StrFormat("%040x", 0xc0ffee00 + i));
      r->set_subject(absl::StrCat("commit ", i));
      r->set_author("A. Author <a@example.com>");
      const std::string content = absl::StrCat("rev", i);
      const std::string sha = Sha256Hex(content);
      EXPECT_TRUE(store_->PutBundle("team", "op", sha, content, 0).ok());
      r->set_bundle_sha256(sha);
      r->add_changed_files(absl::StrCat("kernel_", i, ".cpp"));
      revision_of_[sha] = i;
    }
    return req;
  }

  v1::Bisection Start(const v1::StartBisectionRequest& req) {
    auto r = bisections_.Start("team", req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->bisection() : v1::Bisection();
  }

  v1::Bisection Get(int64_t id) {
    v1::GetBisectionRequest req;
    req.set_bisection_id(id);
    auto r = bisections_.Get("team", req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->bisection() : v1::Bisection();
  }

  // Reports lease a: seven samples around us_of(revision) (1 % noise), or a failed runner when
  // the revision is in broken_.
  void Report(const v1::JobAssignment& a, const std::function<double(int)>& us_of) {
    const int rev = revision_of_.at(a.bundle_sha256());
    const std::string uuid = absl::StrCat("u-", a.job_id(), "-", a.attempt());
    if (broken_.count(rev)) {
      v1::ReportResultRequest req = ResultOf(a, uuid, v1::ATTEMPT_OUTCOME_FAILED);
      req.set_failure_reason("runner exited 3");
      ASSERT_TRUE(scheduler_.ReportResult(Holder(a), req).ok());
      return;
    }
    v1::ReportResultRequest req = ResultOf(a, uuid, v1::ATTEMPT_OUTCOME_SUCCEEDED);
    std::normal_distribution<double> noise(us_of(rev), us_of(rev) * 0.01);
    for (int i = 0; i < 7; ++i)
      req.mutable_evidence()->mutable_duration()->add_samples_us(noise(gen_));
    req.mutable_evidence()->mutable_duration()->set_aggregate_us(us_of(rev));
    req.mutable_evidence()->mutable_fingerprint()->set_soc("Ascend910B2");
    ASSERT_TRUE(scheduler_.ReportResult(Holder(a), req).ok());
  }

  // Runs waves: every device leases what it can, all leases are reported, then the reaper's
  // AdvancePending; until nothing is leased. Returns the widest wave.
  int RunAll(const std::function<double(int)>& us_of, int max_waves = 60) {
    int widest = 0;
    for (int wave = 0; wave < max_waves; ++wave) {
      std::vector<v1::JobAssignment> leased;
      for (const std::string& agent : agents_) {
        for (int d = 0; d < 2; ++d) {
          if (auto a = Lease(agent, d)) leased.push_back(*a);
        }
      }
      if (leased.empty()) break;
      widest = std::max(widest, static_cast<int>(leased.size()));
      for (const v1::JobAssignment& a : leased) Report(a, us_of);
      EXPECT_TRUE(bisections_.AdvancePending().ok());
    }
    return widest;
  }

  static std::set<std::string> Purposes(const v1::Bisection& b) {
    std::set<std::string> out;
    for (const v1::BisectionStep& s : b.steps()) out.insert(s.purpose());
    return out;
  }

  std::mt19937 gen_{11};
  std::map<std::string, int> revision_of_;  // bundle sha -> revision
  std::set<int> broken_;
  std::vector<std::string> agents_;
  std::vector<v1::BisectionState> finished_;
  Bisections bisections_;
};

double StepAt(int culprit, int rev) { return rev >= culprit ? 130 : 100; }

TEST_F(BisectionsTest, FindsTheCulpritOnFourDevicesAndExplainsIt) {
  agents_ = {Register("h1"), Register("h2")};
  v1::Bisection b = Start(Range(17));
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_MEASURING_ENDS) << b.reason();
  ASSERT_EQ(b.steps_size(), 2);  // the ends first, nothing else
  EXPECT_EQ(b.steps(0).purpose(), "end");
  const int widest = RunAll([](int r) { return StepAt(11, r); });
  EXPECT_LE(widest, 4);
  EXPECT_GE(widest, 3) << "probes run k-ary on the free devices";
  b = Get(b.id());
  ASSERT_EQ(b.state(), v1::BISECTION_STATE_DONE) << b.reason();
  ASSERT_EQ(b.culprits_size(), 1);
  const v1::BisectionCulprit& c = b.culprits(0);
  EXPECT_EQ(c.revision(), 11);
  EXPECT_EQ(c.commit(), b.revisions(11).commit());
  EXPECT_EQ(c.subject(), "commit 11");
  EXPECT_EQ(c.parent_revision(), 10);
  EXPECT_EQ(c.judgement().relation(), "DIFFERENT");
  EXPECT_NEAR(c.judgement().ratio(), 1.30, 0.02);
  EXPECT_LT(c.judgement().ratio_ci_low(), 1.30);
  ASSERT_EQ(c.changed_files_size(), 1);
  EXPECT_EQ(c.changed_files(0), "kernel_11.cpp");
  // Explained on standard rounds of the culprit and its parent.
  EXPECT_TRUE(Purposes(b).count("explain"));
  EXPECT_GT(c.parent_round_id(), 0);
  EXPECT_GT(c.culprit_round_id(), 0);
  EXPECT_EQ(c.explanation().verdict(), v1::VERDICT_REGRESSED);
  EXPECT_NEAR(c.explanation().duration().ratio(), 1.30, 0.03);
  EXPECT_EQ(b.ends().relation(), "DIFFERENT");
  EXPECT_TRUE(b.has_finished_at());
  EXPECT_EQ(finished_, std::vector<v1::BisectionState>{v1::BISECTION_STATE_DONE});
  // Fewer runs than revisions x budget: most revisions were never run.
  int unmeasured = 0;
  for (const v1::BisectionRevision& r : b.revisions()) unmeasured += r.runs() == 0;
  EXPECT_GT(unmeasured, 4);
}

TEST_F(BisectionsTest, EndsThatDoNotDifferAreRefusedBeforeAnyProbeRuns) {
  agents_ = {Register("h1"), Register("h2")};
  v1::Bisection b = Start(Range(9));
  RunAll([](int) { return 100.0; });
  b = Get(b.id());
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_REFUSED) << b.reason();
  EXPECT_EQ(Purposes(b), std::set<std::string>{"end"});
  EXPECT_EQ(b.culprits_size(), 0);
  EXPECT_FALSE(b.reason().empty());
}

TEST_F(BisectionsTest, ARevisionWhoseRunnerFailsIsSkippedAndListedAsACandidate) {
  agents_ = {Register("h1"), Register("h2")};
  broken_ = {10};
  v1::StartBisectionRequest req = Range(17);
  req.set_no_explain(true);
  v1::Bisection b = Start(req);
  RunAll([](int r) { return StepAt(11, r); });
  b = Get(b.id());
  ASSERT_EQ(b.state(), v1::BISECTION_STATE_DONE) << b.reason();
  EXPECT_FALSE(Purposes(b).count("explain"));
  ASSERT_EQ(b.culprits_size(), 1);
  const v1::BisectionCulprit& c = b.culprits(0);
  EXPECT_EQ(c.revision(), 11);
  if (b.revisions(10).failed()) {
    EXPECT_EQ(c.parent_revision(), 9);
    ASSERT_EQ(c.candidates_size(), 2);
    EXPECT_EQ(c.candidates(0), b.revisions(10).commit());
    EXPECT_EQ(c.candidates(1), b.revisions(11).commit());
  }
}

TEST_F(BisectionsTest, CancelledMidwayLeavesNothingQueued) {
  agents_ = {Register("h1")};
  v1::Bisection b = Start(Range(9));
  ASSERT_EQ(b.steps_size(), 2);
  v1::CancelBisectionRequest req;
  req.set_bisection_id(b.id());
  req.set_note("wrong range");
  auto cancelled = bisections_.CancelOne("team", req);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->bisection().state(), v1::BISECTION_STATE_CANCELLED);
  EXPECT_EQ(cancelled->bisection().reason(), "cancelled: wrong range");
  for (const v1::BisectionStep& s : cancelled->bisection().steps()) {
    EXPECT_EQ(s.state(), v1::COLLECTION_STATE_CANCELLED) << s.collection_id();
    auto c = store_->GetCollection("team", s.collection_id());
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->state(), v1::COLLECTION_STATE_CANCELLED);
  }
  EXPECT_FALSE(Lease(agents_[0], 0).has_value());
  EXPECT_FALSE(Lease(agents_[0], 1).has_value());
  ASSERT_TRUE(bisections_.AdvancePending().ok());  // nothing moves a cancelled one
  EXPECT_EQ(Get(b.id()).state(), v1::BISECTION_STATE_CANCELLED);
  EXPECT_EQ(finished_, std::vector<v1::BisectionState>{v1::BISECTION_STATE_CANCELLED});
}

TEST_F(BisectionsTest, TheSameKeyReturnsTheSameBisectionAndAnotherTeamCannotSeeIt) {
  agents_ = {Register("h1")};
  const v1::StartBisectionRequest req = Range(5);
  v1::Bisection first = Start(req);
  auto again = bisections_.Start("team", req);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created());
  EXPECT_EQ(again->bisection().id(), first.id());
  v1::GetBisectionRequest get;
  get.set_bisection_id(first.id());
  EXPECT_TRUE(absl::IsNotFound(bisections_.Get("other", get).status()));
  v1::CancelBisectionRequest cancel;
  cancel.set_bisection_id(first.id());
  EXPECT_TRUE(absl::IsNotFound(bisections_.CancelOne("other", cancel).status()));
}

TEST_F(BisectionsTest, AnotherReplicaContinuesWhereTheFirstStopped) {
  agents_ = {Register("h1"), Register("h2")};
  v1::Bisection b = Start(Range(9));
  Bisections other = Make();  // a restart or a second replica: only the store is shared
  for (int wave = 0; wave < 40; ++wave) {
    std::vector<v1::JobAssignment> leased;
    for (const std::string& agent : agents_) {
      for (int d = 0; d < 2; ++d) {
        if (auto a = Lease(agent, d)) leased.push_back(*a);
      }
    }
    if (leased.empty()) break;
    for (const v1::JobAssignment& a : leased) Report(a, [](int r) { return StepAt(4, r); });
    ASSERT_TRUE((wave % 2 ? other : bisections_).AdvancePending().ok());
  }
  b = Get(b.id());
  ASSERT_EQ(b.state(), v1::BISECTION_STATE_DONE) << b.reason();
  ASSERT_EQ(b.culprits_size(), 1);
  EXPECT_EQ(b.culprits(0).revision(), 4);
  std::set<std::string> collections;
  for (const v1::BisectionStep& s : b.steps()) {
    EXPECT_TRUE(collections.insert(s.collection_id()).second) << "one collection per step";
  }
}

TEST_F(BisectionsTest, BadRangesAreRefusedNamingTheField) {
  auto fields = [&](const v1::StartBisectionRequest& req) {
    return Fields(bisections_.Start("team", req).status());
  };
  v1::StartBisectionRequest big = Range(3);
  for (int i = 3; i < 10001; ++i) {
    v1::BisectionRevision* r = big.add_revisions();
    *r = big.revisions(1);
    r->set_commit(absl::StrFormat("%040x", i));
  }
  EXPECT_EQ(fields(big), std::vector<std::string>{"revisions"});
  EXPECT_EQ(fields(Range(2)), std::vector<std::string>{"revisions"});  // one commit
  v1::StartBisectionRequest twice = Range(4);
  twice.mutable_revisions(2)->set_commit(twice.revisions(1).commit());
  EXPECT_EQ(fields(twice), std::vector<std::string>{"revisions[2].commit"});
  v1::StartBisectionRequest unknown = Range(4);
  unknown.mutable_revisions(1)->set_commit("HEAD~3");
  EXPECT_EQ(fields(unknown), std::vector<std::string>{"revisions[1].commit"});
  v1::StartBisectionRequest metric = Range(4);
  metric.set_metric("aic_mte2_ratio");
  EXPECT_EQ(fields(metric), std::vector<std::string>{"metric"});
  v1::StartBisectionRequest two_ops = Range(4);
  *two_ops.mutable_spec()->add_operators() = two_ops.spec().operators(0);
  EXPECT_EQ(fields(two_ops), std::vector<std::string>{"spec.operators"});
  v1::StartBisectionRequest paths = Range(12);
  for (v1::BisectionRevision& r : *paths.mutable_revisions()) {
    r.clear_changed_files();
    for (int f = 0; f < 200; ++f) r.add_changed_files(std::string(500, 'p') + std::to_string(f));
  }
  EXPECT_EQ(fields(paths), std::vector<std::string>{"revisions.changed_files"});
  v1::StartBisectionRequest no_key = Range(4);
  no_key.set_idempotency_key("a b");
  EXPECT_EQ(fields(no_key), std::vector<std::string>{"idempotency_key"});
  // A bundle this team did not upload (another team's repository).
  v1::StartBisectionRequest foreign = Range(4);
  const std::string sha = Sha256Hex("theirs");
  ASSERT_TRUE(store_->PutBundle("other", "op", sha, "theirs", 0).ok());
  foreign.mutable_revisions(2)->set_bundle_sha256(sha);
  const absl::Status s = bisections_.Start("team", foreign).status();
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "revisions[2].bundle_sha256")) << s;
  v1::ListBisectionsRequest list;
  list.set_include_finished(true);
  auto listed = bisections_.List("team", list);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->bisections_size(), 0) << "nothing is stored for a refused request";
}

TEST_F(BisectionsTest, BadOptionsAndIdsAreRefusedNamingTheFieldAndChangeNothing) {
  agents_ = {Register("h1")};
  auto fields = [&](const v1::StartBisectionRequest& req) {
    return Fields(bisections_.Start("team", req).status());
  };
  v1::StartBisectionRequest runs = Range(4, "opts");
  runs.set_max_runs_per_revision(9);
  runs.set_max_runs(2001);
  EXPECT_EQ(fields(runs), (std::vector<std::string>{"max_runs_per_revision", "max_runs"}));
  v1::StartBisectionRequest mode = Range(4, "opts");
  mode.mutable_spec()->mutable_params()->set_mode(v1::PROFILE_MODE_DISCOVER);
  EXPECT_EQ(fields(mode), std::vector<std::string>{"spec.params.mode"});
  v1::StartBisectionRequest regression = Range(4, "opts");
  regression.set_regression_id(-1);
  EXPECT_EQ(fields(regression), std::vector<std::string>{"regression_id"});
  regression.set_regression_id(12345);  // no such regression of this team
  EXPECT_TRUE(absl::IsNotFound(bisections_.Start("team", regression).status()));
  v1::StartBisectionRequest control = Range(4, "opts");
  control.mutable_revisions(1)->set_subject("a\x1b[31mred");
  EXPECT_EQ(fields(control), std::vector<std::string>{"revisions[1].subject"});
  v1::ListBisectionsRequest all;
  all.set_include_finished(true);
  ASSERT_EQ(bisections_.List("team", all)->bisections_size(), 0) << "nothing stored";

  const v1::Bisection b = Start(Range(4, "good"));
  v1::GetBisectionRequest get;
  EXPECT_EQ(Fields(bisections_.Get("team", get).status()),
            std::vector<std::string>{"bisection_id"});
  v1::CancelBisectionRequest cancel;
  cancel.set_bisection_id(-1);
  EXPECT_EQ(Fields(bisections_.CancelOne("team", cancel).status()),
            std::vector<std::string>{"bisection_id"});
  cancel.set_bisection_id(b.id());
  cancel.set_note(std::string(257, 'n'));
  EXPECT_EQ(Fields(bisections_.CancelOne("team", cancel).status()),
            std::vector<std::string>{"note"});
  cancel.set_note(
      "line\x07"
      "bell");
  EXPECT_EQ(Fields(bisections_.CancelOne("team", cancel).status()),
            std::vector<std::string>{"note"});
  EXPECT_EQ(Get(b.id()).state(), v1::BISECTION_STATE_MEASURING_ENDS) << "not cancelled";
  v1::ListBisectionsRequest list;
  list.set_limit(201);
  EXPECT_EQ(Fields(bisections_.List("team", list).status()), std::vector<std::string>{"limit"});
  list.set_limit(-1);
  EXPECT_EQ(Fields(bisections_.List("team", list).status()), std::vector<std::string>{"limit"});
}

TEST_F(BisectionsTest, ATeamRunsAtMostEightAtOnceAndAResendIsStillAnswered) {
  agents_ = {Register("h1")};
  for (int i = 0; i < Bisections::kMaxRunningBisectionsPerTeam; ++i) {
    Start(Range(4, absl::StrCat("k", i)));
  }
  const absl::Status ninth = bisections_.Start("team", Range(4, "k-ninth")).status();
  EXPECT_TRUE(absl::IsResourceExhausted(ninth)) << ninth;
  auto resend = bisections_.Start("team", Range(4, "k0"));
  ASSERT_TRUE(resend.ok()) << resend.status();
  EXPECT_FALSE(resend->created());
  v1::CancelBisectionRequest cancel;
  cancel.set_bisection_id(resend->bisection().id());
  ASSERT_TRUE(bisections_.CancelOne("team", cancel).ok());
  EXPECT_TRUE(bisections_.Start("team", Range(4, "k-ninth")).ok()) << "one ended: room again";
}

TEST_F(BisectionsTest, AnOperatorWithSeveralCasesNeedsTheCaseNamed) {
  agents_ = {Register("h1")};
  v1::StartBisectionRequest req = Range(5);
  req.mutable_spec()->mutable_operators(0)->add_case_ids("c0");
  req.mutable_spec()->mutable_operators(0)->add_case_ids("c1");
  v1::Bisection b = Start(req);
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(b.reason(), "case_id")) << b.reason();
  EXPECT_FALSE(Lease(agents_[0], 0).has_value()) << "nothing left queued";
  req.set_idempotency_key("k2");
  req.set_case_id("c1");
  b = Start(req);
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_MEASURING_ENDS) << b.reason();
}

}  // namespace
}  // namespace npuperf::server
