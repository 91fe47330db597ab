#include "client/git_range.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/bundle_tar.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npuperf::client {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A throwaway repository: ops/rms/{run.py,cases.json} over five commits
// (c1..c5), README.md outside the operator directory in c3.
class GitRangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "npuperf-git-XXXXXX").string();
    ASSERT_NE(::mkdtemp(t.data()), nullptr);
    root_ = t;
    repo_ = root_ / "repo";
    fs::create_directories(repo_ / "ops" / "rms");
    git_ = std::make_unique<GitRepository>(repo_, clock_);
    Git({"init", "-q", "-b", "main"});
    Git({"config", "user.name", "Ada"});
    Git({"config", "user.email", "ada@example.com"});
    for (int i = 1; i <= 5; ++i) {
      Write("ops/rms/run.py",
            absl::StrCat("# revision ", i, "\nprint('PYPTO_PERF_SELECTED_CASE=c')\n"));
      Write("ops/rms/cases.json", "{\"cases\": [{\"case_id\": \"c\"}]}\n");
      if (i == 3) Write("README.md", "docs only\n");
      Git({"add", "-A"});
      Git({"commit", "-q", "-m", absl::StrCat("c", i, ": step ", i)});
      hashes_.push_back(Head());
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string Git(const std::vector<std::string>& args) {
    absl::StatusOr<std::string> out = git_->Run(args);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : "";
  }
  std::string Head() {
    std::string h = Git({"rev-parse", "HEAD"});
    return h.substr(0, h.find('\n'));
  }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(repo_ / rel) << text;
  }

  RealClock clock_;
  fs::path root_, repo_;
  std::unique_ptr<GitRepository> git_;
  std::vector<std::string> hashes_;
};

TEST_F(GitRangeTest, TheRangeIsGoodThenEveryFirstParentCommitToBad) {
  auto r = git_->FirstParentRange(hashes_[0], "main", 1024);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ((*r)[i].hash, hashes_[i]);
  EXPECT_EQ((*r)[0].subject, "c1: step 1");
  EXPECT_EQ((*r)[4].subject, "c5: step 5");
  EXPECT_EQ((*r)[4].author, "Ada <ada@example.com>");
}

TEST_F(GitRangeTest, BadRangesAreRefusedNamingTheFlag) {
  auto unknown = git_->FirstParentRange("no-such-rev", "main", 1024);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("--good: no commit 'no-such-rev'"));
  auto option = git_->FirstParentRange(hashes_[0], "--output=/tmp/x", 1024);
  EXPECT_THAT(option.status().message(), HasSubstr("--bad: '--output=/tmp/x' is not a revision"));
  auto reversed = git_->FirstParentRange("main", hashes_[0], 1024);
  EXPECT_THAT(reversed.status().message(), HasSubstr("is not an ancestor of --bad"));
  auto same = git_->FirstParentRange("main", hashes_[4], 1024);
  EXPECT_THAT(same.status().message(), HasSubstr("the same commit"));
  auto long_range = git_->FirstParentRange(hashes_[0], "main", 3);
  EXPECT_THAT(long_range.status().message(), HasSubstr("4 commits in"));
  EXPECT_THAT(long_range.status().message(), HasSubstr("at most 3: narrow the range"));
  auto not_repo = GitRepository(root_, clock_).FirstParentRange("a", "b", 1024);
  EXPECT_THAT(not_repo.status().message(), HasSubstr("--repo: "));
}

TEST_F(GitRangeTest, AnOperatorDirectoryIsPackedAsItWasAtTheRevision) {
  auto rel = git_->PathInRepo(repo_ / "ops" / "rms");
  ASSERT_TRUE(rel.ok()) << rel.status();
  EXPECT_EQ(*rel, "ops/rms");
  // The bundle at HEAD is byte for byte what PackBundle makes of the checkout.
  auto head = git_->PackAtRevision(hashes_[4], *rel, root_, 1 << 20);
  ASSERT_TRUE(head.ok()) << head.status();
  auto checkout = PackBundle(repo_ / "ops" / "rms", 1 << 20);
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  EXPECT_EQ(*head, *checkout);
  // An older revision differs, and the user's tree is untouched.
  auto first = git_->PackAtRevision(hashes_[0], *rel, root_, 1 << 20);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_NE(*first, *head);
  auto content = BundleFileContent(*first, "run.py", 1 << 20, 1 << 20);
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_TRUE(absl::StartsWith(*content, "# revision 1\n"));
  EXPECT_EQ(git_->CheckCommitted({*rel}), absl::OkStatus());
  // No temporary directory is left behind.
  int left = 0;
  for (const auto& e : fs::directory_iterator(root_)) left += e.path().filename() != "repo";
  EXPECT_EQ(left, 0);
}

TEST_F(GitRangeTest, AMissingDirectoryOrOneOutsideTheRepositoryIsNamed) {
  Write("ops/rms/run.py", "x");  // dirty, but not what this test asks
  fs::create_directories(repo_ / "ops" / "new");
  auto absent = git_->PackAtRevision(hashes_[0], "ops/new", root_, 1 << 20);
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(absent.status().message(), HasSubstr("ops/new does not exist at"));
  auto outside = git_->PathInRepo(root_);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outside.status().message(), HasSubstr("not an operator directory inside"));
  EXPECT_EQ(git_->PathInRepo(repo_ / "nope").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GitRangeTest, UncommittedOrUntrackedChangesAreRefused) {
  Write("ops/rms/run.py", "changed\n");
  Write("ops/rms/new.txt", "untracked\n");
  Write("README.md", "outside the operator directory: fine\n");
  const absl::Status s = git_->CheckCommitted({"ops/rms"});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("ops/rms/run.py"));
  EXPECT_THAT(s.message(), HasSubstr("ops/rms/new.txt"));
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("README")));
}

TEST_F(GitRangeTest, GitIsKilledPastItsDeadlineOrItsOutputCap) {
  auto slow = git_->Run({"-c", "alias.nap=!sleep 5", "nap"}, 1 << 20, 200);
  EXPECT_EQ(slow.status().code(), absl::StatusCode::kDeadlineExceeded) << slow.status();
  auto chatty = git_->Run({"log"}, 10);
  EXPECT_EQ(chatty.status().code(), absl::StatusCode::kResourceExhausted) << chatty.status();
  auto failing = git_->Run({"no-such-command"});
  EXPECT_EQ(failing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(failing.status().message(), HasSubstr("git no-such-command failed: "));
}

TEST_F(GitRangeTest, ChangedFilesAreThoseOfTheOperatorDirectory) {
  auto files = git_->ChangedFiles(hashes_[1], hashes_[2], "ops/rms");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ElementsAre("ops/rms/run.py"));  // README.md is outside
}

// examples/bisect/make_repo.sh: the repository the bisection tests and the
// demo bisect, with its culprit, noise-only and broken commits where it says.
TEST_F(GitRangeTest, TheExampleRepositoryHasItsCulpritWhereItSays) {
  const fs::path out = root_ / "example";
  const std::string cmd = absl::StrCat("bash '", NPUPERF_EXAMPLES_DIR, "/bisect/make_repo.sh' '",
                                       out.string(), "' 16 11 5 8 > '", root_.string(), "/hashes'");
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::map<std::string, std::string> h;
  std::ifstream in(root_ / "hashes");
  for (std::string line; std::getline(in, line);) {
    h[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
  }
  GitRepository example(out, clock_);
  auto range = example.FirstParentRange(h["good"], h["bad"], 1024);
  ASSERT_TRUE(range.ok()) << range.status();
  ASSERT_EQ(range->size(), 17u);
  EXPECT_EQ((*range)[11].hash, h["culprit"]);
  EXPECT_EQ((*range)[5].hash, h["noisy"]);
  EXPECT_EQ((*range)[8].hash, h["broken"]);
  auto at = [&](int i) {
    auto b = example.PackAtRevision((*range)[i].hash, "ops/apply_adam", root_, 1 << 20);
    EXPECT_TRUE(b.ok()) << b.status();
    auto runner = BundleFileContent(b.ok() ? *b : "", "test_apply_adam.py", 1 << 20, 1 << 20);
    return runner.ok() ? *runner : std::string();
  };
  EXPECT_THAT(at(10), HasSubstr("gm_to_ub=16 * n"));
  EXPECT_THAT(at(11), HasSubstr("gm_to_ub=20 * n"));
  EXPECT_THAT(at(8), HasSubstr("sys.exit(3)"));
  EXPECT_THAT(at(9), ::testing::Not(HasSubstr("sys.exit(3)")));
  auto changed = example.ChangedFiles((*range)[10].hash, (*range)[11].hash, "ops/apply_adam");
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_THAT(*changed, ElementsAre("ops/apply_adam/test_apply_adam.py"));
}

}  // namespace
}  // namespace npuperf::client
