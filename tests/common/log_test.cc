#include "common/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace npuperf {
namespace {

TEST(EscapeLogTextTest, PlainTextAndUtf8StayAsTheyAre) {
  EXPECT_EQ(EscapeLogText("job 12 attempt 1 (op/case) on device 3"),
            "job 12 attempt 1 (op/case) on device 3");
  EXPECT_EQ(EscapeLogText("说明.md ünïcode €"), "说明.md ünïcode €");
  EXPECT_EQ(EscapeLogText(""), "");
}

// Table: each input and the one line it must become.
TEST(EscapeLogTextTest, ControlCharactersCannotForgeLines) {
  const std::pair<std::string, std::string> cases[] = {
      {"a\nb", "a\\nb"},
      {"a\r\nZ INFO agent: forged", "a\\r\\nZ INFO agent: forged"},
      {"tab\there", "tab\\there"},
      {"back\\slash", "back\\\\slash"},
      {"\\n literal", "\\\\n literal"},
      {std::string("nul\0x", 5), "nul\\x00x"},
      {"\x1b[2J\x1b[31mred", "\\x1B[2J\\x1B[31mred"},
      {"bell\x07 del\x7f", "bell\\x07 del\\x7F"},
      {"\xC2\x9B"
       "31m",
       "\\u009B31m"},  // C1 CSI, UTF-8 encoded
      {"a\xE2\x80\xA8"
       "b\xE2\x80\xA9",
       "a\\u2028b\\u2029"},                        // line/paragraph separators
      {"bad \xFF\xFE end", "bad \\xFF\\xFE end"},  // not UTF-8
      {"cut \xE8\xAF", "cut \\xE8\\xAF"},          // truncated sequence
      {"over \xC0\xAF", "over \\xC0\\xAF"},        // overlong '/'
      {"surrogate \xED\xA0\x80", "surrogate \\xED\\xA0\\x80"},
  };
  for (const auto& [in, want] : cases) {
    const std::string got = EscapeLogText(in);
    EXPECT_EQ(got, want) << "input: " << want;
    EXPECT_EQ(got.find('\n'), std::string::npos);
    EXPECT_EQ(got.find('\r'), std::string::npos);
  }
}

// Log writes one line per call even when the component and the message hold
// newlines (stderr is redirected to a file for the test).
TEST(LogTest, OneCallIsOneLine) {
  char path[] = "/tmp/npuperf_log_test_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const int saved = ::dup(STDERR_FILENO);
  ASSERT_EQ(::dup2(fd, STDERR_FILENO), STDERR_FILENO);
  LogInfo("agent\nfake",
          "job 1 failed: stderr tail: boom\n2026-01-01T00:00:00.000Z INFO agent: ok");
  LogError("server", "second");
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  ::unlink(path);
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_NE(first.find(" INFO agent\\nfake: job 1 failed: stderr tail: boom\\n2026-01-01T"),
            std::string::npos)
      << first;
  EXPECT_NE(text.find(" ERROR server: second\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace npuperf
