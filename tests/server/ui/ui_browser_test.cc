// The web pages in headless Chromium (Debian's `chromium`): the login form
// loaded live from the server over HTTP (with the server's CSP header), and
// the round page the server answers a logged-in session, loaded with its
// DOM checked and a non-blank screenshot. Chromium gets no cookie on its
// command line, so the session's page is fetched over the socket with the
// cookie and handed to it as a file. Skipped when chromium is missing
// (failed under CI).
#include <string>

#include "tests/fakes/temp_dir.h"
#include "tests/report/browser.h"
#include "tests/server/ui/ui_fixture.h"

namespace npuperf::server::ui {
namespace {

using report::testing::ExpectDom;
using report::testing::ExpectPicture;
using report::testing::Loaded;

namespace fs = std::filesystem;

// One chromium launch on a URL: its DOM and screenshot.
Loaded LoadUrl(const fs::path& dir, const std::string& name, const std::string& url) {
  const fs::path png = dir / (name + ".png");
  const std::string cmd =
      "timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--no-first-run --user-data-dir='" +
      (dir / ("profile-" + name)).string() + "' --window-size=1280,1600 --screenshot='" +
      png.string() + "' --dump-dom '" + url + "' >'" + (dir / (name + ".dom")).string() + "' 2>'" +
      (dir / (name + ".log")).string() + "'";
  Loaded out;
  const int rc = std::system(cmd.c_str());
  out.dom = report::testing::ReadAll(dir / (name + ".dom"));
  out.log = report::testing::ReadAll(dir / (name + ".log"));
  EXPECT_EQ(rc, 0) << cmd << "\n" << out.log;
  out.shot = report::testing::DecodePng(report::testing::ReadAll(png));
  return out;
}

class UiBrowserTest : public UiFixture {};

TEST_F(UiBrowserTest, LoginFormLoadsLiveFromTheServer) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  // Without a session the round page sends the browser to the login form.
  const Loaded l = LoadUrl(dir.path(), "login", Origin() + "/ui/rounds/1");
  ExpectDom(l,
            {"data-page=\"login\"", "action=\"/ui/login\"", "type=\"password\"", "name=\"token\"",
             "value=\"/ui/rounds/1\""},
            "login");
  ExpectPicture(l, {}, "login");
}

TEST_F(UiBrowserTest, RoundPageOfALoggedInSession) {
  REQUIRE_CHROMIUM();
  const int64_t round = Round();
  ASSERT_GT(round, 0);
  const std::string cookie = LogIn();
  ASSERT_FALSE(cookie.empty());
  auto page = Get("/ui/rounds/" + std::to_string(round), cookie);
  ASSERT_EQ(page.status, 200);
  npuperf::testing::TempDir dir;
  const Loaded l = report::testing::Load(dir.path(), "ui-round", page.body);
  ExpectDom(l,
            {"data-page=\"round\"", "class=\"ui\"", "href=\"/ui/collections/",
             "action=\"/ui/logout\"", "data-chart=\"samples\""},
            "ui-round");
  ExpectPicture(l, {}, "ui-round");
}

}  // namespace
}  // namespace npuperf::server::ui
