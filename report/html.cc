#include "report/html.h"

#include <cmath>
#include <cstdio>

namespace npuperf::report {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
  return overlong || surrogate || cp > 0x10FFFF ? 0 : n;
}

constexpr char kStyle[] = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2733;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #d5dbe3}
.sub{color:#5a6776;margin:0 0 12px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d5dbe3;padding:3px 8px;text-align:left;vertical-align:middle}
th{background:#eef2f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.good,.v-improved,.s-good{background:#d8f3dc}.warning,.v-insufficient,.s-warning{background:#ffe8b3}
.critical,.v-regressed,.s-critical,.v-errored{background:#f8c4c4}.hint,.s-hint{background:#dbe9fb}
.v-not_comparable{background:#e6dcf5}.v-stable{background:#eceff3}.muted{color:#6b7785}
.note{color:#5a6776;font-size:13px}.flag{display:inline-block;margin:1px 3px;padding:0 5px;border-radius:3px;background:#eef2f6}
svg{display:block;margin:6px 0}svg text{font:11px system-ui,sans-serif;fill:#1d2733}
.bar{fill:#5b8def}.bar.over{fill:#e0793a}.bar.first{fill:#2f6fd6}.bar.second{fill:#9bbcf2}.rule{stroke:#c0392b;stroke-width:1.5;stroke-dasharray:4 3}
.rule.rule-max{stroke:#e69500}.axis{stroke:#8795a6;stroke-width:1}.core{fill:#9bb7e0}
.core.slowest{fill:#d64545}.core.fastest{fill:#2f9e5b}.avg{stroke:#1d2733;stroke-dasharray:2 2}
.half{stroke:#7b4fc9;stroke-width:1.5}.half-avg{stroke:#7b4fc9;stroke-dasharray:5 3}
.ci{stroke:#1d2733;stroke-width:2}.point{fill:#1d2733}.one{stroke:#8795a6;stroke-dasharray:3 3}
.series{fill:none;stroke:#5b8def;stroke-width:1.5}.baseline{stroke:#2f9e5b;stroke-width:1.5;stroke-dasharray:6 3}
.mark.v-improved,.point.v-improved{fill:#2f9e5b}.mark.v-regressed,.point.v-regressed{fill:#d64545}
.mark.v-stable,.point.v-stable{fill:#8795a6}.mark.v-insufficient,.point.v-insufficient{fill:#e69500}
.mark.v-not_comparable,.point.v-not_comparable{fill:#7b4fc9}.mark.v-errored,.point.v-errored{fill:#8b1e1e}
.mark.none{fill:#5b8def}.mark.pinned{fill:#fff;stroke:#2f9e5b;stroke-width:2}.sample{fill:#5b8def;opacity:.75}
.agg{stroke:#d64545;stroke-width:2}.spark{fill:none;stroke:#5b8def;stroke-width:1.2}.spark-this{fill:#d64545}
)css";

}  // namespace

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = Utf8Length(s, i);
      if (n == 0) {
        out += kReplacement;
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F) {
          out += kReplacement;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out;
}

std::string Num(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string ClassName(std::string_view s) {
  std::string out;
  for (char c : s) {
    const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    const bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '_' || l == '-';
    out += ok ? l : '_';
  }
  return out.empty() ? "none" : out;
}

Cell RawCell(std::string html, std::string css) {
  Cell c(std::move(html), std::move(css));
  c.raw = true;
  return c;
}

std::string Table(std::string_view css, const std::vector<std::string>& header,
                  const std::vector<std::vector<Cell>>& rows) {
  std::string out = "<table class=\"" + Escape(css) + "\"><thead><tr>";
  for (const std::string& h : header) out += "<th>" + Escape(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const Cell& c : row) {
      out += c.css.empty() ? "<td>" : "<td class=\"" + Escape(c.css) + "\">";
      out += c.raw ? c.text : Escape(c.text);
      out += "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>\n";
}

std::string Section(std::string_view id, std::string_view heading, std::string_view body) {
  std::string out = "<section id=\"" + Escape(id) + "\"><h2>" + Escape(heading) + "</h2>\n";
  out.append(body);
  return out + "</section>\n";
}

std::string Para(std::string_view text, std::string_view css) {
  if (css.empty()) return "<p>" + Escape(text) + "</p>\n";
  return "<p class=\"" + Escape(css) + "\">" + Escape(text) + "</p>\n";
}

std::string Page(std::string_view kind, std::string_view title, std::string_view subtitle,
                 std::string_view body) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:\">\n<title>";
  out += Escape(title);
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style></head>\n<body data-page=\"" + Escape(kind) + "\">\n<h1>" + Escape(title) +
         "</h1>\n";
  out += Para(subtitle, "sub");
  out.append(body);
  return out +
         "<footer class=\"note\">npuperf report; op_summary ratios route the next "
         "experiment and are not a Roofline proof.</footer>\n</body></html>\n";
}

}  // namespace npuperf::report
