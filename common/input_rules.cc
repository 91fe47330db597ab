#include "common/input_rules.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuperf {
namespace {

bool EnvChar(char c, bool first) {
  return (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

// Length of the UTF-8 sequence starting with lead byte c (0: not a lead).
int SequenceLength(unsigned char c) {
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c >= 0xE0 && c <= 0xEF) return 3;
  if (c >= 0xF0 && c <= 0xF4) return 4;
  return 0;
}

}  // namespace

std::string EnvNameProblem(absl::string_view name, size_t max_bytes) {
  if (name.empty() || name.size() > max_bytes) {
    return absl::StrCat("must be 1..", max_bytes, " characters");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (!EnvChar(name[i], i == 0)) return "must be a plain variable name [A-Z_][A-Z0-9_]*";
  }
  for (const char* reserved : kReservedEnvNames) {
    if (name == reserved) return "is reserved (set by npuperf or the system)";
  }
  for (const char* prefix : kReservedEnvPrefixes) {
    if (absl::StartsWith(name, prefix)) {
      return absl::StrCat("is reserved: no ", prefix, "* variable may be set");
    }
  }
  return "";
}

std::string BundlePathProblem(absl::string_view path, size_t max_bytes) {
  if (path.empty() || path.size() > max_bytes) {
    return absl::StrCat("must be 1..", max_bytes, " bytes");
  }
  if (path.front() == '/') return "must be relative to the operator directory";
  for (char c : path) {
    if (c == '\\') return "must use '/' separators, not backslashes";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return "must not contain NUL or control characters";
    }
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return "must stay inside the bundle (no '..')";
    if (part.empty() || part == ".") {
      return "must be normalised (no empty or '.' components, no trailing '/')";
    }
  }
  return "";
}

bool IsPrintableLine(absl::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool IsCleanText(absl::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
  }
  return true;
}

bool IsValidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = SequenceLength(c);
    if (n == 0 || i + n > s.size()) return false;
    for (int k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    if (n >= 3) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      if (c == 0xE0 && c1 < 0xA0) return false;   // overlong
      if (c == 0xED && c1 >= 0xA0) return false;  // surrogate
      if (c == 0xF0 && c1 < 0x90) return false;   // overlong
      if (c == 0xF4 && c1 >= 0x90) return false;  // past U+10FFFF
    }
    i += n;
  }
  return true;
}

std::string NoteProblem(absl::string_view note, size_t max_bytes) {
  if (note.size() > max_bytes) return absl::StrCat("at most ", max_bytes, " bytes");
  if (!IsValidUtf8(note)) return "must be valid UTF-8";
  for (char c : note) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7F) {
      return "no control characters other than tab and newline";
    }
  }
  return "";
}

std::string CleanReportedText(absl::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut);
  }
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7f) c = '?';
  }
  return out;
}

}  // namespace npuperf
