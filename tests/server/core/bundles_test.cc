// Bundles: upload slots, team ownership (no existence oracle), the quota,
// downloads for lease holders only, and the collector on a FakeClock.
#include "server/core/bundles.h"

#include <fstream>
#include <vector>

#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

TEST(UploadSlotsTest, BoundPerTeamAndInTotal) {
  UploadSlots slots(3, 2);
  auto a1 = slots.Acquire("alpha");
  auto a2 = slots.Acquire("alpha");
  ASSERT_TRUE(a1.ok() && a2.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(slots.Acquire("alpha").status()));
  auto b1 = slots.Acquire("beta");
  ASSERT_TRUE(b1.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(slots.Acquire("gamma").status()));  // 3 in total
  EXPECT_EQ(slots.in_use(), 3);
  { auto released = std::move(*a1); }
  EXPECT_EQ(slots.in_use(), 2);
  EXPECT_TRUE(slots.Acquire("gamma").ok());  // and released again at once
  EXPECT_EQ(slots.in_use(), 2);
}

TEST(CheckBundleDownloadTest, OnlyTheLeaseHolderGetsItsJobsBundle) {
  JobBundle job;
  job.state = v1::JOB_STATE_RUNNING;
  job.agent_id = "a-1";
  job.bundle_sha256 = "sha";
  job.stored = true;
  EXPECT_TRUE(CheckBundleDownload(job, "a-1", 7, "sha").ok());
  EXPECT_TRUE(absl::IsPermissionDenied(CheckBundleDownload(job, "a-2", 7, "sha")));
  EXPECT_TRUE(absl::IsPermissionDenied(CheckBundleDownload(job, "", 7, "sha")));
  EXPECT_TRUE(absl::IsPermissionDenied(CheckBundleDownload(job, "a-1", 7, "other")));
  job.stored = false;
  EXPECT_TRUE(absl::IsNotFound(CheckBundleDownload(job, "a-1", 7, "sha")));
  job.state = v1::JOB_STATE_SUCCEEDED;
  EXPECT_TRUE(absl::IsPermissionDenied(CheckBundleDownload(job, "a-1", 7, "sha")));
  EXPECT_TRUE(absl::IsPermissionDenied(CheckBundleDownload(JobBundle(), "a-1", 7, "sha")));
}

class BundlesTest : public SchedulerFixture {
 protected:
  // A real operator tar whose content differs by `tag`.
  std::string Tar(const std::string& tag) {
    std::ofstream(dir_.path() / "run.py") << "print('" << tag << "')\n";
    return *PackBundle(dir_.path(), 1 << 20);
  }

  // An UploadBundle stream of tar in two chunks; counts the messages read.
  ReadUploadMessage Stream(const std::string& tar) {
    auto next = std::make_shared<int>(0);
    return [this, tar, next](v1::UploadBundleRequest* msg) {
      ++reads_;
      msg->Clear();
      if (*next == 0) {
        msg->mutable_header()->set_name("op");
        msg->mutable_header()->set_sha256(Sha256Hex(tar));
        msg->mutable_header()->set_size_bytes(static_cast<int64_t>(tar.size()));
      } else if (*next <= 2) {
        const size_t half = tar.size() / 2;
        msg->set_chunk(*next == 1 ? tar.substr(0, half) : tar.substr(half));
      } else {
        return false;
      }
      ++*next;
      return true;
    };
  }

  Bundles Make(BundleOptions o) { return Bundles(*store_, clock_, metrics_, o, 1 << 20); }

  testing::TempDir dir_;
  int reads_ = 0;
};

TEST_F(BundlesTest, AnotherTeamUploadingTheSameBytesLearnsNothing) {
  Bundles bundles = Make(BundleOptions());
  const std::string tar = Tar("a");
  auto alpha = bundles.Upload("alpha", Stream(tar));
  ASSERT_TRUE(alpha.ok()) << alpha.status();
  EXPECT_FALSE(alpha->already_present());
  auto beta = bundles.Upload("beta", Stream(tar));
  ASSERT_TRUE(beta.ok()) << beta.status();
  EXPECT_FALSE(beta->already_present());  // as if new: beta sent every byte
  EXPECT_TRUE(bundles.Upload("beta", Stream(tar))->already_present());
  EXPECT_TRUE(*store_->UseBundle("beta", Sha256Hex(tar), 0));
}

// The quota is checked on the header, before any content is read, and
// again when the bundle is stored; a refusal stores nothing.
TEST_F(BundlesTest, QuotaRefusesBeforeTheContentIsRead) {
  const std::string first = Tar("first");
  BundleOptions o;
  o.quota_bytes = static_cast<int64_t>(first.size()) + 100;
  Bundles bundles = Make(o);
  ASSERT_TRUE(bundles.Upload("alpha", Stream(first)).ok());
  reads_ = 0;
  const std::string second = Tar("second");
  auto over = bundles.Upload("alpha", Stream(second));
  EXPECT_TRUE(absl::IsResourceExhausted(over.status())) << over.status();
  EXPECT_EQ(reads_, 1);  // the header only
  EXPECT_FALSE(*store_->UseBundle("alpha", Sha256Hex(second), 0));
  EXPECT_TRUE(bundles.Upload("beta", Stream(second)).ok());  // beta's quota is its own
  EXPECT_TRUE(bundles.Upload("alpha", Stream(first)).ok());  // owned already: never refused
}

// A bundle nothing needs lives for the retention period after its last
// use, on the injected clock; one a queued collection uses stays.
TEST_F(BundlesTest, CollectorDeletesUnusedBundlesAfterTheRetention) {
  BundleOptions o;
  o.retention = hours(1);
  Bundles bundles = Make(o);
  const std::string idle = Tar("idle");
  ASSERT_TRUE(bundles.Upload("team", Stream(idle)).ok());
  ASSERT_TRUE(scheduler_.Submit("team", Request(1)).ok());  // uses Bundle()
  clock_.Advance(minutes(59));
  ASSERT_TRUE(bundles.Collect().ok());
  EXPECT_TRUE(store_->GetBundle(Sha256Hex(idle)).ok());
  clock_.Advance(minutes(2));
  auto pass = bundles.Collect();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->bundles_deleted, 1);
  EXPECT_EQ(pass->bytes_freed, static_cast<int64_t>(idle.size()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetBundle(Sha256Hex(idle)).status()));
  EXPECT_TRUE(store_->GetBundle(Bundle()).ok());  // the queued collection's
}

// Submitting another team's (or an unknown) bundle hash is NOT_FOUND:
// the hash alone never runs another team's code.
TEST_F(BundlesTest, SubmitWithAnotherTeamsBundleIsNotFound) {
  auto got = scheduler_.Submit("other", Request(1));  // Bundle() is "team"'s
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
  EXPECT_TRUE(scheduler_.Submit("team", Request(1)).ok());
}

TEST_F(BundlesTest, DownloadStreamsOnlyToTheLeaseHolder) {
  auto c = scheduler_.Submit("team", Request(1));
  ASSERT_TRUE(c.ok());
  const std::string agent = Register("h1");
  const std::string intruder = Register("h2");
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  v1::DownloadBundleRequest req;
  req.set_sha256(a->bundle_sha256());
  req.set_job_id(a->job_id());
  req.set_agent_id(agent);
  std::string got;
  int64_t size = 0;
  auto sink = [&](int64_t s, const std::string& piece) {
    if (s > 0) size = s;
    got += piece;
    return true;
  };
  ASSERT_TRUE(scheduler_.DownloadBundle(As(req.agent_id()), req, sink).ok());
  EXPECT_EQ(got, "tar");
  EXPECT_EQ(size, 3);
  req.set_agent_id(intruder);
  EXPECT_TRUE(absl::IsPermissionDenied(scheduler_.DownloadBundle(As(req.agent_id()), req, sink)));
  req.set_agent_id(agent);
  req.set_sha256(Sha256Hex("another"));
  EXPECT_TRUE(absl::IsPermissionDenied(scheduler_.DownloadBundle(As(req.agent_id()), req, sink)));
  req.set_job_id(424242);
  EXPECT_TRUE(absl::IsPermissionDenied(scheduler_.DownloadBundle(As(req.agent_id()), req, sink)));
}

}  // namespace
}  // namespace npuperf::server
