// client/terminal_text.h: display widths of UTF-8 text, the fit of the
// progress line to the terminal (never a cut multi-byte character, never an
// escape sequence from a hostile name), and where the width comes from.
#include "client/terminal_text.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace npuperf::client {
namespace {

TEST(DisplayWidthTest, CountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth(""), 0);
  EXPECT_EQ(DisplayWidth("add_kernel"), 10);
  EXPECT_EQ(DisplayWidth("r\u00e9sum\u00e9"), 6);  // 2-byte é
  EXPECT_EQ(DisplayWidth("\u7b97\u5b50"), 4);      // 算子: wide
  EXPECT_EQ(DisplayWidth("e\u0301"), 1);           // combining acute
  EXPECT_EQ(DisplayWidth("\U0001F680"), 2);        // 4-byte, wide
  EXPECT_EQ(DisplayWidth("\xff\xfe"), 2);          // invalid bytes: 1 each
  EXPECT_EQ(DisplayWidth("\xe7\xae"), 2);          // a truncated sequence
}

TEST(FitToWidthTest, ShortTextIsKept) {
  EXPECT_EQ(FitToWidth("add 1/2", 7), "add 1/2");
  EXPECT_EQ(FitToWidth("\u7b97\u5b50", 4), "\u7b97\u5b50");
  EXPECT_EQ(FitToWidth("abc", 0), "");
}

TEST(FitToWidthTest, LongTextIsCutWithAnEllipsisWithinTheWidth) {
  EXPECT_EQ(FitToWidth("abcdefgh", 5), "abcd\u2026");
  // A wide character that would cross the limit is left out whole.
  EXPECT_EQ(FitToWidth("ab\u7b97\u5b50cd", 4), "ab\u2026");
  EXPECT_EQ(FitToWidth("ab\u7b97\u5b50cd", 5), "ab\u7b97\u2026");
  for (int columns = 1; columns < 20; ++columns) {
    const std::string fit =
        FitToWidth("job 7 \u7b97\u5b50_r\u00e9sum\u00e9_\U0001F680 running", columns);
    EXPECT_LE(DisplayWidth(fit), columns) << fit;
    // Every byte sequence is whole: the width of the fit equals the sum of
    // its characters, none of them counted as an invalid byte.
    EXPECT_EQ(fit.find('?'), std::string::npos) << columns << ": " << fit;
  }
}

TEST(FitToWidthTest, ControlCharactersAndInvalidBytesBecomeQuestionMarks) {
  EXPECT_EQ(FitToWidth("a\033[2Jb\r\n\x7f", 20), "a?[2Jb???");
  EXPECT_EQ(FitToWidth("a\xc2\x9b"
                       "b",
                       20),
            "a?b");  // C1 CSI
  EXPECT_EQ(FitToWidth("a\xff\xe7\xae", 20), "a???");
  EXPECT_EQ(FitToWidth("\xed\xa0\x80", 20), "???");  // a surrogate
}

TEST(TerminalColumnsTest, FallsBackToColumnsThenEighty) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // not a terminal
  EXPECT_EQ(TerminalColumns(fds[1], "132"), 132);
  EXPECT_EQ(TerminalColumns(fds[1], nullptr), kDefaultColumns);
  EXPECT_EQ(TerminalColumns(fds[1], "wide"), kDefaultColumns);
  EXPECT_EQ(TerminalColumns(fds[1], "0"), kDefaultColumns);
  EXPECT_EQ(TerminalColumns(fds[1], "99999"), kDefaultColumns);
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace npuperf::client
