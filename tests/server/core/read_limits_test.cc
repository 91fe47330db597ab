// Read requests under the limits of issue 13: GetCollection pages its jobs,
// page tokens and filters are checked (never an exception), and a collection
// whose jobs no online agent can take says why.
#include "common/status_util.h"
#include "gtest/gtest.h"
#include "server/core/limits.h"
#include "server/core/read_queries.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

class ReadLimitsTest : public SchedulerFixture {
 protected:
  ReadQueries reads_{*store_};
};

TEST_F(ReadLimitsTest, GetCollectionPagesItsJobsWithCompleteCounts) {
  v1::GetCollectionRequest req;
  req.set_collection_id(Submit(Request(2500)));
  std::vector<int64_t> ids;
  int pages = 0;
  do {
    auto page = reads_.GetCollection("team", req);
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(page->collection().counts().total(), 2500);
    EXPECT_LE(page->collection().jobs_size(), kDefaultJobsPage);
    for (const auto& j : page->collection().jobs()) ids.push_back(j.id());
    // The spec (every case id) comes with the first page only.
    EXPECT_EQ(page->collection().spec().operators_size(), pages == 0 ? 1 : 0);
    req.set_job_page_token(page->next_job_page_token());
    ++pages;
  } while (!req.job_page_token().empty());
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(ids.size(), 2500u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

TEST_F(ReadLimitsTest, GetCollectionHonoursAPageSizeAndRefusesOthers) {
  v1::GetCollectionRequest req;
  req.set_collection_id(Submit(Request(5)));
  req.set_job_page_size(2);
  auto page = reads_.GetCollection("team", req);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->collection().jobs_size(), 2);
  EXPECT_EQ(page->next_job_page_token(), std::to_string(page->collection().jobs(1).id()));
  req.set_job_page_size(kMaxJobsPage + 1);
  EXPECT_EQ(Fields(reads_.GetCollection("team", req).status()),
            std::vector<std::string>{"job_page_size"});
}

TEST_F(ReadLimitsTest, MalformedPageTokensAreInvalidArgumentOnEveryRead) {
  for (const char* bad : {"abc:x", ":", "99999999999999999999", "-3", "12abc"}) {
    v1::GetCollectionRequest get;
    get.set_collection_id("c-1");
    get.set_job_page_token(bad);
    EXPECT_EQ(Fields(reads_.GetCollection("team", get).status()),
              std::vector<std::string>{"job_page_token"})
        << bad;
    v1::ListCollectionsRequest list;
    list.set_page_token(bad);
    EXPECT_EQ(Fields(reads_.ListCollections("team", list).status()),
              std::vector<std::string>{"page_token"})
        << bad;
    v1::ListRoundsRequest rounds;
    rounds.set_operator_name("op");
    rounds.set_page_token(bad);
    EXPECT_EQ(Fields(reads_.ListRounds("team", rounds).status()),
              std::vector<std::string>{"page_token"})
        << bad;
  }
}

TEST_F(ReadLimitsTest, UnknownStatesAndOversizedFiltersAreRefused) {
  v1::ListCollectionsRequest list;
  list.add_states(static_cast<v1::CollectionState>(99));
  (*list.mutable_labels())["k"] = std::string(kMaxLabelValueBytes + 1, 'v');
  EXPECT_EQ(Fields(reads_.ListCollections("team", list).status()),
            (std::vector<std::string>{"states[0]", "labels"}));
  v1::ListRoundsRequest rounds;
  rounds.set_operator_name(std::string(kMaxOperatorNameBytes + 1, 'o'));
  rounds.mutable_since()->set_seconds(INT64_MAX);
  EXPECT_EQ(Fields(reads_.ListRounds("team", rounds).status()),
            (std::vector<std::string>{"operator_name", "since"}));
  v1::GetCollectionRequest get;
  get.set_collection_id(std::string(kMaxCollectionIdBytes + 1, 'c'));
  EXPECT_EQ(Fields(reads_.GetCollection("team", get).status()),
            std::vector<std::string>{"collection_id"});
}

TEST_F(ReadLimitsTest, ACollectionNoOnlineAgentServesSaysWhyItWaits) {
  auto req = Request(1);
  req.mutable_spec()->mutable_constraints()->add_socs("NoSuchSoc");
  v1::GetCollectionRequest get;
  get.set_collection_id(Submit(req));
  EXPECT_EQ(reads_.GetCollection("team", get)->collection().waiting_reason(), "no agent is online");
  Register("h1");  // Ascend910B2 devices
  EXPECT_EQ(reads_.GetCollection("team", get)->collection().waiting_reason(),
            "no online agent serves SoC NoSuchSoc");
  v1::GetCollectionRequest servable;
  servable.set_collection_id(Submit(Request(1)));
  EXPECT_EQ(reads_.GetCollection("team", servable)->collection().waiting_reason(), "");
}

}  // namespace
}  // namespace npuperf::server
