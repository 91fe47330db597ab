// Canaries (compare/canaries.h) over the real Scheduler and SQLite: canaries are queued on idle
// devices, leased and reported as agents do, judged against the SoC's other devices, and a slow
// device is quarantined (taking only canaries from then on), its rounds since its last passing
// canary flagged in comparisons, and released after passing canaries.
#include "server/compare/canaries.h"

#include <random>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/bundle_tar.h"
#include "server/compare/canary_operator.h"
#include "server/compare/comparison_queries.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

constexpr auto kInterval = std::chrono::hours(1);
constexpr double kKernelUs = 48.0;

class CanariesTest : public SchedulerFixture {
 protected:
  CanariesTest() : canaries_(Make()) {}

  Canaries Make(std::chrono::milliseconds interval = kInterval) {
    return Canaries(
        *store_, clock_, metrics_, scheduler_.device_health(),
        [this](const std::string& team, const v1::SubmitCollectionRequest& req,
               const std::map<std::string, std::string>& labels) {
          return scheduler_.SubmitForServer(team, req, labels);
        },
        [this](const std::string& team, const std::string& id, const std::string& reason) {
          return scheduler_.Cancel(team, id, reason).status();
        },
        CanaryOptions{interval, kDefaultCanaryOpName});
  }

  // n hosts h1..hn of two Ascend910B2 devices each.
  void Fleet(int n) {
    for (int i = 1; i <= n; ++i) agents_.push_back(Register(absl::StrCat("h", i)));
  }

  std::vector<CanaryRecord> All() {
    CanaryFilter f;
    f.limit = 1000;
    auto got = store_->ListCanaries(f);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::vector<CanaryRecord>();
  }

  std::vector<CanaryRecord> Of(const std::string& host, int device) {
    CanaryFilter f;
    f.host = host;
    f.device_id = device;
    f.limit = 1000;
    auto got = store_->ListCanaries(f);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::vector<CanaryRecord>();
  }

  std::vector<QuarantineRecord> Quarantines(bool all = false) {
    auto got = store_->ListQuarantines(all, 100);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::vector<QuarantineRecord>();
  }

  // A result of lease a: five samples around us (1 % noise), with the device's fingerprint.
  void Report(const v1::JobAssignment& a, double us) {
    const std::string uuid = absl::StrCat("u-", a.job_id(), "-", a.attempt());
    v1::ReportResultRequest req = ResultOf(a, uuid, v1::ATTEMPT_OUTCOME_SUCCEEDED);
    std::normal_distribution<double> noise(us, us * 0.01);
    for (int i = 0; i < 5; ++i)
      req.mutable_evidence()->mutable_duration()->add_samples_us(noise(gen_));
    req.mutable_evidence()->mutable_duration()->set_aggregate_us(us);
    v1::Fingerprint* f = req.mutable_evidence()->mutable_fingerprint();
    f->set_soc("Ascend910B2");
    f->set_host(hosts_[holders_[a.job_id()]]);
    f->set_device_id(a.device_id());
    ASSERT_TRUE(scheduler_.ReportResult(Holder(a), req).ok());
  }

  void Fail(const v1::JobAssignment& a) {
    v1::ReportResultRequest req =
        ResultOf(a, absl::StrCat("f-", a.job_id()), v1::ATTEMPT_OUTCOME_FAILED);
    req.set_failure_reason("msprof exited 1: device 0 not found");
    ASSERT_TRUE(scheduler_.ReportResult(Holder(a), req).ok());
  }

  // One canary round: Tick queues, every device leases what it can and reports it (us_of: the
  // kernel time by host and device; a negative one fails the job), Tick judges. Returns the
  // leases made.
  std::vector<v1::JobAssignment> Round(const std::function<double(const std::string&, int)>& us_of,
                                       Canaries* replica = nullptr) {
    Canaries& canaries = replica != nullptr ? *replica : canaries_;
    EXPECT_TRUE(canaries.Tick().ok());
    std::vector<v1::JobAssignment> leased;
    for (const std::string& agent : agents_) {
      for (int d = 0; d < 2; ++d) {
        auto a = Lease(agent, d);
        if (!a) continue;
        leased.push_back(*a);
        const double us = us_of(hosts_[agent], d);
        if (us < 0) {
          Fail(*a);
        } else {
          Report(*a, us);
        }
      }
    }
    EXPECT_TRUE(canaries.Tick().ok());
    clock_.Advance(kInterval);
    return leased;
  }

  static double SlowOne(const std::string& host, int d) {
    return host == "h3" && d == 1 ? kKernelUs * 1.15 : kKernelUs;
  }
  static double Healthy(const std::string&, int) { return kKernelUs; }

  std::mt19937 gen_{7};
  std::vector<std::string> agents_;
  Canaries canaries_;
};

TEST_F(CanariesTest, OffByDefaultQueuesNothing) {
  Fleet(2);
  Canaries off = Make(std::chrono::milliseconds(0));
  EXPECT_FALSE(off.enabled());
  ASSERT_TRUE(off.Tick().ok());
  EXPECT_TRUE(All().empty());
  EXPECT_FALSE(Lease(agents_[0], 0).has_value());
}

TEST_F(CanariesTest, EveryIdleDeviceGetsOneCanaryPerInterval) {
  Fleet(2);
  ASSERT_TRUE(canaries_.Tick().ok());
  ASSERT_TRUE(canaries_.Tick().ok());  // the same slot: nothing new
  std::vector<CanaryRecord> all = All();
  ASSERT_EQ(all.size(), 4u);
  std::set<std::string> devices;
  for (const CanaryRecord& c : all) {
    EXPECT_EQ(c.state, "pending");
    EXPECT_FALSE(c.collection_id.empty());
    EXPECT_EQ(c.soc, "Ascend910B2");
    devices.insert(absl::StrCat(c.host, ":", c.device_id));
    auto col = store_->GetCollectionPage(kCanaryTeam, c.collection_id, 0, 2);
    ASSERT_TRUE(col.ok()) << col.status();
    EXPECT_EQ(col->spec().priority(), kCanaryPriority);
    EXPECT_EQ(col->spec().params().mode(), v1::PROFILE_MODE_QUICK);
    EXPECT_EQ(col->spec().constraints().host(), c.host);
    EXPECT_EQ(col->spec().constraints().device_range(), std::to_string(c.device_id));
    EXPECT_EQ(col->spec().operators(0).op_name(), kDefaultCanaryOpName);
    EXPECT_EQ(col->spec().labels().at(kCanaryLabel), std::to_string(c.id));
  }
  EXPECT_EQ(devices, (std::set<std::string>{"h1:0", "h1:1", "h2:0", "h2:1"}));
  // Each canary goes to its own device only.
  auto a = Lease(agents_[1], 1);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->device_id(), 1);
  auto job = store_->GetCollectionPage(kCanaryTeam, Of("h2", 1)[0].collection_id, 0, 2);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->jobs(0).id(), a->job_id());
}

TEST_F(CanariesTest, AUserJobGoesBeforeACanaryOnTheSameDevice) {
  Fleet(1);
  ASSERT_TRUE(canaries_.Tick().ok());  // canaries queued first, on both devices
  v1::SubmitCollectionRequest req = Request(1);
  req.mutable_spec()->set_priority(-10);  // even at the lowest priority
  const std::string user = Submit(req);
  auto a = Lease(agents_[0], 0);
  ASSERT_TRUE(a.has_value());
  auto c = store_->GetCollection("team", user);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->jobs(0).id(), a->job_id()) << "the user's job, not the canary";
}

TEST_F(CanariesTest, ASlowDeviceIsQuarantinedWithinThreeRoundsAndNoOtherIs) {
  Fleet(8);  // 16 devices
  int rounds = 0;
  while (Quarantines().empty() && rounds < 3) {
    Round(SlowOne);
    ++rounds;
  }
  std::vector<QuarantineRecord> q = Quarantines();
  ASSERT_EQ(q.size(), 1u) << "after " << rounds << " rounds";
  EXPECT_EQ(q[0].host, "h3");
  EXPECT_EQ(q[0].device_id, 1);
  EXPECT_EQ(q[0].source, "canary");
  EXPECT_TRUE(absl::StrContains(q[0].reason, "slower than the median")) << q[0].reason;
  std::vector<CanaryRecord> mine = Of("h3", 1);
  ASSERT_GE(mine.size(), 2u);
  EXPECT_EQ(mine[0].state, "slow");
  EXPECT_EQ(mine[0].reference, "peers");
  EXPECT_NEAR(mine[0].excess_pct, 15, 3);
  // Every other device passed its judged canaries.
  for (const CanaryRecord& c : All()) {
    if (c.host == "h3" && c.device_id == 1) continue;
    EXPECT_NE(c.state, "slow") << c.host << ":" << c.device_id << " " << c.reason;
  }
  const double count = metrics_.device_quarantines.Add({{"source", "canary"}}).Value();
  EXPECT_EQ(count, 1);
}

TEST_F(CanariesTest, AQuarantinedDeviceTakesOnlyCanariesAndIsReleasedAfterThreePasses) {
  Fleet(8);
  for (int i = 0; i < 3 && Quarantines().empty(); ++i) Round(SlowOne);
  ASSERT_EQ(Quarantines().size(), 1u);
  const std::string h3 = agents_[2];
  // A user's job never goes there; another device takes it.
  const std::string user = Submit(1);
  EXPECT_FALSE(Lease(h3, 1).has_value());
  auto elsewhere = Lease(h3, 0);
  ASSERT_TRUE(elsewhere.has_value());
  Report(*elsewhere, 100);
  // The chip recovers: its canaries pass, and after three in a row it is released.
  int rounds = 0;
  while (!Quarantines().empty() && rounds < 5) {
    std::vector<v1::JobAssignment> leased = Round(Healthy);
    const bool ran_there = std::any_of(leased.begin(), leased.end(), [&](const auto& a) {
      return holders_[a.job_id()] == h3 && a.device_id() == 1;
    });
    EXPECT_TRUE(ran_there) << "the quarantined device runs its canary";
    ++rounds;
  }
  EXPECT_EQ(rounds, kPassingCanariesToRelease);
  std::vector<QuarantineRecord> all = Quarantines(/*all=*/true);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].released_by, "npuperf");
  EXPECT_TRUE(absl::StrContains(all[0].release_note, "passed")) << all[0].release_note;
}

TEST_F(CanariesTest, AQuarantineWithholdsTheDeviceFromTheVeryNextOffer) {
  Fleet(8);
  const std::string h3 = agents_[2];
  for (int i = 0; i < 4 && Quarantines().empty(); ++i) {
    ASSERT_TRUE(canaries_.Tick().ok());
    for (const std::string& agent : agents_) {
      for (int d = 0; d < 2; ++d) {
        if (auto a = Lease(agent, d)) Report(*a, SlowOne(hosts_[agent], d));
      }
    }
    // An offer now: the scheduler has just read the quarantines (none yet).
    EXPECT_FALSE(Lease(agents_[0], 0).has_value());
    ASSERT_TRUE(canaries_.Tick().ok());  // judges, and may quarantine h3:1
    if (!Quarantines().empty()) break;
    clock_.Advance(kInterval);
  }
  ASSERT_EQ(Quarantines().size(), 1u);
  Submit(1);  // no time passes: well within the scheduler's quarantine cache
  EXPECT_FALSE(Lease(h3, 1).has_value()) << "a user's job on the device just quarantined";
  EXPECT_TRUE(Lease(h3, 0).has_value()) << "another device takes it";
}

TEST_F(CanariesTest, ComparisonsRestingOnRoundsSinceTheLastGoodCanaryAreFlagged) {
  Fleet(8);
  Round(Healthy);  // everyone passes (the first judged ones are inconclusive: no peers yet)
  Round(Healthy);
  // A user's rounds: a baseline on a healthy device, then a candidate on h3:1 after it sickens.
  const std::string h3 = agents_[2];
  Submit(1);
  auto base = Lease(agents_[0], 0);
  ASSERT_TRUE(base.has_value());
  Report(*base, 100);
  clock_.Advance(std::chrono::minutes(1));
  Submit(1);
  auto cand = Lease(h3, 1);
  ASSERT_TRUE(cand.has_value());
  Report(*cand, 115);
  for (int i = 0; i < 3 && Quarantines().empty(); ++i) Round(SlowOne);
  std::vector<QuarantineRecord> q = Quarantines();
  ASSERT_EQ(q.size(), 1u);
  std::vector<CanaryRecord> mine = Of("h3", 1);
  int64_t last_pass = 0;
  for (const CanaryRecord& c : mine) {
    if (c.state == "pass") {
      last_pass = c.finished_ms;
      break;
    }
  }
  ASSERT_GT(last_pass, 0);
  EXPECT_EQ(q[0].suspect_since_ms, last_pass);

  RoundFilter filter;
  filter.team = "team";
  auto rounds = store_->ListRounds(filter);
  ASSERT_TRUE(rounds.ok());
  ASSERT_EQ(rounds->rounds.size(), 2u);
  ComparisonQueries queries(*store_, clock_, nullptr);
  v1::CompareRoundsRequest req;
  req.set_baseline_round_id(rounds->rounds[0].id());
  req.set_candidate_round_id(rounds->rounds[1].id());
  auto cmp = queries.CompareRounds("team", req);
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  const auto& flags = cmp->comparison().flags();
  EXPECT_TRUE(std::count(flags.begin(), flags.end(), "device_suspect:candidate") == 1)
      << cmp->comparison().DebugString();
  EXPECT_TRUE(std::count(flags.begin(), flags.end(), "device_suspect:baseline") == 0);
  // The other way round, the flag follows the round.
  req.set_baseline_round_id(rounds->rounds[1].id());
  req.set_candidate_round_id(rounds->rounds[0].id());
  cmp = queries.CompareRounds("team", req);
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  EXPECT_EQ(cmp->comparison().flags(0), "device_suspect:baseline");
}

TEST_F(CanariesTest, ACanaryThatFailsToRunCountsAsSlowAndQuarantinesNotCrashes) {
  Fleet(3);
  auto failing = [](const std::string& host, int d) {
    return host == "h2" && d == 0 ? -1.0 : kKernelUs;
  };
  Round(failing);
  EXPECT_TRUE(Quarantines().empty()) << "one failure is a suspicion";
  Round(failing);
  std::vector<QuarantineRecord> q = Quarantines();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].host, "h2");
  EXPECT_EQ(q[0].device_id, 0);
  EXPECT_TRUE(absl::StrContains(q[0].reason, "the canary job failed")) << q[0].reason;
  EXPECT_EQ(q[0].suspect_since_ms, 0) << "it never passed one";
  EXPECT_EQ(Of("h2", 0)[0].state, "failed");
}

TEST_F(CanariesTest, ACanaryFailingOnEveryDeviceIsTheJobsFaultAndQuarantinesNothing) {
  Fleet(3);
  auto everywhere = [](const std::string&, int) { return -1.0; };  // e.g. a wrong --canary-op-name
  for (int i = 0; i < 4; ++i) Round(everywhere);
  EXPECT_TRUE(Quarantines(/*all=*/true).empty());
  for (const CanaryRecord& c : All()) {
    EXPECT_EQ(c.state, "inconclusive") << c.reason;
    EXPECT_TRUE(absl::StrContains(c.reason, "--canary-op-name")) << c.reason;
  }
}

TEST_F(CanariesTest, AtMostAQuarterOfTheSocIsQuarantinedEvenWhenMoreLookSlow) {
  Fleet(8);  // 16 devices; an impostor's fast devices would look like this to honest ones
  auto many_slow = [](const std::string& host, int d) {
    return d == 1 && (host == "h1" || host == "h2" || host == "h3" || host == "h4" || host == "h5")
               ? kKernelUs * 1.3
               : kKernelUs;
  };
  for (int i = 0; i < 4; ++i) Round(many_slow);
  EXPECT_EQ(Quarantines().size(), 4u) << "5 slow devices, at most 16 / 4 quarantined";
  int slow = 0;
  for (const CanaryRecord& c : All()) slow += c.state == "slow" ? 1 : 0;
  EXPECT_GE(slow, 10) << "the canaries still say slow";
}

TEST_F(CanariesTest, ACanaryNotRunInTimeIsGivenUpAsInconclusive) {
  Fleet(1);
  ASSERT_TRUE(canaries_.Tick().ok());
  clock_.Advance(std::chrono::minutes(30));
  ASSERT_TRUE(canaries_.Tick().ok());
  EXPECT_EQ(Of("h1", 0)[0].state, "pending") << "within the interval it waits";
  clock_.Advance(std::chrono::minutes(31));
  ASSERT_TRUE(canaries_.Tick().ok());
  std::vector<CanaryRecord> mine = Of("h1", 0);
  ASSERT_EQ(mine.size(), 2u) << "given up, then a new one for the new slot";
  EXPECT_EQ(mine[1].state, "inconclusive");
  EXPECT_TRUE(absl::StrContains(mine[1].reason, "not run within")) << mine[1].reason;
  auto col = store_->GetCollectionPage(kCanaryTeam, mine[1].collection_id, 0, 2);
  ASSERT_TRUE(col.ok());
  EXPECT_EQ(col->state(), v1::COLLECTION_STATE_CANCELLED);
  EXPECT_EQ(mine[0].state, "pending");
  EXPECT_TRUE(Quarantines().empty());
}

TEST_F(CanariesTest, TwoReplicasQueueOneCanaryPerDeviceAndMakeOneDecision) {
  Fleet(8);
  Canaries other = Make();
  auto both = [&] {
    EXPECT_TRUE(canaries_.Tick().ok());
    EXPECT_TRUE(other.Tick().ok());
  };
  for (int round = 0; round < 3 && Quarantines().empty(); ++round) {
    both();
    for (const std::string& agent : agents_) {
      for (int d = 0; d < 2; ++d) {
        if (auto a = Lease(agent, d)) Report(*a, SlowOne(hosts_[agent], d));
      }
    }
    both();
    clock_.Advance(kInterval);
  }
  std::set<std::pair<std::string, int64_t>> slots;
  for (const CanaryRecord& c : All()) {
    EXPECT_TRUE(slots.insert({absl::StrCat(c.host, ":", c.device_id), c.slot}).second)
        << "two canaries of " << c.host << ":" << c.device_id << " in slot " << c.slot;
  }
  EXPECT_EQ(Quarantines(/*all=*/true).size(), 1u);
}

TEST_F(CanariesTest, AReleasedDeviceIsJudgedAfreshByTheCanariesItRunsAfterTheRelease) {
  Fleet(8);
  for (int i = 0; i < 3 && Quarantines().empty(); ++i) Round(SlowOne);
  ASSERT_EQ(Quarantines().size(), 1u);
  // A person reseats the chip and releases it; it is still slow.
  auto released =
      store_->ReleaseDevice("h3", 1, "team", "reseated", ToUnixMillis(clock_.SystemNow()));
  ASSERT_TRUE(released.ok()) << released.status();
  clock_.Advance(std::chrono::milliseconds(1));
  // One slow canary after the release is a suspicion, not the streak that quarantined it.
  Round(SlowOne);
  EXPECT_TRUE(Quarantines().empty()) << "re-quarantined by canaries from before the release";
  EXPECT_EQ(Of("h3", 1)[0].state, "slow");
  Round(SlowOne);
  std::vector<QuarantineRecord> all = Quarantines(/*all=*/true);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].released_ms, 0) << "the second slow canary since the release quarantines it";
  EXPECT_EQ(all[1].release_note, "reseated");
}

TEST_F(CanariesTest, ARestartedServerKeepsTheQuarantineAndDecidesFromTheStore) {
  Fleet(8);
  for (int i = 0; i < 3 && Quarantines().empty(); ++i) Round(SlowOne);
  ASSERT_EQ(Quarantines().size(), 1u);
  Canaries restarted = Make();  // a new process: nothing in memory
  // An agent restart re-registers (without npu-smi readings): the quarantine stands.
  agents_[2] = Register("h3");
  EXPECT_EQ(Quarantines().size(), 1u);
  // Two passes are not enough, the third releases it.
  Round(Healthy, &restarted);
  Round(Healthy, &restarted);
  EXPECT_EQ(Quarantines().size(), 1u);
  Round(Healthy, &restarted);
  EXPECT_TRUE(Quarantines().empty());
}

TEST_F(CanariesTest, ListingChecksItsInputAndHidesHostsFromTeams) {
  Fleet(2);
  Round(Healthy);
  v1::ListCanariesRequest req;
  auto all = canaries_.List(/*admin=*/false, req);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->canaries_size(), 4);
  for (const v1::Canary& c : all->canaries()) EXPECT_TRUE(c.host().empty());
  req.set_host("h1");
  EXPECT_EQ(canaries_.List(false, req).status().code(), absl::StatusCode::kPermissionDenied);
  auto mine = canaries_.List(/*admin=*/true, req);
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->canaries_size(), 2);
  EXPECT_EQ(mine->canaries(0).host(), "h1");
  req.set_device_id(1);
  mine = canaries_.List(true, req);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->canaries_size(), 1);
  EXPECT_EQ(mine->canaries(0).device_id(), 1);
  // Pages.
  v1::ListCanariesRequest page;
  page.set_limit(3);
  auto first = canaries_.List(false, page);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->canaries_size(), 3);
  ASSERT_FALSE(first->next_page_token().empty());
  page.set_page_token(first->next_page_token());
  auto second = canaries_.List(false, page);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->canaries_size(), 1);
  EXPECT_LT(second->canaries(0).id(), first->canaries(2).id());
  // Bad input names the field.
  for (auto [field, bad] : std::vector<std::pair<std::string, v1::ListCanariesRequest>>{
           {"limit",
            [] {
              v1::ListCanariesRequest r;
              r.set_limit(1001);
              return r;
            }()},
           {"limit",
            [] {
              v1::ListCanariesRequest r;
              r.set_limit(-1);
              return r;
            }()},
           {"page_token",
            [] {
              v1::ListCanariesRequest r;
              r.set_page_token("x");
              return r;
            }()},
           {"device_id",
            [] {
              v1::ListCanariesRequest r;
              r.set_device_id(-2);
              return r;
            }()},
           {"host",
            [] {
              v1::ListCanariesRequest r;
              r.set_host(std::string(300, 'h'));
              return r;
            }()},
       }) {
    auto got = canaries_.List(true, bad);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_TRUE(absl::StrContains(got.status().ToString(), field)) << got.status();
  }
}

TEST_F(CanariesTest, TheBuiltInBundleIsTheSameBytesEveryTime) {
  auto a = CanaryBundle();
  auto b = CanaryBundle();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Sha256Hex(*a), Sha256Hex(*b));
  auto runner = BundleFileContent(*a, kCanaryRunner, 1 << 20, 1 << 20);
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_TRUE(absl::StrContains(*runner, kDefaultCanaryOpName));
  auto cases = BundleFileContent(*a, "PERFORMANCE_CASES.json", 1 << 20, 1 << 20);
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_TRUE(absl::StrContains(*cases, "\"p0\""));
}

}  // namespace
}  // namespace npuperf::server
