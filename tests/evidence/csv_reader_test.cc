#include "evidence/csv_reader.h"

#include <sstream>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<CsvReader> Reader(std::string bytes) {
  auto r = CsvReader::FromStream(std::make_unique<std::istringstream>(std::move(bytes)), "t.csv");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : nullptr;
}

absl::Status OpenError(std::string bytes) {
  auto r = CsvReader::FromStream(std::make_unique<std::istringstream>(std::move(bytes)), "t.csv");
  return r.ok() ? absl::OkStatus() : r.status();
}

absl::Status FirstRowError(std::string bytes) {
  auto r = Reader(std::move(bytes));
  if (!r) return absl::InternalError("open failed");
  absl::StatusOr<bool> got = r->Next();
  return got.ok() ? absl::OkStatus() : got.status();
}

TEST(CsvReaderTest, BomCrlfTabsAndQuotedCommas) {
  auto r = Reader(
      "\xEF\xBB\xBFOp Name,Task Start Time(us),Input Shapes\r\n"
      "k1,1780676244313289.000\t,\"1,32;1,32\"\r\n"
      "\r\n"
      "k2,12.5\t,\"say \"\"hi\"\"\"\r\n");
  ASSERT_NE(r, nullptr);
  EXPECT_THAT(r->header(), ElementsAre("Op Name", "Task Start Time(us)", "Input Shapes"));
  ASSERT_TRUE(*r->Next());
  EXPECT_EQ(r->line(), 2u);
  EXPECT_EQ(r->Cell(0), "k1");
  EXPECT_EQ(r->Cell(1), "1780676244313289.000");
  EXPECT_EQ(r->Cell(2), "1,32;1,32");
  EXPECT_DOUBLE_EQ(**r->Number(1), 1780676244313289.0);
  ASSERT_TRUE(*r->Next());
  EXPECT_EQ(r->line(), 4u);
  EXPECT_EQ(r->Cell(2), "say \"hi\"");
  EXPECT_FALSE(*r->Next());
}

TEST(CsvReaderTest, QuotedNewlineAdvancesLineCount) {
  auto r = Reader("a,b\n\"x\ny\",1\nz,oops\n");
  ASSERT_TRUE(*r->Next());
  EXPECT_EQ(r->Cell(0), "x\ny");
  ASSERT_TRUE(*r->Next());
  EXPECT_EQ(r->line(), 4u);
  absl::StatusOr<std::optional<double>> bad = r->Number(1);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("t.csv:4: column 2 (b): not a number: 'oops'"));
}

TEST(CsvReaderTest, MissingMarkersAreNullopt) {
  auto r = Reader("a,b,c,d,e\nN/A,NA,-,,3\n");
  ASSERT_TRUE(*r->Next());
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(r->Number(i)->has_value()) << i;
  EXPECT_DOUBLE_EQ(**r->Number(4), 3.0);
  EXPECT_FALSE(r->Number(-1)->has_value());
}

TEST(CsvReaderTest, RejectsNanInfAndGarbageNumbers) {
  for (const char* cell : {"nan", "inf", "-inf", "0x10", "1.2.3", "12us", "1e999"}) {
    EXPECT_FALSE(ParseNumberCell(cell).ok()) << cell;
  }
  EXPECT_DOUBLE_EQ(**ParseNumberCell(" -1.5e2\t"), -150.0);
}

TEST(CsvReaderTest, TrailingCommaFilesDropTheEmptyColumn) {
  auto r = Reader("block_id,sub_block_id,aiv_time(us),\n0,vector0,5.18,\n1,vector1,6.14\n");
  EXPECT_THAT(r->header(), ElementsAre("block_id", "sub_block_id", "aiv_time(us)"));
  ASSERT_TRUE(*r->Next());
  EXPECT_DOUBLE_EQ(**r->Number(2), 5.18);
  ASSERT_TRUE(*r->Next());
  EXPECT_DOUBLE_EQ(**r->Number(2), 6.14);
}

TEST(CsvReaderTest, DuplicateAndEmptyHeadersAreErrors) {
  absl::Status dup = OpenError("a,b,a\n1,2,3\n");
  EXPECT_THAT(dup.message(), HasSubstr("duplicate header 'a' in columns 1 and 3"));
  EXPECT_THAT(OpenError("a,,b\n").message(), HasSubstr("empty header name in column 2"));
  EXPECT_THAT(OpenError("").message(), HasSubstr("t.csv: empty file"));
}

TEST(CsvReaderTest, RaggedRowsNameTheLine) {
  EXPECT_THAT(FirstRowError("a,b\n1,2,3\n").message(),
              HasSubstr("t.csv:2: ragged row: 3 cells, header has 2 columns"));
  EXPECT_THAT(FirstRowError("a,b\n1\n").message(), HasSubstr("ragged row: 1 cells"));
}

TEST(CsvReaderTest, StrayQuotesAreErrors) {
  EXPECT_THAT(FirstRowError("a,b\nx\"y,2\n").message(), HasSubstr("t.csv:2: quote inside"));
  EXPECT_THAT(FirstRowError("a,b\n\"x\"y,2\n").message(), HasSubstr("after a closing quote"));
  EXPECT_THAT(FirstRowError("a,b\n\"xy,2\n").message(), HasSubstr("unterminated quoted cell"));
}

TEST(CsvReaderTest, FindAnyResolvesAliases) {
  auto r = Reader("Op Name,Block Dim,Mix Block Dim\n");
  EXPECT_EQ(r->FindAny({"Block Num", "Block Dim"}), 1);
  EXPECT_EQ(r->FindAny({"Mix Block Num", "Mix Block Dim"}), 2);
  EXPECT_EQ(r->Find("Block Num"), -1);
}

TEST(CsvReaderTest, OpenMissingFileIsNotFound) {
  auto r = CsvReader::Open("/nonexistent/x.csv");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/x.csv"));
}

// Records straddle the 256 KiB read blocks: quoted cells with "" escapes and
// newlines, trailing tabs, and one record larger than the block (growth).
// Every byte-level case again with a 3-byte read block: each record crosses
// several block boundaries and forces the block to grow.
TEST(CsvReaderTest, TinyBlocksGiveTheSameCells) {
  std::string bytes =
      "\xEF\xBB\xBFOp Name,Start,Shapes,\r\n"
      "k1,1780676244313289.000\t,\"1,32;\"\"q\"\"\n2\",\r\n\r\n"
      " k2 ,12.5\t,,\n"
      "k3,7,\"x\"";
  for (size_t block : {2, 3, 5, 64, 1 << 18}) {
    auto r =
        CsvReader::FromStreamForTest(std::make_unique<std::istringstream>(bytes), "t.csv", block);
    ASSERT_TRUE(r.ok()) << block << " " << r.status();
    EXPECT_THAT((*r)->header(), ElementsAre("Op Name", "Start", "Shapes")) << block;
    ASSERT_TRUE(*(*r)->Next()) << block;
    EXPECT_EQ((*r)->Cell(0), "k1");
    EXPECT_EQ((*r)->Cell(1), "1780676244313289.000");
    EXPECT_EQ((*r)->Cell(2), "1,32;\"q\"\n2") << block;
    ASSERT_TRUE(*(*r)->Next()) << block;
    EXPECT_EQ((*r)->line(), 5u) << block;
    EXPECT_EQ((*r)->Cell(0), "k2");
    EXPECT_EQ((*r)->Cell(2), "");
    ASSERT_TRUE(*(*r)->Next()) << block;
    EXPECT_EQ((*r)->Cell(2), "x") << block;
    EXPECT_FALSE(*(*r)->Next()) << block;
  }
}

TEST(CsvReaderTest, BlockBoundariesAndHugeRecords) {
  std::string bytes = "id,text,value\r\n";
  std::vector<std::string> texts;
  for (int i = 0; i < 30000; ++i) {
    std::string text = "t" + std::to_string(i) + (i % 7 == 0 ? "\"q\",\nx" : "");
    if (i == 12345) text = std::string(600000, 'z');
    texts.push_back(text);
    std::string quoted;
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    bytes += std::to_string(i) + ",\"" + quoted + "\"," + std::to_string(i) + ".5\t\r\n";
  }
  auto r = Reader(bytes);
  ASSERT_NE(r, nullptr);
  for (int i = 0; i < 30000; ++i) {
    absl::StatusOr<bool> more = r->Next();
    ASSERT_TRUE(more.ok() && *more) << i << " " << more.status();
    ASSERT_EQ(r->Cell(0), std::to_string(i));
    ASSERT_EQ(r->Cell(1), texts[i]) << i;
    ASSERT_DOUBLE_EQ(**r->Number(2), i + 0.5);
  }
  EXPECT_FALSE(*r->Next());
  // A cell over 1 MiB is refused.
  EXPECT_THAT(
      FirstRowError("a\n" + std::string(CsvReader::kMaxCellBytes + 10, 'y') + "\n").message(),
      HasSubstr("cell longer than 1 MiB"));
}

// Everything a reader gives for `bytes` read in blocks of `block` bytes: the
// header, each record's line and cells, and the error that stopped it.
std::string Transcript(const std::string& bytes, size_t block) {
  auto r =
      CsvReader::FromStreamForTest(std::make_unique<std::istringstream>(bytes), "t.csv", block);
  if (!r.ok()) return "open: " + std::string(r.status().message());
  std::string out = absl::StrJoin((*r)->header(), "|") + "\n";
  while (true) {
    absl::StatusOr<bool> more = (*r)->Next();
    if (!more.ok()) return out + "error: " + std::string(more.status().message());
    if (!*more) return out + "eof";
    out += std::to_string((*r)->line()) + ":";
    for (size_t c = 0; c < (*r)->header().size(); ++c)
      out += "[" + std::string((*r)->Cell(c)) + "]";
    out += "\n";
  }
}

// The whole-record fast path (256 KiB blocks) and the byte-by-byte path (2-byte
// blocks, where almost no record fits) read every input alike: cells, lines
// and errors. Seeded cells mix plain, blank-padded, empty, quoted, escaped,
// multi-line and broken quoting, with CRLF, lone CR and blank lines.
TEST(CsvReaderTest, FastAndByteByBytePathsAgreeOnRandomInput) {
  const std::vector<std::string> cells = {"k1",         " 2.5\t",
                                          "",           "\"1,32;1,4\"",
                                          "\"a\"\"b\"", "\"x\ny\"",
                                          " \"q\" ",    "\"c\r\"",
                                          "N/A",        "bad\"q",
                                          "\"open",     "\"z\"w",
                                          "\t",         "1780676244313289.000\t"};
  const std::vector<std::string> ends = {"\n", "\r\n", "\r", "\n\n", "\r\n\r\n"};
  uint64_t state = 18;
  auto next = [&state](size_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state >> 33) % n);
  };
  for (int input = 0; input < 400; ++input) {
    size_t columns = 1 + next(4);
    std::string bytes;
    for (size_t c = 0; c < columns; ++c)
      bytes += (c ? "," : "") + std::string("h") + std::to_string(c);
    bytes += ends[next(2)];
    size_t rows = next(6);
    for (size_t row = 0; row < rows; ++row) {
      // Mostly well-formed cells; now and then a broken one or a ragged row.
      size_t n = next(10) == 0 ? columns + 1 : columns;
      for (size_t c = 0; c < n; ++c) {
        size_t pick = next(10) < 8 ? next(9) : next(cells.size());
        bytes += (c ? "," : "") + cells[pick];
      }
      if (row + 1 < rows || next(2) == 0) bytes += ends[next(ends.size())];
    }
    ASSERT_EQ(Transcript(bytes, 1 << 18), Transcript(bytes, 2))
        << "input " << input << ": " << bytes;
  }
}

TEST(CsvReaderTest, LastCellAtEofWithoutNewline) {
  auto r = Reader("a,b,c\n1, 2 ,\n4,5,6");
  ASSERT_TRUE(*r->Next());
  EXPECT_EQ(r->Cell(1), "2");
  EXPECT_EQ(r->Cell(2), "");
  ASSERT_TRUE(*r->Next());
  EXPECT_EQ(r->Cell(2), "6");
  EXPECT_FALSE(*r->Next());
}

TEST(CsvSliceReaderTest, ReadsSlicesInOrderAndChecksHeaders) {
  testing::TempDir dir;
  testing::WriteFile(dir.path() / "s0.csv", "a,b\n1,2\n");
  testing::WriteFile(dir.path() / "s1.csv", "a,b\n3,4\n");
  testing::WriteFile(dir.path() / "s2.csv", "a,c\n5,6\n");
  auto r = CsvSliceReader::Open({dir.path() / "s0.csv", dir.path() / "s1.csv"});
  ASSERT_TRUE(r.ok());
  std::vector<double> seen;
  while (*(*r)->Next()) seen.push_back(**(*r)->Number(1));
  EXPECT_THAT(seen, ElementsAre(2, 4));
  auto bad = CsvSliceReader::Open({dir.path() / "s0.csv", dir.path() / "s2.csv"});
  ASSERT_TRUE(bad.ok());
  ASSERT_TRUE(*(*bad)->Next());
  absl::StatusOr<bool> next = (*bad)->Next();
  ASSERT_FALSE(next.ok());
  EXPECT_THAT(next.status().message(), HasSubstr("s2.csv: header differs"));
}

}  // namespace
}  // namespace npuperf::evidence
