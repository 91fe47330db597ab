// Artifacts (issue 19): uploads by the agent whose lease produced the round,
// the limits and the quota, team-scoped downloads, and the retention sweep
// on the FakeClock. A real SQLite store and a temporary artifact directory.
#include "server/core/artifacts.h"

#include <fstream>
#include <string>
#include <vector>

#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "gtest/gtest.h"
#include "server/core/job_rules.h"
#include "tests/fakes/temp_dir.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {
namespace fs = std::filesystem;

#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto& lhs = *lhs##_or

// Base-from-member: the directories exist before the scheduler opens them.
struct ArtifactDirs {
  testing::TempDir dir;
};

class ArtifactsTest : public ArtifactDirs, public SchedulerFixture {
 protected:
  ArtifactsTest() : SchedulerFixture(WithArtifacts(dir.path() / "artifacts")) {}

  static SchedulerOptions WithArtifacts(const fs::path& path) {
    SchedulerOptions o = Options();
    o.artifacts.dir = path;
    o.artifacts.max_bytes = 1 << 20;
    o.artifacts.quota_bytes = 3 << 20;
    o.artifacts.retention = std::chrono::hours(24);
    return o;
  }

  // A real raw archive: a small PROF-like tree packed (gzip tar).
  std::string RawTar(const std::string& content = "kernel,42\n") {
    const fs::path tree = dir.path() / ("tree-" + Sha256Hex(content).substr(0, 8));
    fs::create_directories(tree / "repeat_1" / "PROF_x");
    std::ofstream(tree / "repeat_1" / "PROF_x" / "op_summary.csv") << content;
    const fs::path tar = tree.string() + ".tar.gz";
    EXPECT_TRUE(PackRawArchive(tree, tar).ok());
    std::ifstream in(tar, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A succeeded attempt of a new collection and its round.
  std::pair<v1::JobAssignment, int64_t> Succeeded() {
    if (agent_.empty()) agent_ = Register("host-1");
    Submit();
    auto a = Lease(agent_, 0);
    EXPECT_TRUE(a.has_value());
    if (!a) return {};
    auto r = Succeed(*a, "u-" + std::to_string(a->job_id()), 10);
    EXPECT_TRUE(r.ok()) << r.status();
    return {*a, r.ok() ? r->round_id() : 0};
  }

  static v1::ArtifactHeader HeaderOf(const v1::JobAssignment& a, const std::string& agent,
                                     const std::string& tar) {
    v1::ArtifactHeader h;
    h.set_agent_id(agent);
    h.set_job_id(a.job_id());
    h.set_attempt(a.attempt());
    h.set_fencing_token(a.fencing_token());
    h.set_lease_secret(a.lease_secret());
    h.set_name("raw.tar.gz");
    h.set_size_bytes(static_cast<int64_t>(tar.size()));
    h.set_sha256(Sha256Hex(tar));
    return h;
  }

  // Uploads header then bytes in 1000-byte chunks as `who`.
  absl::StatusOr<v1::UploadArtifactResponse> Upload(const AgentIdentity& who,
                                                    const v1::ArtifactHeader& h,
                                                    const std::string& bytes) {
    std::vector<v1::UploadArtifactRequest> msgs(1);
    *msgs[0].mutable_header() = h;
    for (size_t off = 0; off < bytes.size(); off += 1000) {
      msgs.emplace_back().set_chunk(bytes.substr(off, 1000));
    }
    size_t next = 0;
    return scheduler_.UploadArtifact(who, [&](v1::UploadArtifactRequest* m) {
      if (next == msgs.size()) return false;
      *m = msgs[next++];
      return true;
    });
  }

  std::string Download(const std::string& team, int64_t round, const std::string& sha,
                       absl::Status* status) {
    v1::DownloadArtifactRequest req;
    req.set_round_id(round);
    req.set_sha256(sha);
    std::string got;
    *status = scheduler_.artifacts().Download(team, req, [&](int64_t, const std::string& p) {
      got += p;
      return true;
    });
    return got;
  }

  fs::path FileOf(const std::string& sha) {
    return dir.path() / "artifacts" / "sha256" / sha.substr(0, 2) / sha;
  }

  double Counter(prometheus::Counter& c) { return c.Value(); }

  std::string agent_;
};

TEST_F(ArtifactsTest, TheLeaseHolderUploadsOnceAndTheRoundListsIt) {
  auto [a, round] = Succeeded();
  const std::string tar = RawTar();
  ASSERT_OK_AND_ASSIGN(first, Upload(Holder(a), HeaderOf(a, agent_, tar), tar));
  EXPECT_EQ(first.round_id(), round);
  EXPECT_FALSE(first.already_present());
  EXPECT_EQ(first.artifact().sha256(), Sha256Hex(tar));
  EXPECT_TRUE(fs::is_regular_file(FileOf(Sha256Hex(tar))));
  EXPECT_EQ(static_cast<size_t>(fs::file_size(FileOf(Sha256Hex(tar)))), tar.size());
  EXPECT_EQ(Counter(metrics_.artifact_bytes_stored), static_cast<double>(tar.size()));
  // A retried upload of the same digest is a no-op.
  ASSERT_OK_AND_ASSIGN(again, Upload(Holder(a), HeaderOf(a, agent_, tar), tar));
  EXPECT_TRUE(again.already_present());
  EXPECT_EQ(Counter(metrics_.artifact_bytes_stored), static_cast<double>(tar.size()));
  ASSERT_OK_AND_ASSIGN(listed, store_->ListArtifacts("team", round));
  ASSERT_EQ(listed.size(), 1u);
  absl::Status s;
  EXPECT_EQ(Download("team", round, Sha256Hex(tar), &s), tar);
  EXPECT_TRUE(s.ok()) << s;
  // Another team's download finds nothing.
  EXPECT_TRUE(Download("other", round, Sha256Hex(tar), &s).empty());
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_TRUE(fs::is_empty(dir.path() / "artifacts" / "tmp"));
}

TEST_F(ArtifactsTest, RefusesImpostorsForeignAgentsAndStaleTokens) {
  auto [a, round] = Succeeded();
  const std::string other = Register("host-2");
  const std::string tar = RawTar();
  // Another host's token naming the holder's agent id: the identity check.
  auto impostor = Upload(As(other), HeaderOf(a, agent_, tar), tar);
  EXPECT_TRUE(absl::IsPermissionDenied(impostor.status())) << impostor.status();
  // Its own agent id, but not the lease's holder.
  auto foreign = Upload(As(other), HeaderOf(a, other, tar), tar);
  EXPECT_EQ(AgentRefusalOf(foreign.status()), AgentRefusal::kForeignAgent) << foreign.status();
  v1::ArtifactHeader stale = HeaderOf(a, agent_, tar);
  stale.set_fencing_token(a.fencing_token() - 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(Upload(Holder(a), stale, tar).status()));
  v1::ArtifactHeader wrong_secret = HeaderOf(a, agent_, tar);
  wrong_secret.set_lease_secret("guess");
  EXPECT_TRUE(absl::IsPermissionDenied(Upload(Holder(a), wrong_secret, tar).status()));
  EXPECT_TRUE(store_->ListArtifacts("", round)->empty());
  EXPECT_FALSE(fs::exists(FileOf(Sha256Hex(tar))));
}

TEST_F(ArtifactsTest, RefusesWhatIsTooBigMismatchedOrNotASafeArchive) {
  auto [a, round] = Succeeded();
  const std::string tar = RawTar();
  v1::ArtifactHeader big = HeaderOf(a, agent_, tar);
  big.set_size_bytes((1 << 20) + 1);
  const absl::Status too_big = Upload(Holder(a), big, tar).status();
  EXPECT_TRUE(absl::IsResourceExhausted(too_big)) << too_big;
  EXPECT_NE(too_big.message().find("limit is 1048576 bytes (--max-artifact-mib)"),
            std::string::npos)
      << too_big;
  v1::ArtifactHeader wrong = HeaderOf(a, agent_, tar);
  wrong.set_sha256(Sha256Hex("something else"));
  EXPECT_EQ(Fields(Upload(Holder(a), wrong, tar).status()),
            std::vector<std::string>{"header.sha256"});
  const std::string junk(300, 'x');
  EXPECT_EQ(Fields(Upload(Holder(a), HeaderOf(a, agent_, junk), junk).status()),
            std::vector<std::string>{"chunk"});
  v1::ArtifactHeader bad_name = HeaderOf(a, agent_, tar);
  bad_name.set_name("../x");
  EXPECT_EQ(Fields(Upload(Holder(a), bad_name, tar).status()),
            std::vector<std::string>{"header.name"});
  EXPECT_TRUE(store_->ListArtifacts("", round)->empty());
  EXPECT_TRUE(fs::is_empty(dir.path() / "artifacts" / "tmp"));
}

TEST_F(ArtifactsTest, QuotaRefusalNamesTheTeamAndTheLimit) {
  // Three rounds of incompressible 1 MiB - 1 KiB archives pass the 3 MiB quota on the fourth.
  std::string noise;
  uint64_t x = 1;
  for (int i = 0; i < (1 << 20) - 4096; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    noise += static_cast<char>(x >> 56);
  }
  absl::Status last;
  for (int i = 0; i < 4 && last.ok(); ++i) {
    auto [a, round] = Succeeded();
    const std::string tar = RawTar(noise + std::to_string(i));
    last = Upload(Holder(a), HeaderOf(a, agent_, tar), tar).status();
  }
  EXPECT_TRUE(absl::IsResourceExhausted(last)) << last;
  EXPECT_NE(last.message().find("team team"), std::string::npos) << last;
  EXPECT_NE(last.message().find("quota of 3145728 bytes (--artifact-quota-mib)"), std::string::npos)
      << last;
  EXPECT_EQ(metrics_.refused.Add({{"reason", "artifact_quota"}}).Value(), 1);
}

TEST_F(ArtifactsTest, SweepDeletesOldArtifactsButKeepsPinnedBaselines) {
  auto [a1, round1] = Succeeded();
  auto [a2, round2] = Succeeded();
  const std::string tar1 = RawTar("one\n");
  const std::string tar2 = RawTar("two\n");
  ASSERT_TRUE(Upload(Holder(a1), HeaderOf(a1, agent_, tar1), tar1).ok());
  ASSERT_TRUE(Upload(Holder(a2), HeaderOf(a2, agent_, tar2), tar2).ok());
  Baseline pin;
  pin.label = "branch=main";
  pin.round_id = round2;
  ASSERT_TRUE(store_->PinBaseline("team", pin).ok());
  clock_.Advance(std::chrono::hours(23));
  ASSERT_TRUE(scheduler_.SweepArtifacts().ok());
  EXPECT_EQ(store_->ListArtifacts("", round1)->size(), 1u);  // not a day old yet
  clock_.Advance(std::chrono::hours(2));
  ASSERT_TRUE(scheduler_.SweepArtifacts().ok());
  EXPECT_TRUE(store_->ListArtifacts("", round1)->empty());
  EXPECT_FALSE(fs::exists(FileOf(Sha256Hex(tar1))));
  EXPECT_EQ(store_->ListArtifacts("", round2)->size(), 1u);  // pinned
  EXPECT_TRUE(fs::exists(FileOf(Sha256Hex(tar2))));
  EXPECT_EQ(Counter(metrics_.artifacts_swept), 1);
  EXPECT_EQ(Counter(metrics_.artifact_bytes_swept), static_cast<double>(tar1.size()));
}

// The same server with a retention of the team's own (--artifact-retention-team).
class TeamRetentionTest : public ArtifactsTest {
 protected:
  void SetTeamPolicy(const std::string& flag) {
    auto p = ParseTeamArtifactPolicy(flag);
    ASSERT_TRUE(p.ok()) << p.status();
    SchedulerOptions o = WithArtifacts(dir.path() / "artifacts");
    o.artifacts.teams[p->team] = *p;
    team_scheduler_ = std::make_unique<Scheduler>(*store_, clock_, metrics_, o);
  }
  std::unique_ptr<Scheduler> team_scheduler_;
};

TEST_F(TeamRetentionTest, TeamRetentionReplacesTheDefaultButKeepsPinnedBaselines) {
  SetTeamPolicy("team=2h");
  auto [a1, round1] = Succeeded();
  auto [a2, round2] = Succeeded();
  const std::string tar1 = RawTar("one\n"), tar2 = RawTar("two\n");
  ASSERT_TRUE(Upload(Holder(a1), HeaderOf(a1, agent_, tar1), tar1).ok());
  ASSERT_TRUE(Upload(Holder(a2), HeaderOf(a2, agent_, tar2), tar2).ok());
  Baseline pin;
  pin.label = "branch=main";
  pin.round_id = round2;
  ASSERT_TRUE(store_->PinBaseline("team", pin).ok());
  clock_.Advance(std::chrono::hours(2) - std::chrono::seconds(1));
  ASSERT_TRUE(team_scheduler_->SweepArtifacts().ok());
  EXPECT_EQ(store_->ListArtifacts("", round1)->size(), 1u);
  clock_.Advance(std::chrono::seconds(2));  // past the team's 2 h, far from the default day
  ASSERT_TRUE(team_scheduler_->SweepArtifacts().ok());
  EXPECT_TRUE(store_->ListArtifacts("", round1)->empty());
  EXPECT_FALSE(fs::exists(FileOf(Sha256Hex(tar1))));
  EXPECT_EQ(store_->ListArtifacts("", round2)->size(), 1u);  // pinned
}

TEST_F(TeamRetentionTest, TeamThatKeepsItsArtifactsIsNotSweptByTheDefault) {
  SetTeamPolicy("team=never,0");
  auto [a1, round1] = Succeeded();
  const std::string tar1 = RawTar("one\n");
  ASSERT_TRUE(Upload(Holder(a1), HeaderOf(a1, agent_, tar1), tar1).ok());
  clock_.Advance(std::chrono::hours(24 * 40));
  ASSERT_TRUE(team_scheduler_->SweepArtifacts().ok());
  EXPECT_EQ(store_->ListArtifacts("", round1)->size(), 1u);
  // The default scheduler (no override) would have swept it.
  ASSERT_TRUE(scheduler_.SweepArtifacts().ok());
  EXPECT_TRUE(store_->ListArtifacts("", round1)->empty());
}

TEST(ArtifactsOff, AServerWithoutADirectoryRefusesUploads) {
  testing::FakeClock clock;
  prometheus::Registry registry;
  auto store = *SqliteStore::Open(":memory:");
  ServerMetrics metrics(registry);
  Artifacts artifacts(*store, clock, metrics, ArtifactOptions{});
  EXPECT_TRUE(artifacts.status().ok());
  EXPECT_FALSE(artifacts.enabled());
  v1::ArtifactHeader h;
  auto got = artifacts.Upload(h, [](v1::UploadArtifactRequest*) { return false; });
  EXPECT_TRUE(absl::IsFailedPrecondition(got.status())) << got.status();
  EXPECT_NE(got.status().message().find("--artifact-dir"), std::string::npos);
}

}  // namespace
}  // namespace npuperf::server
