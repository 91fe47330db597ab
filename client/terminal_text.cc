#include "client/terminal_text.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "absl/strings/numbers.h"
#include "common/input_rules.h"

namespace npuperf::client {
namespace {

struct Range {
  char32_t first, last;
};

// Combining marks and zero-width characters (a subset of Unicode 15's
// Mn/Me/Cf that covers the scripts op names use).
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
    {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x20D0, 0x20FF}, {0x302A, 0x302D},
    {0x3099, 0x309A}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF}};

// East Asian Wide and Fullwidth (Unicode 15 EastAsianWidth.txt, W and F).
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x26AA, 0x26AB},
    {0x2705, 0x2705},   {0x270A, 0x270B},   {0x274C, 0x274C},   {0x2753, 0x2755},
    {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
    {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
    {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},
    {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004},
    {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F},
    {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD}};

template <size_t N>
bool In(const Range (&table)[N], char32_t c) {
  const Range* it = std::upper_bound(std::begin(table), std::end(table), c,
                                     [](char32_t v, const Range& r) { return v < r.first; });
  return it != std::begin(table) && c <= std::prev(it)->last;
}

// One character of text at `pos`: its bytes (1 for an invalid byte), its
// width, and whether it is shown as itself (not '?').
struct Glyph {
  size_t bytes = 1;
  int width = 1;
  bool shown = false;
};

Glyph Next(std::string_view text, size_t pos) {
  const auto b = static_cast<unsigned char>(text[pos]);
  if (b < 0x80) return {1, 1, b >= 0x20 && b != 0x7F};
  uint32_t c = 0;
  const size_t n = Utf8SequenceLength(text, pos, &c);
  if (n == 0) return {};
  if (c < 0xA0) return {n, 1, false};  // C1 controls
  return {n, In(kZeroWidth, c) ? 0 : In(kWide, c) ? 2 : 1, true};
}

}  // namespace

int DisplayWidth(std::string_view text) {
  int width = 0;
  for (size_t pos = 0; pos < text.size();) {
    const Glyph g = Next(text, pos);
    width += g.width;
    pos += g.bytes;
  }
  return width;
}

std::string FitToWidth(std::string_view text, int columns) {
  if (columns < 1) return "";
  const bool cut = DisplayWidth(text) > columns;
  const int budget = cut ? columns - 1 : columns;  // one column for "…"
  std::string out;
  int width = 0;
  for (size_t pos = 0; pos < text.size();) {
    const Glyph g = Next(text, pos);
    if (width + g.width > budget) break;
    width += g.width;
    if (g.shown) {
      out.append(text.substr(pos, g.bytes));
    } else {
      out.push_back('?');
    }
    pos += g.bytes;
  }
  if (cut) out += "\u2026";
  return out;
}

int TerminalColumns(int fd, const char* columns_env) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  int columns = 0;
  if (columns_env != nullptr && absl::SimpleAtoi(columns_env, &columns) && columns >= 1 &&
      columns <= 10000) {
    return columns;
  }
  return kDefaultColumns;
}

}  // namespace npuperf::client
