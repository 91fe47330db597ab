#pragma once

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuperf::evidence {

// A strict, streaming reader of one CSV table as msprof writes it: RFC 4180
// quoting ("" inside quoted cells, commas and newlines in quotes), plus the
// msprof quirks: an optional UTF-8 BOM, CRLF or LF line ends, a literal TAB
// after time cells (cells are trimmed of spaces and tabs), blank lines, and
// msprof-op CSVs whose every line ends with a comma (an empty last header
// name is dropped together with the matching empty cell of every row).
//
// Memory is bounded: one record at a time, and a cell longer than
// kMaxCellBytes is an error. Duplicate or empty header names, ragged rows,
// stray quotes and non-numeric numbers are errors that name the file, the
// line and the column ("op_summary_1.csv:17: column 10 (Task Duration(us)):
// ...").
//
// Not thread-safe; one reader per thread. Columns are looked up by name only.
class CsvReader {
 public:
  static constexpr size_t kMaxCellBytes = 1 << 20;

  // Opens `path` and reads the header. NotFound when the file is missing,
  // InvalidArgument (naming file and line) for a malformed header.
  static absl::StatusOr<std::unique_ptr<CsvReader>> Open(const std::filesystem::path& path);
  // Same over an in-memory stream; `name` is used in error messages.
  static absl::StatusOr<std::unique_ptr<CsvReader>> FromStream(std::unique_ptr<std::istream> in,
                                                               std::string name);
  // FromStream with a tiny read block, so tests and fuzzers cross block
  // boundaries on small inputs. Default block: 256 KiB.
  static absl::StatusOr<std::unique_ptr<CsvReader>> FromStreamForTest(
      std::unique_ptr<std::istream> in, std::string name, size_t block_bytes);

  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  // Index of the column called `column`, or -1.
  int Find(std::string_view column) const;
  // Index of the first of `aliases` present, or -1 ("Block Num", "Block Dim").
  int FindAny(std::initializer_list<std::string_view> aliases) const;

  // Reads the next record. Returns false at end of file.
  absl::StatusOr<bool> Next();
  // Line (1-based) on which the current record starts.
  size_t line() const { return record_line_; }
  // Cell `col` of the current record. REQUIRES: 0 <= col < header().size().
  std::string_view Cell(int col) const {
    const Span& s = spans_[static_cast<size_t>(col)];
    return std::string_view(rec_start_ + s.begin, s.end - s.begin);
  }
  // Cell `col` as a number: nullopt for "", "N/A", "NA" and "-" (msprof's
  // missing values); an error naming file/line/column for anything that is not
  // a finite decimal number. col < 0 (absent column) gives nullopt.
  absl::StatusOr<std::optional<double>> Number(int col) const;
  // An InvalidArgument error located at the current record and column.
  absl::Status ErrorAt(int col, std::string_view what) const;

 private:
  CsvReader(std::unique_ptr<std::istream> in, std::string name, size_t block_bytes);
  absl::Status ReadHeader();
  // Reads one raw record into spans_; false at EOF.
  absl::StatusOr<bool> ReadRecord();
  // The common record, parsed without a refill check per byte: it lies wholly
  // in the block, and its quoted cells hold no quote, line end or trailing
  // blank. Fills spans_ and moves on exactly as the byte-by-byte path would;
  // false (nothing moved) for any other record, which ReadRecord then parses
  // byte by byte (and so reports its errors).
  bool ReadSimpleRecord();
  absl::Status ReadQuoted(int& c);
  absl::Status ReadPlain(int& c);
  absl::Status LineError(std::string_view what) const;
  // Byte source over in_ with our own block buffer. The parser scans the
  // block directly and cells stay in it (zero copy): Refill() keeps the bytes
  // of the record being read, moving them to the block's start (and growing
  // the block when a record is larger than half of it).
  bool Refill();
  int Peek() { return pos_ < end_ || Refill() ? static_cast<unsigned char>(*pos_) : -1; }
  int Get() { return pos_ < end_ || Refill() ? static_cast<unsigned char>(*pos_++) : -1; }

  std::unique_ptr<std::istream> in_;
  std::vector<char> block_;
  char* pos_ = nullptr;
  char* end_ = nullptr;
  // First byte of the current record in block_ (nullptr between records).
  // Quoted cells are unescaped in place, behind the read position.
  char* rec_start_ = nullptr;
  std::string name_;
  std::vector<std::string> header_;
  // Each cell of the current record as [begin, end) offsets from
  // rec_start_ (trimmed). Reused across records.
  struct Span {
    size_t begin = 0;
    size_t end = 0;
  };
  std::vector<Span> spans_;
  bool trailing_comma_ = false;
  size_t line_ = 1;
  size_t record_line_ = 0;
};

// Parses an msprof number cell (already trimmed). nullopt for the missing
// markers; InvalidArgument (message without location) when not a finite number.
absl::StatusOr<std::optional<double>> ParseNumberCell(std::string_view cell);

// True for "", "N/A", "NA" and "-".
bool IsMissingCell(std::string_view cell);

// Reads a table split into several files (msprof's `<name>_slice_<k>_<ts>.csv`)
// as one: every part must carry the same header. Errors name the part.
class CsvSliceReader {
 public:
  // REQUIRES: !parts.empty().
  static absl::StatusOr<std::unique_ptr<CsvSliceReader>> Open(
      std::vector<std::filesystem::path> parts);

  const std::vector<std::string>& header() const { return current_->header(); }
  int Find(std::string_view column) const { return current_->Find(column); }
  int FindAny(std::initializer_list<std::string_view> aliases) const {
    return current_->FindAny(aliases);
  }
  absl::StatusOr<bool> Next();
  std::string_view Cell(int col) const { return current_->Cell(col); }
  absl::StatusOr<std::optional<double>> Number(int col) const { return current_->Number(col); }
  absl::Status ErrorAt(int col, std::string_view what) const {
    return current_->ErrorAt(col, what);
  }
  size_t line() const { return current_->line(); }
  // "file:line" of the current record.
  std::string Where() const;
  const std::filesystem::path& current_path() const { return parts_[index_]; }

 private:
  explicit CsvSliceReader(std::vector<std::filesystem::path> parts) : parts_(std::move(parts)) {}

  std::vector<std::filesystem::path> parts_;
  size_t index_ = 0;
  std::unique_ptr<CsvReader> current_;
};

}  // namespace npuperf::evidence
