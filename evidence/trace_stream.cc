#include "evidence/trace_stream.h"

#include <cerrno>
#include <cstring>

#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

int HexValue(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsScalarChar(int c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' ||
         c == 'E';
}

// A JSON number (RFC 8259 grammar) or literal.
bool ValidScalar(std::string_view s) {
  if (s == "true" || s == "false" || s == "null") return true;
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  const size_t int_start = i;
  const size_t n = digits();
  if (n == 0 || (n > 1 && s[int_start] == '0')) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

}  // namespace

const std::string* TraceEvent::Arg(std::string_view key) const {
  for (size_t i = 0; i < arg_count; ++i) {
    if (args[i].first == key) return &args[i].second;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<TraceStream>> TraceStream::Open(const std::filesystem::path& path,
                                                               size_t buffer_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int e = errno;
    const std::string msg = Cat("cannot open trace ", path.string(), ": ", std::strerror(e));
    return e == ENOENT ? absl::NotFoundError(msg) : absl::FailedPreconditionError(msg);
  }
  return std::unique_ptr<TraceStream>(
      new TraceStream(f, path, buffer_bytes < 16 ? size_t{16} : buffer_bytes));
}

TraceStream::TraceStream(std::FILE* f, std::filesystem::path path, size_t buffer_bytes)
    : file_(f), path_(std::move(path)), buf_(buffer_bytes) {}

TraceStream::~TraceStream() { std::fclose(file_); }

bool TraceStream::Refill() {
  if (eof_) return false;
  consumed_ += len_;
  pos_ = 0;
  len_ = std::fread(buf_.data(), 1, buf_.size(), file_);
  if (len_ == 0) eof_ = true;
  return len_ > 0;
}

int TraceStream::Peek() {
  if (pos_ == len_ && !Refill()) return -1;
  return static_cast<unsigned char>(buf_[pos_]);
}

int TraceStream::Take() {
  const int c = Peek();
  if (c >= 0) ++pos_;
  return c;
}

void TraceStream::SkipWs() {
  for (;;) {
    const int c = Peek();
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
    ++pos_;
  }
}

absl::Status TraceStream::Error(std::string_view what) const {
  return absl::InvalidArgumentError(
      Cat("malformed trace ", path_.string(), " at byte ", consumed_ + pos_, ": ", what));
}

absl::Status TraceStream::Expect(char c) {
  SkipWs();
  const int got = Peek();
  if (got != c) {
    return Error(got < 0 ? Cat("expected '", std::string(1, c), "', got end of file")
                         : Cat("expected '", std::string(1, c), "', got '",
                               std::string(1, static_cast<char>(got)), "'"));
  }
  ++pos_;
  return absl::OkStatus();
}

// After the opening quote: the decoded string replaces *out (`out` null skips
// the string).
absl::Status TraceStream::ReadString(std::string* out) {
  if (out != nullptr) out->clear();
  size_t length = 0;
  for (;;) {
    if (pos_ == len_ && !Refill()) return Error("unterminated string");
    size_t i = pos_;
    const char* b = buf_.data();
    while (i < len_ && b[i] != '"' && b[i] != '\\' && static_cast<unsigned char>(b[i]) >= 0x20) {
      ++i;
    }
    length += i - pos_;
    if (length > kMaxStringBytes) return Error("string longer than 16 MiB");
    if (out != nullptr) out->append(b + pos_, i - pos_);
    pos_ = i;
    if (i == len_) continue;
    const char c = b[pos_++];
    if (c == '"') return absl::OkStatus();
    if (c != '\\') return Error("control character in string");
    absl::Status s = ReadEscape(out);
    if (!s.ok()) return s;
  }
}

absl::Status TraceStream::ReadEscape(std::string* out) {
  const int c = Peek();
  if (c < 0) return Error("unterminated escape");
  ++pos_;
  char plain = 0;
  switch (c) {
    case '"': plain = '"'; break;
    case '\\': plain = '\\'; break;
    case '/': plain = '/'; break;
    case 'b': plain = '\b'; break;
    case 'f': plain = '\f'; break;
    case 'n': plain = '\n'; break;
    case 'r': plain = '\r'; break;
    case 't': plain = '\t'; break;
    case 'u': break;
    default: return Error("invalid escape");
  }
  if (c != 'u') {
    if (out != nullptr) out->push_back(plain);
    return absl::OkStatus();
  }
  auto hex4 = [this](uint32_t* v) {
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = HexValue(Peek());
      if (h < 0) return false;
      ++pos_;
      *v = *v * 16 + static_cast<uint32_t>(h);
    }
    return true;
  };
  uint32_t cp = 0;
  if (!hex4(&cp)) return Error("invalid \\u escape");
  if (cp >= 0xD800 && cp <= 0xDBFF && Peek() == '\\') {
    ++pos_;
    uint32_t lo = 0;
    if (Peek() != 'u') return Error("unpaired surrogate");
    ++pos_;
    if (!hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) return Error("unpaired surrogate");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  if (out != nullptr) AppendUtf8(out, cp);
  return absl::OkStatus();
}

// A string (decoded), number or literal at the current position; objects and
// arrays are skipped and leave `out` empty with NotFound returned.
absl::Status TraceStream::ReadScalar(std::string* out) {
  out->clear();
  SkipWs();
  const int c = Peek();
  if (c == '"') {
    ++pos_;
    return ReadString(out);
  }
  if (c == '{' || c == '[') {
    absl::Status s = SkipValue(1);
    return s.ok() ? absl::NotFoundError("not a scalar") : s;
  }
  for (int d = Peek(); d >= 0 && IsScalarChar(d); d = Peek()) {
    out->push_back(static_cast<char>(d));
    ++pos_;
    if (out->size() > 512) return Error("number too long");
  }
  if (!ValidScalar(*out)) return Error(Cat("invalid value '", *out, "'"));
  return absl::OkStatus();
}

absl::Status TraceStream::SkipValue(int depth) {
  if (depth > kMaxDepth) return Error("nesting deeper than 256");
  SkipWs();
  const int c = Peek();
  if (c == '{' || c == '[') {
    ++pos_;
    return SkipContainer(depth, c == '{' ? '}' : ']');
  }
  if (c == '"') {
    ++pos_;
    return ReadString(nullptr);
  }
  std::string scalar;
  return ReadScalar(&scalar);
}

absl::Status TraceStream::SkipContainer(int depth, char close) {
  SkipWs();
  if (Peek() == close) {
    ++pos_;
    return absl::OkStatus();
  }
  for (;;) {
    if (close == '}') {
      absl::Status s = Expect('"');
      if (s.ok()) s = ReadString(nullptr);
      if (s.ok()) s = Expect(':');
      if (!s.ok()) return s;
    }
    absl::Status s = SkipValue(depth + 1);
    if (!s.ok()) return s;
    SkipWs();
    const int c = Take();
    if (c == close) return absl::OkStatus();
    if (c != ',') return Error(Cat("expected ',' or '", std::string(1, close), "'"));
  }
}

absl::Status TraceStream::ReadArgs() {
  SkipWs();
  if (Peek() != '{') return SkipValue(2);
  ++pos_;
  SkipWs();
  if (Peek() == '}') {
    ++pos_;
    return absl::OkStatus();
  }
  for (;;) {
    absl::Status s = Expect('"');
    if (s.ok()) s = ReadString(&key_);
    if (s.ok()) s = Expect(':');
    if (!s.ok()) return s;
    if (event_.arg_count < TraceEvent::kMaxArgs) {
      if (event_.args.size() <= event_.arg_count) event_.args.emplace_back();
      auto& [k, v] = event_.args[event_.arg_count];
      s = ReadScalar(&v);
      if (s.ok()) {
        k = key_;
        ++event_.arg_count;
      }
    } else {
      s = SkipValue(3);
    }
    if (!s.ok() && !absl::IsNotFound(s)) return s;
    SkipWs();
    const int c = Take();
    if (c == '}') return absl::OkStatus();
    if (c != ',') return Error("expected ',' or '}' in args");
  }
}

absl::Status TraceStream::ReadEventField(const std::string& key) {
  struct Field {
    const char* key;
    std::string TraceEvent::*value;
    bool TraceEvent::*has;
  };
  static constexpr Field kFields[] = {
      {"name", &TraceEvent::name, &TraceEvent::has_name},
      {"ph", &TraceEvent::ph, &TraceEvent::has_ph},
      {"ts", &TraceEvent::ts, &TraceEvent::has_ts},
      {"dur", &TraceEvent::dur, &TraceEvent::has_dur},
      {"pid", &TraceEvent::pid, &TraceEvent::has_pid},
      {"tid", &TraceEvent::tid, &TraceEvent::has_tid},
  };
  if (key == "args") return ReadArgs();
  for (const Field& f : kFields) {
    if (key != f.key) continue;
    absl::Status s = ReadScalar(&(event_.*f.value));
    event_.*f.has = s.ok();
    return absl::IsNotFound(s) ? absl::OkStatus() : s;
  }
  return SkipValue(2);
}

// After the event's '{'.
absl::Status TraceStream::ReadEvent() {
  event_.has_name = event_.has_ph = event_.has_ts = event_.has_dur = false;
  event_.has_pid = event_.has_tid = false;
  event_.arg_count = 0;
  SkipWs();
  if (Peek() == '}') {
    ++pos_;
  } else {
    for (;;) {
      absl::Status s = Expect('"');
      if (s.ok()) s = ReadString(&key_);
      if (s.ok()) s = Expect(':');
      if (s.ok()) s = ReadEventField(std::string(key_));
      if (!s.ok()) return s;
      SkipWs();
      const int c = Take();
      if (c == '}') break;
      if (c != ',') return Error("expected ',' or '}' in an event");
    }
  }
  ++stats_.events;
  return (*on_event_)(event_);
}

// After the array's '['.
absl::Status TraceStream::ReadEventArray(bool top_level) {
  SkipWs();
  if (Peek() == ']') {
    ++pos_;
    return absl::OkStatus();
  }
  for (uint64_t index = 0;; ++index) {
    SkipWs();
    if (Peek() < 0 && top_level && index > 0) {
      stats_.unterminated_array = true;  // "[{...},{...}," or "[{...}"
      return absl::OkStatus();
    }
    absl::Status s;
    if (Peek() == '{') {
      event_.offset = consumed_ + pos_;
      event_.index = index;
      ++pos_;
      s = ReadEvent();
    } else {
      ++stats_.non_object_entries;
      s = SkipValue(2);
    }
    if (!s.ok()) return s;
    SkipWs();
    const int c = Peek();
    if (c < 0 && top_level) {
      stats_.unterminated_array = true;
      return absl::OkStatus();
    }
    Take();
    if (c == ']') return absl::OkStatus();
    if (c != ',') return Error("expected ',' or ']' between events");
  }
}

absl::Status TraceStream::ReadTop() {
  SkipWs();
  const int c = Peek();
  if (c == '[') {
    ++pos_;
    return ReadEventArray(/*top_level=*/true);
  }
  if (c != '{') return Error("a trace is a JSON array or an object with traceEvents");
  ++pos_;
  bool found = false;
  SkipWs();
  if (Peek() == '}') return Error("no traceEvents array");
  for (;;) {
    absl::Status s = Expect('"');
    if (s.ok()) s = ReadString(&key_);
    if (s.ok()) s = Expect(':');
    if (!s.ok()) return s;
    SkipWs();
    if (key_ == "traceEvents" && Peek() == '[' && !found) {
      ++pos_;
      found = true;
      s = ReadEventArray(/*top_level=*/false);
    } else {
      s = SkipValue(1);
    }
    if (!s.ok()) return s;
    SkipWs();
    const int d = Take();
    if (d == '}') break;
    if (d != ',') return Error("expected ',' or '}' at the top level");
  }
  return found ? absl::OkStatus() : Error("no traceEvents array");
}

absl::StatusOr<TraceReadStats> TraceStream::ForEach(
    const std::function<absl::Status(const TraceEvent&)>& on_event) {
  on_event_ = &on_event;
  absl::Status s = ReadTop();
  if (!s.ok()) return s;
  if (!stats_.unterminated_array) {
    SkipWs();
    if (Peek() >= 0) return Error("data after the trace");
  }
  stats_.bytes = consumed_ + pos_;
  return stats_;
}

}  // namespace npuperf::evidence
