#include "common/input_rules.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuperf {
namespace {

bool EnvChar(char c, bool first) {
  return (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
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

size_t Utf8SequenceLength(std::string_view s, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return n;
}

bool IsValidUtf8(absl::string_view s) {
  const std::string_view text(s.data(), s.size());
  uint32_t code_point = 0;
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(text, i, &code_point);
    if (n == 0) return false;
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
