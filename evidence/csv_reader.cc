#include "evidence/csv_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include "absl/strings/str_join.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

constexpr int kEof = -1;
constexpr size_t kBlockBytes = 1 << 18;

// Bytes that end an unquoted run: delimiter, line ends, quote.
struct StopTable {
  bool stop[256] = {};
  constexpr StopTable() {
    for (unsigned char c : {',', '\n', '\r', '"'}) stop[c] = true;
  }
};
constexpr StopTable kPlainStop;

// The first byte in [p, end) that ends an unquoted run (kPlainStop), or end.
// Eight bytes at a time first (SWAR: a word holds a stop byte exactly when
// the has-zero test of word ^ byte-pattern fires; a borrow can flag a byte
// above a true stop, never a word without one), then byte by byte within
// the word. A 200,000-row op_summary is 64 MB of mostly plain cells, and the
// byte loop alone was half of a summarize. Endian-neutral.
inline const char* FindPlainStop(const char* p, const char* end) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  auto has = [](uint64_t w, unsigned char c) {
    const uint64_t x = w ^ (kOnes * c);
    return (x - kOnes) & ~x & kHigh;
  };
  while (end - p >= 8) {
    uint64_t w;
    std::memcpy(&w, p, sizeof(w));
    if ((has(w, ',') | has(w, '\n') | has(w, '\r') | has(w, '"')) != 0) break;
    p += 8;
  }
  while (p < end && !kPlainStop.stop[static_cast<unsigned char>(*p)]) ++p;
  return p;
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

bool IsMissingCell(std::string_view cell) {
  return cell.empty() || cell == "N/A" || cell == "NA" || cell == "-";
}

absl::StatusOr<std::optional<double>> ParseNumberCell(std::string_view cell) {
  cell = Trim(cell);
  if (IsMissingCell(cell)) return std::optional<double>();
  // strtod needs a terminated buffer; cells are short.
  char buf[64];
  if (cell.size() >= sizeof(buf)) {
    return absl::InvalidArgumentError(internal::Cat("not a number: '", cell.substr(0, 32), "...'"));
  }
  for (char c : cell) {
    // Only plain decimal notation: rejects "nan", "inf", hex floats.
    bool ok = (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
    if (!ok) return absl::InvalidArgumentError(internal::Cat("not a number: '", cell, "'"));
  }
  cell.copy(buf, cell.size());
  buf[cell.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf, &end);
  if (end != buf + cell.size() || errno == ERANGE || !std::isfinite(v)) {
    return absl::InvalidArgumentError(internal::Cat("not a number: '", cell, "'"));
  }
  return std::optional<double>(v);
}

CsvReader::CsvReader(std::unique_ptr<std::istream> in, std::string name, size_t block_bytes)
    : in_(std::move(in)), block_(std::max<size_t>(block_bytes, 2)), name_(std::move(name)) {}

CsvReader::~CsvReader() = default;

bool CsvReader::Refill() {
  if (!in_->good()) return false;
  size_t keep = rec_start_ != nullptr ? static_cast<size_t>(end_ - rec_start_) : 0;
  if (keep > block_.size() / 2) {
    size_t offset = static_cast<size_t>(rec_start_ - block_.data());
    block_.resize(block_.size() * 2);
    rec_start_ = block_.data() + offset;
  }
  if (keep > 0) std::memmove(block_.data(), rec_start_, keep);
  if (rec_start_ != nullptr) rec_start_ = block_.data();
  pos_ = block_.data() + keep;
  in_->read(pos_, static_cast<std::streamsize>(block_.size() - keep));
  std::streamsize n = in_->gcount();
  end_ = pos_ + n;
  return n > 0;
}

absl::StatusOr<std::unique_ptr<CsvReader>> CsvReader::Open(const std::filesystem::path& path) {
  auto file = std::make_unique<std::ifstream>();
  file->open(path, std::ios::binary);
  if (!file->is_open()) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return absl::NotFoundError(internal::Cat(path.string(), ": no such file"));
    }
    return absl::PermissionDeniedError(internal::Cat(path.string(), ": cannot open"));
  }
  return FromStream(std::move(file), path.string());
}

absl::StatusOr<std::unique_ptr<CsvReader>> CsvReader::FromStream(std::unique_ptr<std::istream> in,
                                                                 std::string name) {
  return FromStreamForTest(std::move(in), std::move(name), kBlockBytes);
}

absl::StatusOr<std::unique_ptr<CsvReader>> CsvReader::FromStreamForTest(
    std::unique_ptr<std::istream> in, std::string name, size_t block_bytes) {
  std::unique_ptr<CsvReader> reader(new CsvReader(std::move(in), std::move(name), block_bytes));
  absl::Status s = reader->ReadHeader();
  if (!s.ok()) return s;
  return reader;
}

absl::Status CsvReader::LineError(std::string_view what) const {
  return absl::InvalidArgumentError(internal::Cat(name_, ":", line_, ": ", what));
}

absl::Status CsvReader::ErrorAt(int col, std::string_view what) const {
  std::string column = col >= 0 && static_cast<size_t>(col) < header_.size()
                           ? internal::Cat(" column ", col + 1, " (", header_[col], "):")
                           : std::string();
  return absl::InvalidArgumentError(
      internal::Cat(name_, ":", record_line_, ":", column, " ", what));
}

absl::Status CsvReader::ReadHeader() {
  // UTF-8 byte order mark.
  if (Peek() == 0xEF) {
    int bom[3] = {Get(), Get(), Get()};
    if (bom[1] != 0xBB || bom[2] != 0xBF) {
      return LineError("invalid byte at start of file (broken UTF-8 BOM)");
    }
  }
  absl::StatusOr<bool> got = ReadRecord();
  if (!got.ok()) return got.status();
  if (!*got) return absl::InvalidArgumentError(internal::Cat(name_, ": empty file (no header)"));
  if (spans_.size() > 1 && Cell(static_cast<int>(spans_.size() - 1)).empty()) {
    trailing_comma_ = true;
    spans_.pop_back();
  }
  for (size_t i = 0; i < spans_.size(); ++i) header_.emplace_back(Cell(static_cast<int>(i)));
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i].empty())
      return ErrorAt(-1, internal::Cat("empty header name in column ", i + 1));
    for (size_t j = 0; j < i; ++j) {
      if (header_[i] == header_[j]) {
        return ErrorAt(-1, internal::Cat("duplicate header '", header_[i], "' in columns ", j + 1,
                                         " and ", i + 1));
      }
    }
  }
  return absl::OkStatus();
}

int CsvReader::Find(std::string_view column) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == column) return static_cast<int>(i);
  }
  return -1;
}

int CsvReader::FindAny(std::initializer_list<std::string_view> aliases) const {
  for (std::string_view a : aliases) {
    int i = Find(a);
    if (i >= 0) return i;
  }
  return -1;
}

absl::StatusOr<bool> CsvReader::Next() {
  absl::StatusOr<bool> got = ReadRecord();
  if (!got.ok() || !*got) return got;
  size_t expected = header_.size() + (trailing_comma_ ? 1 : 0);
  size_t n = spans_.size();
  if (trailing_comma_ && n == expected) {
    std::string_view last = Cell(static_cast<int>(n - 1));
    if (!last.empty()) {
      return ErrorAt(-1, internal::Cat("cell after the last column: '", last, "'"));
    }
    spans_.pop_back();
  } else if (trailing_comma_ && n == header_.size()) {
    // A row without the trailing comma is accepted as well.
  } else if (n != header_.size()) {
    return ErrorAt(
        -1, internal::Cat("ragged row: ", n, " cells, header has ", header_.size(), " columns"));
  }
  return true;
}

absl::Status CsvReader::ReadQuoted(int& c) {
  // Opening quote consumed by the caller. The content is unescaped in place:
  // write offset `w` never passes the read position.
  size_t begin = static_cast<size_t>(pos_ - rec_start_);
  size_t w = begin;
  while (true) {
    char* p = pos_;
    while (p < end_ && *p != '"' && *p != '\n') ++p;
    size_t n = static_cast<size_t>(p - pos_);
    std::memmove(rec_start_ + w, pos_, n);
    w += n;
    pos_ = p;
    if (w - begin > kMaxCellBytes) return LineError("quoted cell longer than 1 MiB");
    c = Get();
    if (c == kEof) return LineError("unterminated quoted cell at end of file");
    if (c == '"') {
      c = Get();
      if (c != '"') break;
    }
    if (c == '\n') ++line_;
    rec_start_[w++] = static_cast<char>(c);
  }
  while (c == ' ' || c == '\t') c = Get();
  if (c != ',' && c != '\n' && c != '\r' && c != kEof) {
    return LineError(internal::Cat("unexpected character '", std::string(1, static_cast<char>(c)),
                                   "' after a closing quote"));
  }
  spans_.push_back({begin, w});
  return absl::OkStatus();
}

absl::Status CsvReader::ReadPlain(int& c) {
  // Leading blanks were skipped by the caller; `c` is the first byte and
  // Get() left pos_ just past it.
  size_t begin = static_cast<size_t>(pos_ - rec_start_) - (c == kEof ? 0 : 1);
  while (c != ',' && c != '\n' && c != '\r' && c != kEof) {
    if (c == '"') return LineError("quote inside an unquoted cell");
    pos_ += FindPlainStop(pos_, end_) - pos_;
    if (static_cast<size_t>(pos_ - rec_start_) - begin > kMaxCellBytes) {
      return LineError("cell longer than 1 MiB");
    }
    c = Get();
  }
  // The cell ends just before the delimiter (pos_ - 1), or at pos_ at EOF.
  size_t end = static_cast<size_t>(pos_ - rec_start_) - (c == kEof ? 0 : 1);
  while (end > begin && IsBlank(rec_start_[end - 1])) --end;
  spans_.push_back({begin, end});
  return absl::OkStatus();
}

bool CsvReader::ReadSimpleRecord() {
  char* const start = pos_;
  const char* const end = end_;
  const char* p = start;
  if (p == end || *p == '\n' || *p == '\r') return false;
  spans_.clear();
  while (true) {
    while (p < end && IsBlank(*p)) ++p;
    if (p == end) return false;
    const char* first = p;
    const char* last;
    if (*p == '"') {
      ++first;
      const char* q = static_cast<const char*>(std::memchr(first, '"', end - first));
      if (q == nullptr || std::memchr(first, '\n', q - first) != nullptr) return false;
      last = q;
      p = q + 1;
      // An escaped quote, a blank after the closing quote, or the block's end.
      if (p == end || (*p != ',' && *p != '\n' && *p != '\r')) return false;
    } else {
      p = FindPlainStop(p, end);
      if (p == end || *p == '"') return false;
      last = p;
      while (last > first && IsBlank(last[-1])) --last;
    }
    if (static_cast<size_t>(last - first) > kMaxCellBytes) return false;
    spans_.push_back({static_cast<size_t>(first - start), static_cast<size_t>(last - start)});
    if (*p == ',') {
      ++p;
      continue;
    }
    if (*p == '\r') {
      if (p + 1 == end) return false;  // the '\n' may be in the next block
      if (p[1] == '\n') ++p;
    }
    rec_start_ = start;
    pos_ = start + (p + 1 - start);
    record_line_ = line_++;
    return true;
  }
}

absl::StatusOr<bool> CsvReader::ReadRecord() {
  rec_start_ = nullptr;
  if (ReadSimpleRecord()) return true;
  rec_start_ = nullptr;
  spans_.clear();
  int c = Get();
  // Blank lines separate nothing; skip them.
  while (c == '\n' || c == '\r') {
    if (c == '\n') ++line_;
    c = Get();
  }
  if (c == kEof) return false;
  rec_start_ = pos_ - 1;
  record_line_ = line_;
  while (true) {
    while (c == ' ' || c == '\t') c = Get();
    absl::Status s = c == '"' ? ReadQuoted(c) : ReadPlain(c);
    if (!s.ok()) return s;
    if (c == ',') {
      c = Get();
      continue;
    }
    if (c == '\r' && Peek() == '\n') c = Get();
    if (c == '\n' || c == '\r') ++line_;
    return true;
  }
}

absl::StatusOr<std::optional<double>> CsvReader::Number(int col) const {
  if (col < 0) return std::optional<double>();
  absl::StatusOr<std::optional<double>> v = ParseNumberCell(Cell(col));
  if (!v.ok()) return ErrorAt(col, internal::ToStd(v.status().message()));
  return v;
}

absl::StatusOr<std::unique_ptr<CsvSliceReader>> CsvSliceReader::Open(
    std::vector<std::filesystem::path> parts) {
  std::unique_ptr<CsvSliceReader> r(new CsvSliceReader(std::move(parts)));
  absl::StatusOr<std::unique_ptr<CsvReader>> first = CsvReader::Open(r->parts_.front());
  if (!first.ok()) return first.status();
  r->current_ = std::move(*first);
  return r;
}

absl::StatusOr<bool> CsvSliceReader::Next() {
  while (true) {
    absl::StatusOr<bool> got = current_->Next();
    if (!got.ok() || *got) return got;
    if (index_ + 1 >= parts_.size()) return false;
    absl::StatusOr<std::unique_ptr<CsvReader>> next = CsvReader::Open(parts_[index_ + 1]);
    if (!next.ok()) return next.status();
    if ((*next)->header() != current_->header()) {
      return absl::InvalidArgumentError(internal::Cat(parts_[index_ + 1].string(),
                                                      ": header differs from the first slice ",
                                                      parts_.front().string()));
    }
    ++index_;
    current_ = std::move(*next);
  }
}

std::string CsvSliceReader::Where() const {
  return internal::Cat(current_->name(), ":", current_->line());
}

}  // namespace npuperf::evidence
