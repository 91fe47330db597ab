// The pure decisions of the web pages (server/ui/ui_rules.h).
#include "server/ui/ui_rules.h"

#include "gtest/gtest.h"

namespace npuperf::server::ui {
namespace {

TEST(UiRulesTest, LocalUiPathsOnlyAreRedirectTargets) {
  for (const char* ok : {"/ui", "/ui/", "/ui/rounds/4", "/ui?x=1", "/ui/history?op=a&case=b"}) {
    EXPECT_TRUE(IsLocalUiPath(ok)) << ok;
  }
  for (const char* bad :
       {"", "/", "//evil", "/\\evil", "/ui/\\evil", "/ui//evil", "https://evil/ui", "/uievil",
        "/metrics", "ui/", "/ui/\r\nX: y", "/ui/ x", "/ui/\x7f"}) {
    EXPECT_FALSE(IsLocalUiPath(bad)) << bad;
  }
}

TEST(UiRulesTest, SameOriginComparesTheHostOfOriginElseReferer) {
  EXPECT_TRUE(SameOrigin("http://h:8", "", "h:8"));
  EXPECT_TRUE(SameOrigin("https://H:8", "", "h:8")) << "hosts compare case aside";
  EXPECT_TRUE(SameOrigin("", "http://h:8/ui/login?next=x", "h:8"));
  EXPECT_FALSE(SameOrigin("http://evil:8", "http://h:8/ui/", "h:8")) << "Origin wins";
  EXPECT_FALSE(SameOrigin("null", "", "h:8"));
  EXPECT_FALSE(SameOrigin("", "", "h:8"));
  EXPECT_FALSE(SameOrigin("http://h:8", "", ""));
  EXPECT_FALSE(SameOrigin("http://h:9", "", "h:8"));
  EXPECT_FALSE(SameOrigin("http://h:8.evil", "", "h:8"));
  EXPECT_FALSE(SameOrigin("", "/ui/", "h:8")) << "a referer without a host";
}

TEST(UiRulesTest, SessionCookieIsParsedAndBuiltWithItsFlags) {
  const std::string id(64, 'a');
  EXPECT_EQ(SessionIdFromCookies("x=1; npuperf_session=" + id + "; y=2"), id);
  EXPECT_EQ(SessionIdFromCookies("npuperf_session=" + std::string(64, 'A')), "") << "lowercase hex";
  EXPECT_EQ(SessionIdFromCookies("npuperf_session=abc"), "");
  EXPECT_EQ(SessionIdFromCookies("other=" + id), "");
  EXPECT_EQ(SessionCookieValue("abc", 60, false),
            "npuperf_session=abc; HttpOnly; SameSite=Strict; Path=/ui; Max-Age=60");
  EXPECT_EQ(ClearedCookieValue(true),
            "npuperf_session=; HttpOnly; SameSite=Strict; Path=/ui; Max-Age=0; Secure");
}

TEST(UiRulesTest, RoundIdsArePositiveDecimals) {
  EXPECT_EQ(ParseRoundId("a", "12").value_or(0), 12);
  for (const char* bad : {"", "0", "-1", "1x", "+1", "99999999999999999999"}) {
    auto got = ParseRoundId("a", bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().message(), "a: not a round id");
  }
}

}  // namespace
}  // namespace npuperf::server::ui
