#include "evidence/csv_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <utility>

#include "evidence/str_util.h"
#include "absl/strings/str_join.h"

namespace npuperf::evidence {
namespace {

constexpr int kEof = std::char_traits<char>::eof();
constexpr size_t kStreamBufferBytes = 1 << 16;

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

void TrimInPlace(std::string& s) {
  size_t end = s.size();
  while (end > 0 && IsBlank(s[end - 1])) --end;
  size_t begin = 0;
  while (begin < end && IsBlank(s[begin])) ++begin;
  if (begin != 0 || end != s.size()) s = s.substr(begin, end - begin);
}

// An ifstream that owns a larger buffer than the default.
class BufferedFile : public std::ifstream {
 public:
  BufferedFile() : buffer_(kStreamBufferBytes) {
    rdbuf()->pubsetbuf(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  }

 private:
  std::vector<char> buffer_;
};

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

CsvReader::CsvReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), buf_(in_->rdbuf()), name_(std::move(name)) {}

CsvReader::~CsvReader() = default;

absl::StatusOr<std::unique_ptr<CsvReader>> CsvReader::Open(const std::filesystem::path& path) {
  auto file = std::make_unique<BufferedFile>();
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
  std::unique_ptr<CsvReader> reader(new CsvReader(std::move(in), std::move(name)));
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
  if (buf_->sgetc() == 0xEF) {
    char bom[3];
    if (buf_->sgetn(bom, 3) != 3 || static_cast<unsigned char>(bom[1]) != 0xBB ||
        static_cast<unsigned char>(bom[2]) != 0xBF) {
      return LineError("invalid byte at start of file (broken UTF-8 BOM)");
    }
  }
  absl::StatusOr<bool> got = ReadRecord();
  if (!got.ok()) return got.status();
  if (!*got) return absl::InvalidArgumentError(internal::Cat(name_, ": empty file (no header)"));
  if (n_cells_ > 1 && cells_[n_cells_ - 1].empty()) {
    trailing_comma_ = true;
    --n_cells_;
  }
  header_.assign(cells_.begin(), cells_.begin() + static_cast<std::ptrdiff_t>(n_cells_));
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i].empty()) return ErrorAt(-1, internal::Cat("empty header name in column ", i + 1));
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
  if (trailing_comma_ && n_cells_ == expected) {
    if (!cells_[n_cells_ - 1].empty()) {
      return ErrorAt(-1, internal::Cat("cell after the last column: '", cells_[n_cells_ - 1], "'"));
    }
    --n_cells_;
  } else if (trailing_comma_ && n_cells_ == header_.size()) {
    // A row without the trailing comma is accepted as well.
  } else if (n_cells_ != header_.size()) {
    return ErrorAt(-1, internal::Cat("ragged row: ", n_cells_, " cells, header has ",
                                    header_.size(), " columns"));
  }
  return true;
}

absl::Status CsvReader::ReadQuoted(std::string& cell, int& c) {
  // Opening quote consumed by the caller.
  while (true) {
    c = buf_->sbumpc();
    if (c == kEof) return LineError("unterminated quoted cell at end of file");
    if (c == '"') {
      c = buf_->sbumpc();
      if (c != '"') break;
    }
    if (c == '\n') ++line_;
    cell.push_back(static_cast<char>(c));
    if (cell.size() > kMaxCellBytes) return LineError("quoted cell longer than 1 MiB");
  }
  while (c == ' ' || c == '\t') c = buf_->sbumpc();
  if (c != ',' && c != '\n' && c != '\r' && c != kEof) {
    return LineError(internal::Cat("unexpected character '", std::string(1, static_cast<char>(c)),
                                  "' after a closing quote"));
  }
  return absl::OkStatus();
}

absl::Status CsvReader::ReadPlain(std::string& cell, int& c) {
  while (c != ',' && c != '\n' && c != '\r' && c != kEof) {
    if (c == '"') return LineError("quote inside an unquoted cell");
    cell.push_back(static_cast<char>(c));
    if (cell.size() > kMaxCellBytes) return LineError("cell longer than 1 MiB");
    c = buf_->sbumpc();
  }
  TrimInPlace(cell);
  return absl::OkStatus();
}

absl::StatusOr<bool> CsvReader::ReadRecord() {
  n_cells_ = 0;
  int c = buf_->sbumpc();
  // Blank lines separate nothing; skip them.
  while (c == '\n' || c == '\r') {
    if (c == '\n') ++line_;
    c = buf_->sbumpc();
  }
  if (c == kEof) return false;
  record_line_ = line_;
  while (true) {
    if (n_cells_ == cells_.size()) cells_.emplace_back();
    std::string& cell = cells_[n_cells_++];
    cell.clear();
    while (c == ' ' || c == '\t') c = buf_->sbumpc();
    absl::Status s;
    if (c == '"') {
      s = ReadQuoted(cell, c);
    } else {
      s = ReadPlain(cell, c);
    }
    if (!s.ok()) return s;
    if (c == ',') {
      c = buf_->sbumpc();
      continue;
    }
    if (c == '\r' && buf_->sgetc() == '\n') c = buf_->sbumpc();
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
      return absl::InvalidArgumentError(
          internal::Cat(parts_[index_ + 1].string(), ": header differs from the first slice ",
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
