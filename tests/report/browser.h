// Headless Chromium for the report tests (Debian's `chromium`): one launch
// per page gives its DOM (--dump-dom) and a screenshot (--screenshot),
// decoded by png_image.h. REQUIRE_CHROMIUM fails a test under CI (CI set)
// when chromium is missing and skips it elsewhere (deploy/install-deps.sh
// installs it). NPUPERF_REPORT_SCREENSHOTS=DIR keeps each screenshot there.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/report/png_image.h"

namespace npuperf::report::testing {

namespace fs = std::filesystem;

inline std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline bool ChromiumPresent() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

#define REQUIRE_CHROMIUM()                                                                  \
  do {                                                                                      \
    if (!::npuperf::report::testing::ChromiumPresent()) {                                   \
      const char* ci = std::getenv("CI");                                                   \
      if (ci != nullptr && *ci != '\0') {                                                   \
        FAIL() << "chromium is missing: apt-get install chromium (deploy/install-deps.sh)"; \
      }                                                                                     \
      GTEST_SKIP() << "chromium is missing: apt-get install chromium";                      \
    }                                                                                       \
  } while (0)

struct Loaded {
  std::string dom;
  Image shot;
  std::string log;
};

// One chromium launch: the page's DOM and its screenshot.
inline Loaded Load(const fs::path& dir, const std::string& name, const std::string& html) {
  const fs::path page = dir / (name + ".html"), png = dir / (name + ".png");
  std::ofstream(page, std::ios::binary) << html;
  const std::string cmd =
      "timeout 90 chromium --headless --no-sandbox --disable-gpu "
      "--hide-scrollbars --no-first-run --user-data-dir='" +
      (dir / ("profile-" + name)).string() + "' --window-size=1280,3000 --screenshot='" +
      png.string() + "' --dump-dom 'file://" + page.string() + "' >'" +
      (dir / (name + ".dom")).string() + "' 2>'" + (dir / (name + ".log")).string() + "'";
  Loaded out;
  const int rc = std::system(cmd.c_str());
  out.dom = ReadAll(dir / (name + ".dom"));
  out.log = ReadAll(dir / (name + ".log"));
  EXPECT_EQ(rc, 0) << cmd << "\n" << out.log;
  out.shot = DecodePng(ReadAll(png));
  if (const char* keep = std::getenv("NPUPERF_REPORT_SCREENSHOTS"); keep != nullptr && *keep) {
    fs::copy_file(png, fs::path(keep) / (name + ".png"), fs::copy_options::overwrite_existing);
  }
  return out;
}

// Pixels within 6 per channel of `rgb`.
inline size_t PixelsNear(const Image& img, uint32_t rgb) {
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

inline void ExpectPicture(const Loaded& l, const std::vector<uint32_t>& fills, const char* which) {
  ASSERT_TRUE(l.shot.error.empty()) << which << ": " << l.shot.error << "\n" << l.log;
  EXPECT_EQ(l.shot.width, 1280u) << which;
  const std::set<uint32_t> colours(l.shot.pixels.begin(), l.shot.pixels.end());
  EXPECT_GT(colours.size(), 16u) << which << ": the screenshot is blank";
  for (uint32_t fill : fills) {
    EXPECT_GT(PixelsNear(l.shot, fill), 20u) << which << std::hex << ": no pixels of #" << fill;
  }
}

inline void ExpectDom(const Loaded& l, const std::vector<std::string>& want, const char* which) {
  EXPECT_EQ(l.dom.find("<script"), std::string::npos) << which;
  for (const std::string& w : want) {
    EXPECT_NE(l.dom.find(w), std::string::npos) << which << ": no " << w << " in the DOM";
  }
}

}  // namespace npuperf::report::testing
