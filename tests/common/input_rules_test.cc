#include "common/input_rules.h"

#include "gtest/gtest.h"

namespace npuperf {
namespace {

TEST(InputRulesTest, CaseEnvAcceptsAPlainUnreservedName) {
  EXPECT_EQ(EnvNameProblem("OP_CASE_ID", kMaxCaseEnvBytes), "");
  EXPECT_EQ(EnvNameProblem("_X1", kMaxCaseEnvBytes), "");
}

TEST(InputRulesTest, CaseEnvRefusesEveryReservedPrefixAndName) {
  for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "ASCEND_RT_VISIBLE_DEVICES", "PATH",
                           "PYTHONPATH", "PYTHONHASHSEED", "PYPTO_PERF_SEED", "NPUPERF_TOKEN",
                           "MSPROF_SIM_SOC_MAP", "TILE_FWK_DEVICE_ID"}) {
    EXPECT_NE(EnvNameProblem(name, kMaxCaseEnvBytes).find("reserved"), std::string::npos) << name;
  }
}

TEST(InputRulesTest, CaseEnvRefusesNamesThatAreNotPlain) {
  for (const char* name : {"", "1ABC", "lower", "A-B", "A=B", "A B", "A\nB"}) {
    EXPECT_NE(EnvNameProblem(name, kMaxCaseEnvBytes), "") << name;
  }
  EXPECT_NE(EnvNameProblem(std::string(kMaxCaseEnvBytes + 1, 'A'), kMaxCaseEnvBytes), "");
  EXPECT_EQ(EnvNameProblem(std::string(kMaxCaseEnvBytes, 'A'), kMaxCaseEnvBytes), "");
}

TEST(InputRulesTest, BundlePathAcceptsANormalisedRelativePath) {
  EXPECT_EQ(BundlePathProblem("PERFORMANCE_CASES.json", kMaxBundlePathBytes), "");
  EXPECT_EQ(BundlePathProblem("cases/perf.v2.json", kMaxBundlePathBytes), "");
  EXPECT_EQ(BundlePathProblem("..hidden/x", kMaxBundlePathBytes), "");  // a name, not ".."
}

TEST(InputRulesTest, BundlePathRefusesEscapesAndUnnormalisedForms) {
  for (const char* path : {"/etc/shadow", "../x", "a/../../etc/passwd", "a/..", "./a", "a/./b",
                           "a//b", "a/", "", "a\\b", "..", "."}) {
    EXPECT_NE(BundlePathProblem(path, kMaxBundlePathBytes), "") << path;
  }
  EXPECT_NE(BundlePathProblem(std::string("a\0b", 3), kMaxBundlePathBytes), "");
  EXPECT_NE(BundlePathProblem("a\x1b[2Jb", kMaxBundlePathBytes), "");
  EXPECT_NE(BundlePathProblem(std::string(kMaxBundlePathBytes + 1, 'a'), kMaxBundlePathBytes), "");
}

TEST(InputRulesTest, ProblemsNeverQuoteTheValue) {
  const std::string secret = "../../proc/self/environ";
  EXPECT_EQ(BundlePathProblem(secret, kMaxBundlePathBytes).find("environ"), std::string::npos);
  EXPECT_EQ(EnvNameProblem("LD_PRELOAD", kMaxCaseEnvBytes).find("PRELOAD"), std::string::npos);
}

TEST(InputRulesTest, PrintableLineAndCleanTextDifferOnNewlines) {
  EXPECT_TRUE(IsPrintableLine("kernel_名前<T>"));
  EXPECT_FALSE(IsPrintableLine("a\nb"));
  EXPECT_FALSE(IsPrintableLine("a\x7f"));
  EXPECT_TRUE(IsCleanText("line one\nline two\tx\r"));
  EXPECT_FALSE(IsCleanText(std::string("a\0b", 3)));
  EXPECT_FALSE(IsCleanText("a\x1b[31m"));
}

TEST(InputRulesTest, ReportedTextIsCleanedAndCutOnACharacterBoundary) {
  EXPECT_EQ(CleanReportedText("a\x1b[31mb\nc\r", 100), "a?[31mb\nc?");
  const std::string text = "ab\xe5\x90\x8d";  // "ab" + a 3-byte character
  EXPECT_EQ(CleanReportedText(text, 4), "ab");
  EXPECT_EQ(CleanReportedText(text, 5), text);
  EXPECT_EQ(CleanReportedText(std::string(10, 'x'), 3), "xxx");
}

TEST(InputRulesTest, Utf8SequencesDecodeOnlyWhenWellFormed) {
  uint32_t cp = 0;
  EXPECT_EQ(Utf8SequenceLength("a\xC3\xA9", 1, &cp), 2u);
  EXPECT_EQ(cp, 0xE9u);
  EXPECT_EQ(Utf8SequenceLength("\xE2\x80\x94", 0, &cp), 3u);
  EXPECT_EQ(cp, 0x2014u);
  EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x98\x80", 0, &cp), 4u);
  EXPECT_EQ(cp, 0x1F600u);
  EXPECT_EQ(Utf8SequenceLength("a", 0, &cp), 0u);             // ASCII: not a multi-byte sequence
  EXPECT_EQ(Utf8SequenceLength("\x80", 0, &cp), 0u);          // stray continuation
  EXPECT_EQ(Utf8SequenceLength("\xE2\x80", 0, &cp), 0u);      // cut
  EXPECT_EQ(Utf8SequenceLength("\xC0\xAF", 0, &cp), 0u);      // overlong
  EXPECT_EQ(Utf8SequenceLength("\xED\xA0\x80", 0, &cp), 0u);  // surrogate
  EXPECT_EQ(Utf8SequenceLength("\xF4\x90\x80\x80", 0, &cp), 0u);  // past U+10FFFF
}

TEST(InputRulesTest, NotesAreBoundedCleanUtf8) {
  EXPECT_EQ(NoteProblem("", 1024), "");
  EXPECT_EQ(NoteProblem("flaky device 3\n\tsee #41 — ok", 1024), "");
  EXPECT_EQ(NoteProblem(std::string(1024, 'x'), 1024), "");
  EXPECT_EQ(NoteProblem(std::string(1025, 'x'), 1024), "at most 1024 bytes");
  EXPECT_EQ(NoteProblem("abcd", 3), "at most 3 bytes");
  EXPECT_EQ(NoteProblem("bad \xC3", 1024), "must be valid UTF-8");
  EXPECT_EQ(NoteProblem("overlong \xC0\xAF", 1024), "must be valid UTF-8");
  EXPECT_EQ(NoteProblem("overlong \xE0\x80\xAF", 1024), "must be valid UTF-8");
  EXPECT_EQ(NoteProblem("surrogate \xED\xA0\x80", 1024), "must be valid UTF-8");
  EXPECT_EQ(NoteProblem("past U+10FFFF \xF4\x90\x80\x80", 1024), "must be valid UTF-8");
  EXPECT_EQ(NoteProblem("bell \a", 1024), "no control characters other than tab and newline");
  EXPECT_EQ(NoteProblem("cr \r", 1024), "no control characters other than tab and newline");
  EXPECT_EQ(NoteProblem("del \x7F", 1024), "no control characters other than tab and newline");
}

}  // namespace
}  // namespace npuperf
