// Store conformance: bundles (ownership per team, chunked content, quota,
// the download lookup, the collector).
#include <string>

#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

// A bundle of team for StoreBundle, its content in memory.
NewBundle Upload(const std::string& team, const std::string& sha, const std::string& content,
                 int64_t now_ms, int64_t quota = 0) {
  NewBundle b;
  b.team = team;
  b.name = "op";
  b.sha256 = sha;
  b.size_bytes = static_cast<int64_t>(content.size());
  b.quota_bytes = quota;
  b.now_ms = now_ms;
  b.read = [content](int64_t offset, int64_t max) -> absl::StatusOr<std::string> {
    return content.substr(static_cast<size_t>(offset), static_cast<size_t>(max));
  };
  return b;
}

// A collection of team whose one operator uses bundle sha.
NewCollection UsingBundle(const std::string& id, const std::string& team, const std::string& sha) {
  NewCollection c = MakeCollection(id, team, 1);
  c.spec.mutable_operators(0)->set_bundle_sha256(sha);
  return c;
}

// Team B uploading A's bytes is told nothing about A: the upload reads as
// new to B, and from then on B owns the bundle too.
TEST_P(StoreConformanceTest, BundlesBelongToTheTeamsThatUploadedThem) {
  const std::string content("tar\0with\xffzero", 13);
  EXPECT_FALSE(store_->StoreBundle(Upload("alpha", "sha1", content, 1)).value_or(true));
  EXPECT_TRUE(store_->UseBundle("alpha", "sha1", 2).value_or(false));
  EXPECT_FALSE(store_->UseBundle("beta", "sha1", 2).value_or(true));  // not beta's
  EXPECT_FALSE(store_->StoreBundle(Upload("beta", "sha1", content, 3)).value_or(true));
  EXPECT_TRUE(store_->UseBundle("beta", "sha1", 4).value_or(false));
  EXPECT_TRUE(store_->StoreBundle(Upload("alpha", "sha1", content, 5)).value_or(false));
  ASSERT_OK_AND_ASSIGN(bundle, store_->GetBundle("sha1"));
  EXPECT_EQ(bundle, content);
  EXPECT_EQ(store_->BundleBytes("alpha").value_or(-1), 13);
  EXPECT_EQ(store_->BundleBytes("beta").value_or(-1), 13);
  EXPECT_EQ(store_->BundleBytes("gamma").value_or(-1), 0);
  EXPECT_TRUE(absl::IsNotFound(store_->GetBundle("sha2").status()));
}

TEST_P(StoreConformanceTest, BundleContentIsStoredInChunks) {
  std::string content;
  for (int64_t i = 0; i < kStoredChunkBytes * 5 / 2; ++i) content += static_cast<char>(i * 7);
  ASSERT_TRUE(store_->StoreBundle(Upload("alpha", "big", content, 1)).ok());
  ASSERT_OK_AND_ASSIGN(first, store_->GetBundleChunk("big", 0));
  EXPECT_EQ(static_cast<int64_t>(first.size()), kStoredChunkBytes);
  ASSERT_OK_AND_ASSIGN(last, store_->GetBundleChunk("big", 2));
  EXPECT_EQ(static_cast<int64_t>(last.size()), kStoredChunkBytes / 2);
  EXPECT_TRUE(absl::IsNotFound(store_->GetBundleChunk("big", 3).status()));
  ASSERT_OK_AND_ASSIGN(whole, store_->GetBundle("big"));
  EXPECT_EQ(whole, content);
}

// The quota counts every bundle the team owns; a refused upload stores
// nothing, and a bundle the team already owns is never refused.
TEST_P(StoreConformanceTest, BundleQuotaRefusesAndStoresNothing) {
  const std::string sixty(60, 'x');
  ASSERT_TRUE(store_->StoreBundle(Upload("alpha", "s1", sixty, 1, 100)).ok());
  auto over = store_->StoreBundle(Upload("alpha", "s2", std::string(60, 'y'), 2, 100));
  EXPECT_TRUE(absl::IsResourceExhausted(over.status())) << over.status();
  EXPECT_EQ(store_->BundleBytes("alpha").value_or(-1), 60);
  EXPECT_FALSE(store_->UseBundle("alpha", "s2", 3).value_or(true));
  EXPECT_TRUE(absl::IsNotFound(store_->GetBundle("s2").status()));
  EXPECT_TRUE(store_->StoreBundle(Upload("alpha", "s1", sixty, 4, 100)).value_or(false));
  EXPECT_FALSE(store_->StoreBundle(Upload("beta", "s2", std::string(60, 'y'), 5, 100))
                   .value_or(true));  // another team's quota is its own
}

TEST_P(StoreConformanceTest, JobBundleNamesTheLeaseHolderAndOwnership) {
  ASSERT_TRUE(store_->StoreBundle(Upload("alpha", "sha-a", "tar-a", 1)).ok());
  Insert(UsingBundle("c1", "alpha", "sha-a"));
  Insert(UsingBundle("c2", "beta", "sha-a"));  // beta never uploaded it
  auto a = Claim(Req("agent-1", {0}));
  ASSERT_TRUE(a.has_value());
  ASSERT_OK_AND_ASSIGN(mine, store_->GetJobBundle(a->job_id()));
  EXPECT_EQ(mine.state, v1::JOB_STATE_LEASED);
  EXPECT_EQ(mine.agent_id, "agent-1");
  EXPECT_EQ(mine.bundle_sha256, "sha-a");
  EXPECT_TRUE(mine.stored);
  EXPECT_EQ(mine.size_bytes, 5);
  EXPECT_EQ(mine.chunks, 1);
  const int64_t foreign_job = store_->GetCollection("", "c2")->jobs(0).id();
  ASSERT_OK_AND_ASSIGN(foreign, store_->GetJobBundle(foreign_job));
  EXPECT_EQ(foreign.team, "beta");
  EXPECT_FALSE(foreign.stored);
  EXPECT_TRUE(absl::IsNotFound(store_->GetJobBundle(999'999).status()));
}

// The collector drops the ownerships unused since the cutoff that nothing
// needs, keeps those of queued collections and pinned baselines, and
// deletes a content only when nobody owns it.
TEST_P(StoreConformanceTest, CollectorKeepsWhatQueuedJobsAndBaselinesNeed) {
  ASSERT_TRUE(store_->StoreBundle(Upload("alpha", "old", "0123456789", 1000)).ok());
  ASSERT_TRUE(store_->StoreBundle(Upload("beta", "old", "0123456789", 5000)).ok());
  ASSERT_TRUE(store_->StoreBundle(Upload("alpha", "queued", "q", 1000)).ok());
  ASSERT_TRUE(store_->StoreBundle(Upload("alpha", "pinned", "pp", 1000)).ok());
  ASSERT_TRUE(store_->StoreBundle(Upload("alpha", "done", "ddd", 1000)).ok());
  Insert(UsingBundle("cq", "alpha", "queued"));
  Insert(UsingBundle("cp", "alpha", "pinned"));
  Insert(UsingBundle("cd", "alpha", "done"));
  ASSERT_TRUE(store_->CancelCollection("alpha", "cp", "stop", 1500).ok());
  ASSERT_TRUE(store_->CancelCollection("alpha", "cd", "stop", 1500).ok());
  Baseline pin;
  pin.label = "branch=main";
  pin.collection_id = "cp";
  pin.pinned_ms = 1600;
  ASSERT_TRUE(store_->PinBaseline("alpha", pin).ok());

  ASSERT_OK_AND_ASSIGN(first, store_->CollectBundles(3000));
  EXPECT_EQ(first.owners_dropped, 2);   // alpha's "old" and "done"
  EXPECT_EQ(first.bundles_deleted, 1);  // "done"; beta still owns "old"
  EXPECT_EQ(first.bytes_freed, 3);
  EXPECT_FALSE(store_->UseBundle("alpha", "old", 3001).value_or(true));
  EXPECT_TRUE(store_->GetBundle("old").ok());
  EXPECT_TRUE(absl::IsNotFound(store_->GetBundle("done").status()));
  EXPECT_TRUE(store_->UseBundle("alpha", "queued", 1000).value_or(false));
  EXPECT_TRUE(store_->UseBundle("alpha", "pinned", 1000).value_or(false));

  ASSERT_OK_AND_ASSIGN(second, store_->CollectBundles(10'000));
  EXPECT_EQ(second.owners_dropped, 1);  // beta's "old"
  EXPECT_EQ(second.bundles_deleted, 1);
  EXPECT_EQ(second.bytes_freed, 10);
  EXPECT_TRUE(absl::IsNotFound(store_->GetBundle("old").status()));
  EXPECT_EQ(store_->BundleBytes("alpha").value_or(-1), 3);  // "queued" and "pinned" stay
}

}  // namespace
}  // namespace npuperf::server
