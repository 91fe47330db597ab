#include "server/core/read_queries.h"

#include <atomic>
#include <future>
#include <vector>

#include "common/status_util.h"
#include "gtest/gtest.h"
#include "server/core/limits.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ReadQueriesTest : public SchedulerFixture {
 protected:
  ReadQueries reads_{*store_};
};

TEST_F(ReadQueriesTest, AnotherTeamsCollectionIsNotFound) {
  v1::GetCollectionRequest req;
  req.set_collection_id(Submit());
  auto mine = reads_.GetCollection("team", req);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->collection().id(), req.collection_id());
  EXPECT_TRUE(absl::IsNotFound(reads_.GetCollection("other", req).status()));
}

TEST_F(ReadQueriesTest, ListCollectionsPagesNewestFirst) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(Submit());
    clock_.Advance(seconds(1));
  }
  v1::ListCollectionsRequest req;
  req.set_page_size(2);
  auto first = reads_.ListCollections("team", req);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->collections_size(), 2);
  EXPECT_EQ(first->collections(0).id(), ids[2]);
  EXPECT_FALSE(first->next_page_token().empty());
  req.set_page_token(first->next_page_token());
  auto second = reads_.ListCollections("team", req);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->collections_size(), 1);
  EXPECT_EQ(second->collections(0).id(), ids[0]);
  EXPECT_TRUE(second->next_page_token().empty()) << "a short page is the last";
  EXPECT_EQ(reads_.ListCollections("other", {})->collections_size(), 0);
}

TEST_F(ReadQueriesTest, ListCollectionsChecksPageSizeAndToken) {
  v1::ListCollectionsRequest req;
  req.set_page_size(kMaxCollectionsPage + 1);
  auto big = reads_.ListCollections("team", req);
  ASSERT_TRUE(absl::IsInvalidArgument(big.status()));
  EXPECT_EQ(FieldViolationsOf(big.status()).at(0).description, "must be in 0..500");
  req.set_page_size(-1);
  EXPECT_EQ(Fields(reads_.ListCollections("team", req).status()),
            std::vector<std::string>{"page_size"});
  req.set_page_size(0);
  req.set_page_token("no-separator");
  EXPECT_EQ(Fields(reads_.ListCollections("team", req).status()),
            std::vector<std::string>{"page_token"});
}

TEST_F(ReadQueriesTest, ListRoundsReportsEveryBadFieldAtOnce) {
  v1::ListRoundsRequest req;
  req.set_page_size(kMaxRoundsPage + 1);
  req.set_page_token("x");
  auto got = reads_.ListRounds("team", req);
  ASSERT_TRUE(absl::IsInvalidArgument(got.status()));
  EXPECT_EQ(Fields(got.status()),
            (std::vector<std::string>{"operator_name", "page_size", "page_token"}));
}

TEST_F(ReadQueriesTest, RoundsAreReadForTheirTeamOnly) {
  Submit();
  auto a = Lease(Register("h1"), 0);
  ASSERT_TRUE(a);
  auto stored = Succeed(*a, "u1", 12.5);
  ASSERT_TRUE(stored.ok()) << stored.status();
  v1::ListRoundsRequest list;
  list.set_operator_name("op");
  auto page = reads_.ListRounds("team", list);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->rounds_size(), 1);
  EXPECT_EQ(page->rounds(0).id(), stored->round_id());
  EXPECT_EQ(reads_.ListRounds("other", list)->rounds_size(), 0);
  v1::GetRoundRequest get;
  get.set_round_id(stored->round_id());
  EXPECT_TRUE(reads_.GetRound("team", get).ok());
  EXPECT_TRUE(absl::IsNotFound(reads_.GetRound("other", get).status()));
  auto agents = reads_.ListAgents(AgentsViewer::Of(Principal{}, /*auth_required=*/false));
  ASSERT_TRUE(agents.ok());
  EXPECT_EQ(agents->agents_size(), 1);
}

}  // namespace
}  // namespace npuperf::server
