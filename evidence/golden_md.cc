// ParseGoldenMarkdown (declared in golden.h): the three GOLDEN_PERF_REPORT.md
// shapes of reference §3 / §8.4.
#include <algorithm>
#include <cctype>
#include <regex>

#include "evidence/csv_reader.h"
#include "evidence/golden.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

std::string Strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string line(text.substr(start, nl - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    start = nl + 1;
  }
  return out;
}

bool IsHeader(const std::string& line) {
  std::string lower = line;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower.find("case") != std::string::npos && line.find("E2E") != std::string::npos;
}

// "| p0 | [1, 32] | fp16 | 10.000000us |" -> case, or nullopt if unparsable.
std::optional<GoldenMdCase> TableRow(const std::string& line) {
  std::vector<std::string> cells;
  size_t pos = 1;  // after the leading '|'
  while (pos < line.size()) {
    size_t bar = line.find('|', pos);
    if (bar == std::string::npos) bar = line.size();
    cells.push_back(Strip(std::string_view(line).substr(pos, bar - pos)));
    pos = bar + 1;
  }
  if (cells.size() < 4) return std::nullopt;
  std::string value = cells[3];
  for (size_t us; (us = value.find("us")) != std::string::npos;) value.erase(us, 2);
  absl::StatusOr<std::optional<double>> v = ParseNumberCell(Strip(value));
  if (!v.ok() || !v->has_value() || cells[0].empty()) return std::nullopt;
  return GoldenMdCase{cells[0], cells[1], cells[2], **v};
}

std::vector<GoldenMdCase> Tables(const std::vector<std::string>& lines) {
  std::vector<GoldenMdCase> out;
  bool in_table = false;
  for (const std::string& raw : lines) {
    std::string line = Strip(raw);
    if (line.empty() || line[0] != '|') {
      in_table = false;
      continue;
    }
    if (!in_table) {
      in_table = IsHeader(line);
      continue;
    }
    if (line.find("---") != std::string::npos) continue;
    if (std::optional<GoldenMdCase> c = TableRow(line)) out.push_back(std::move(*c));
  }
  return out;
}

std::optional<GoldenMdCase> Fallback(const std::vector<std::string>& lines) {
  static const std::regex kShape(R"(^\s*-\s*\*\*Input Shape\*\*:\s*(.*)$)");
  static const std::regex kDtype(R"(^\s*-\s*\*\*dtype\*\*:\s*(.*)$)");
  static const std::regex kTotal(R"(([0-9]+(?:\.[0-9]+)?)\s*us)");
  GoldenMdCase c{"P0", "?", "?", 0};
  bool found = false;
  for (const std::string& line : lines) {
    std::smatch m;
    if (std::regex_match(line, m, kShape)) c.shape = Strip(m[1].str());
    if (std::regex_match(line, m, kDtype)) c.dtype = Strip(m[1].str());
    if (!found && line.find("Total kernel duration") != std::string::npos &&
        std::regex_search(line, m, kTotal)) {
      absl::StatusOr<std::optional<double>> v = ParseNumberCell(m[1].str());
      if (v.ok() && v->has_value()) {
        c.e2e_us = **v;
        found = true;
      }
    }
  }
  if (!found) return std::nullopt;
  return c;
}

}  // namespace

absl::StatusOr<std::vector<GoldenMdCase>> ParseGoldenMarkdown(std::string_view text) {
  std::vector<std::string> lines = Lines(text);
  std::vector<GoldenMdCase> cases = Tables(lines);
  if (!cases.empty()) return cases;
  if (std::optional<GoldenMdCase> c = Fallback(lines)) return std::vector<GoldenMdCase>{*c};
  return absl::NotFoundError("no golden E2E data found in GOLDEN_PERF_REPORT.md");
}

}  // namespace npuperf::evidence
