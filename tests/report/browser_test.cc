// The report pages in a real browser: headless Chromium (Debian's
// `chromium`) loads each page rendered from the stored capture (fixtures.h),
// once per page: --dump-dom gives the DOM it built (the charts, the rule
// lines, the marked cores, the verdict colours must be in it, and no
// script), --screenshot a PNG that must hold more than a few colours and
// the fills of the marked elements. Without chromium the test fails under CI
// (CI set) and skips elsewhere. NPUPERF_REPORT_SCREENSHOTS=DIR keeps the
// screenshots (docs/img/ comes from there).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "gtest/gtest.h"
#include "report/report.h"
#include "tests/fakes/temp_dir.h"
#include "tests/report/fixtures.h"
#include "tests/report/png_image.h"

namespace npuperf::report {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool ChromiumPresent() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

#define REQUIRE_CHROMIUM()                                                                  \
  do {                                                                                      \
    if (!ChromiumPresent()) {                                                               \
      const char* ci = std::getenv("CI");                                                   \
      if (ci != nullptr && *ci != '\0') {                                                   \
        FAIL() << "chromium is missing: apt-get install chromium (deploy/install-deps.sh)"; \
      }                                                                                     \
      GTEST_SKIP() << "chromium is missing: apt-get install chromium";                      \
    }                                                                                       \
  } while (0)

struct Loaded {
  std::string dom;
  testing::Image shot;
  std::string log;
};

// One chromium launch: the page's DOM and its screenshot.
Loaded Load(const fs::path& dir, const std::string& name, const std::string& html) {
  const fs::path page = dir / (name + ".html"), png = dir / (name + ".png");
  std::ofstream(page, std::ios::binary) << html;
  const std::string cmd =
      "timeout 90 chromium --headless --no-sandbox --disable-gpu "
      "--hide-scrollbars --no-first-run --user-data-dir='" +
      (dir / ("profile-" + name)).string() + "' --window-size=1280,1600 --screenshot='" +
      png.string() + "' --dump-dom 'file://" + page.string() + "' >'" +
      (dir / (name + ".dom")).string() + "' 2>'" + (dir / (name + ".log")).string() + "'";
  Loaded out;
  const int rc = std::system(cmd.c_str());
  out.dom = ReadAll(dir / (name + ".dom"));
  out.log = ReadAll(dir / (name + ".log"));
  EXPECT_EQ(rc, 0) << cmd << "\n" << out.log;
  out.shot = testing::DecodePng(ReadAll(png));
  if (const char* keep = std::getenv("NPUPERF_REPORT_SCREENSHOTS"); keep != nullptr && *keep) {
    fs::copy_file(png, fs::path(keep) / (name + ".png"), fs::copy_options::overwrite_existing);
  }
  return out;
}

// Pixels within 6 per channel of `rgb`.
size_t PixelsNear(const testing::Image& img, uint32_t rgb) {
  size_t n = 0;
  for (uint32_t p : img.pixels) {
    bool near = true;
    for (int shift : {16, 8, 0}) {
      near = near && std::abs(static_cast<int>((p >> shift) & 0xFF) -
                              static_cast<int>((rgb >> shift) & 0xFF)) <= 6;
    }
    n += near ? 1 : 0;
  }
  return n;
}

void ExpectPicture(const Loaded& l, const std::vector<uint32_t>& fills, const char* which) {
  ASSERT_TRUE(l.shot.error.empty()) << which << ": " << l.shot.error << "\n" << l.log;
  EXPECT_EQ(l.shot.width, 1280u) << which;
  const std::set<uint32_t> colours(l.shot.pixels.begin(), l.shot.pixels.end());
  EXPECT_GT(colours.size(), 16u) << which << ": the screenshot is blank";
  for (uint32_t fill : fills) {
    EXPECT_GT(PixelsNear(l.shot, fill), 20u) << which << std::hex << ": no pixels of #" << fill;
  }
}

void ExpectDom(const Loaded& l, const std::vector<std::string>& want, const char* which) {
  EXPECT_EQ(l.dom.find("<script"), std::string::npos) << which;
  for (const std::string& w : want) {
    EXPECT_NE(l.dom.find(w), std::string::npos) << which << ": no " << w << " in the DOM";
  }
}

TEST(BrowserTest, RoundPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l =
      Load(dir.path(), "round", RenderRoundPage(testing::CaptureRound(42, "c1", 87139.38)));
  ExpectDom(l,
            {"data-page=\"round\"", "data-chart=\"pipe-aiv\"", "data-rule=\"0.80\"",
             "data-rule=\"0.70\"", "data-chart=\"per-core\"", "class=\"core slowest\"",
             "class=\"core fastest\"", "data-chart=\"samples\"", "id=\"findings\""},
            "round");
  ExpectPicture(l, {0xd64545, 0x2f9e5b, 0xe0793a}, "round");  // slowest, fastest, bar over 80 %
}

TEST(BrowserTest, CollectionPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l = Load(dir.path(), "collection",
                        RenderCollectionPage(testing::DemoCollection(), testing::DemoHistory()));
  ExpectDom(l,
            {"data-page=\"collection\"", "data-chart=\"sparkline\"", "class=\"spark-this\"",
             "state-failed"},
            "collection");
  ExpectPicture(l, {0xf8c4c4, 0x5b8def}, "collection");  // the failed row, the sparklines
}

TEST(BrowserTest, ComparisonPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l = Load(dir.path(), "comparison", RenderComparisonPage(testing::DemoComparison()));
  ExpectDom(
      l,
      {"data-page=\"comparison\"", "class=\"verdict v-regressed\"", "class=\"verdict v-improved\"",
       "data-chart=\"forest\"", "class=\"ci\"", "id=\"finding-changes\""},
      "comparison");
  ExpectPicture(l, {0xf8c4c4, 0xd8f3dc, 0xffe8b3},
                "comparison");  // regressed, improved, insufficient
}

TEST(BrowserTest, HistoryPage) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  const Loaded l = Load(dir.path(), "history", RenderHistoryPage(testing::DemoHistoryPage()));
  ExpectDom(l,
            {"data-page=\"history\"", "data-chart=\"series\"", "class=\"baseline\"",
             "class=\"mark pinned\"", "class=\"mark v-regressed\""},
            "history");
  ExpectPicture(l, {0xd64545, 0x2f9e5b}, "history");  // regressed markers, the baseline line
}

// A page whose every string is a script: the browser builds no script
// element from it and shows the text.
TEST(BrowserTest, HostileTextStaysText) {
  REQUIRE_CHROMIUM();
  npuperf::testing::TempDir dir;
  v1::Round r = testing::CaptureRound(7, "<script>document.title='pwned'</script>", 80);
  r.set_operator_name("\"><img src=x onerror=alert(1)>");
  (*r.mutable_labels())["<b>"] = "</style><script>1</script>&amp;";
  r.mutable_evidence()->add_warnings("<svg onload=alert(1)>");
  const Loaded l = Load(dir.path(), "hostile", RenderRoundPage(r));
  EXPECT_EQ(l.dom.find("<script"), std::string::npos);
  EXPECT_EQ(l.dom.find("<img"), std::string::npos);
  EXPECT_EQ(l.dom.find("<svg onload"), std::string::npos);
  EXPECT_NE(l.dom.find("&lt;script&gt;document.title="), std::string::npos)
      << l.dom.substr(0, 2000);
  EXPECT_EQ(l.dom.find("pwned</title>"), std::string::npos);
}

}  // namespace
}  // namespace npuperf::report
