// Text for a terminal line: its display width in columns (UTF-8, East Asian
// wide characters count 2, combining marks 0) and a fit to a width that
// never cuts a multi-byte character, so the progress line redrawn with
// "\r\033[K" never wraps into rows it cannot clear.
#pragma once

#include <string>
#include <string_view>

namespace npuperf::client {

// The terminal width assumed when neither the terminal nor COLUMNS says.
inline constexpr int kDefaultColumns = 80;

// Columns `text` takes: invalid UTF-8 bytes and control characters count 1
// each (FitToWidth shows them as '?').
int DisplayWidth(std::string_view text);

// `text` with control characters (C0, DEL, C1: escape sequences from a
// hostile op name) and invalid UTF-8 bytes replaced by '?', cut to at most
// `columns` display columns, ending in "…" when cut. columns < 1: "".
std::string FitToWidth(std::string_view text, int columns);

// The width of the terminal on fd (TIOCGWINSZ), else `columns_env` (the
// COLUMNS variable; null or not a number in 1..10000: ignored), else
// kDefaultColumns.
int TerminalColumns(int fd, const char* columns_env);

}  // namespace npuperf::client
