// HTML building blocks of the report pages: escaping, numbers, a table
// builder and the page frame with its inline stylesheet. Every string that
// reaches the page goes through Escape (text and attribute values alike):
// evidence fields, operator and kernel names, labels and notes are tenant
// input. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace npuperf::report {

// `s` with & < > " ' replaced by character references: safe as element text
// and inside a double- or single-quoted attribute value. Bytes that are not
// valid UTF-8 and control characters (except tab and newline) become U+FFFD,
// so a page never carries bytes a browser could read differently.
std::string Escape(std::string_view s);

// `v` with `decimals` digits after the point; "-" for a non-finite value.
std::string Num(double v, int decimals = 2);

// A CSS class name built only from [a-z0-9_-] of `s` (lower-cased; other
// bytes become '_'): for class names derived from data (verdicts, states).
std::string ClassName(std::string_view s);

// One table cell: its text (escaped when rendered) and an optional class.
struct Cell {
  Cell(std::string t) : text(std::move(t)) {}  // NOLINT: cells are written as strings
  Cell(const char* t) : text(t) {}             // NOLINT
  Cell(std::string t, std::string c) : text(std::move(t)), css(std::move(c)) {}
  std::string text;
  std::string css;   // class of the <td>; "" for none
  bool raw = false;  // text is already HTML (a chart built by svg.h)
};

// <table class="css"> with a header row and body rows.
std::string Table(std::string_view css, const std::vector<std::string>& header,
                  const std::vector<std::vector<Cell>>& rows);

// A cell holding markup already built (an inline SVG).
Cell RawCell(std::string html, std::string css = "");

// A <section> with an <h2> heading (escaped) and a body of markup.
std::string Section(std::string_view id, std::string_view heading, std::string_view body);

// <p class="css">text</p>, escaped.
std::string Para(std::string_view text, std::string_view css = "");

// The whole document: doctype, charset, a Content-Security-Policy that
// allows no script and no network (default-src 'none'; inline styles and
// data: images only), the stylesheet, <h1>title</h1>, the subtitle and body.
// data-page names the page kind for tests and tools.
std::string Page(std::string_view kind, std::string_view title, std::string_view subtitle,
                 std::string_view body);

}  // namespace npuperf::report
