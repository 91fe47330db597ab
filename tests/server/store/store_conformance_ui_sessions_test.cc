// Store conformance: browser sessions of the web pages (issue 19, server/ui/): a session is found
// by the sha256 of its id while it lives, expires at its expiry, and is gone after logout.
#include <string>

#include "common/sha256.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

TEST_P(StoreConformanceTest, UiSessionIsFoundByItsHashUntilItExpires) {
  const std::string id = Sha256Hex("cookie-1");
  ASSERT_TRUE(store_->InsertUiSession(id, "alpha", 1000, 5000).ok());
  ASSERT_OK_AND_ASSIGN(team, store_->LookupUiSession(id, 1000));
  EXPECT_EQ(team, "alpha");
  ASSERT_OK_AND_ASSIGN(later, store_->LookupUiSession(id, 4999));
  EXPECT_EQ(later, "alpha");
  EXPECT_TRUE(absl::IsNotFound(store_->LookupUiSession(id, 5000).status()));
  // The expired lookup deleted it: no sweep finds it any more.
  ASSERT_OK_AND_ASSIGN(swept, store_->DeleteExpiredUiSessions(10'000));
  EXPECT_EQ(swept, 0);
}

TEST_P(StoreConformanceTest, UiSessionUnknownHashIsNotFound) {
  ASSERT_TRUE(store_->InsertUiSession(Sha256Hex("a"), "alpha", 1000, 5000).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->LookupUiSession(Sha256Hex("b"), 1000).status()));
}

TEST_P(StoreConformanceTest, UiSessionLogoutDeletesOnlyThatSession) {
  const std::string one = Sha256Hex("one"), two = Sha256Hex("two");
  ASSERT_TRUE(store_->InsertUiSession(one, "alpha", 1000, 9000).ok());
  ASSERT_TRUE(store_->InsertUiSession(two, "alpha", 1000, 9000).ok());
  ASSERT_TRUE(store_->DeleteUiSession(one).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->LookupUiSession(one, 2000).status()));
  EXPECT_TRUE(store_->LookupUiSession(two, 2000).ok());
  // Deleting again (a second logout) is fine.
  EXPECT_TRUE(store_->DeleteUiSession(one).ok());
}

TEST_P(StoreConformanceTest, UiSessionSweepDeletesExactlyTheExpired) {
  ASSERT_TRUE(store_->InsertUiSession(Sha256Hex("old"), "alpha", 1000, 2000).ok());
  ASSERT_TRUE(store_->InsertUiSession(Sha256Hex("edge"), "beta", 1000, 3000).ok());
  ASSERT_TRUE(store_->InsertUiSession(Sha256Hex("new"), "beta", 1000, 9000).ok());
  ASSERT_OK_AND_ASSIGN(swept, store_->DeleteExpiredUiSessions(3000));
  EXPECT_EQ(swept, 2);
  EXPECT_TRUE(store_->LookupUiSession(Sha256Hex("new"), 3000).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->LookupUiSession(Sha256Hex("edge"), 2500).status()));
}

TEST_P(StoreConformanceTest, UiSessionIdHashIsUnique) {
  ASSERT_TRUE(store_->InsertUiSession(Sha256Hex("x"), "alpha", 1000, 9000).ok());
  EXPECT_FALSE(store_->InsertUiSession(Sha256Hex("x"), "beta", 1000, 9000).ok());
  ASSERT_OK_AND_ASSIGN(team, store_->LookupUiSession(Sha256Hex("x"), 2000));
  EXPECT_EQ(team, "alpha");
}

}  // namespace
}  // namespace npuperf::server
