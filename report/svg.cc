#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "report/html.h"

namespace npuperf::report {
namespace {

// "x" with one decimal: coordinates.
std::string C(double v) { return Num(v, 1); }

std::string Open(const std::string& chart, double w, double h) {
  return "<svg class=\"chart\" data-chart=\"" + Escape(chart) + "\" width=\"" + C(w) +
         "\" height=\"" + C(h) + "\" viewBox=\"0 0 " + C(w) + " " + C(h) +
         "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">";
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& css,
                 const std::string& attrs = "") {
  return "<line class=\"" + css + "\" x1=\"" + C(x1) + "\" y1=\"" + C(y1) + "\" x2=\"" + C(x2) +
         "\" y2=\"" + C(y2) + "\"" + attrs + "/>";
}

std::string Text(double x, double y, const std::string& text, const std::string& anchor = "start") {
  return "<text x=\"" + C(x) + "\" y=\"" + C(y) + "\" text-anchor=\"" + anchor + "\">" +
         Escape(text) + "</text>";
}

std::string Rect(double x, double y, double w, double h, const std::string& css,
                 const std::string& attrs) {
  return "<rect class=\"" + css + "\" x=\"" + C(x) + "\" y=\"" + C(y) + "\" width=\"" +
         C(std::max(w, 0.0)) + "\" height=\"" + C(std::max(h, 0.0)) + "\"" + attrs + "/>";
}

std::string Circle(double x, double y, double r, const std::string& css, const std::string& attrs,
                   const std::string& title = "") {
  std::string out = "<circle class=\"" + css + "\" cx=\"" + C(x) + "\" cy=\"" + C(y) + "\" r=\"" +
                    C(r) + "\"" + attrs;
  if (title.empty()) return out + "/>";
  return out + "><title>" + Escape(title) + "</title></circle>";
}

double Finite(double v) { return std::isfinite(v) ? v : 0; }

}  // namespace

std::string RatioBars(const std::string& name, const std::vector<Bar>& bars,
                      const std::vector<RuleLine>& rules) {
  const double left = 170, width = 360, row = 18, top = 18;
  const double h = top + row * static_cast<double>(bars.size()) + 8;
  double highest = rules.empty() ? 1 : 0;  // a bar above every rule is "over"
  for (const RuleLine& r : rules) highest = std::max(highest, r.value);
  std::string out = Open(name, left + width + 60, h);
  out += Line(left, top - 4, left, h - 6, "axis");
  for (size_t i = 0; i < bars.size(); ++i) {
    const double v = std::clamp(Finite(bars[i].value), 0.0, 1.0);
    const double y = top + row * static_cast<double>(i);
    out += Text(left - 6, y + 12, bars[i].label, "end");
    out += Rect(left, y + 2, v * width, row - 5, v > highest ? "bar over" : "bar",
                " data-field=\"" + Escape(bars[i].label) + "\" data-value=\"" + Num(v, 4) + "\"");
    out += Text(left + v * width + 4, y + 12, Num(100 * Finite(bars[i].value), 1) + " %");
  }
  for (const RuleLine& r : rules) {
    const double x = left + r.value * width;
    out += Line(x, top - 6, x, h - 4, "rule " + ClassName(r.css),
                " data-rule=\"" + Num(r.value, 2) + "\"");
    // The highest rule's label right of its line, the others left of theirs.
    const bool top_rule = r.value >= highest;
    out += Text(top_rule ? x + 3 : x - 3, 10, r.label, top_rule ? "start" : "end");
  }
  return out + "</svg>\n";
}

std::string PairedRatioBars(const std::string& name, const std::vector<PairedBar>& rows,
                            const std::string& first_name, const std::string& second_name) {
  const double left = 190, width = 360, row = 30, top = 34;
  double scale = 1.2;
  for (const PairedBar& r : rows) scale = std::max({scale, Finite(r.first), Finite(r.second)});
  const double h = top + row * static_cast<double>(rows.size()) + 8;
  std::string out = Open(name, left + width + 70, h);
  out += Rect(left, 4, 10, 10, "bar first", "") + Text(left + 14, 13, first_name);
  out += Rect(left + 180, 4, 10, 10, "bar second", "") + Text(left + 194, 13, second_name);
  out += Line(left, top - 4, left, h - 6, "axis");
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = top + row * static_cast<double>(i);
    out += Text(left - 6, y + 16, rows[i].label, "end");
    const std::pair<double, const char*> bars[] = {{rows[i].first, "first"},
                                                   {rows[i].second, "second"}};
    for (int k = 0; k < 2; ++k) {
      const double v = Finite(bars[k].first) > 0 ? bars[k].first : 0;
      const double y0 = y + 2 + 12 * k;
      const std::string css = std::string("bar ") + bars[k].second;
      out += Rect(left, y0, v / scale * width, 11, css,
                  " data-field=\"" + Escape(rows[i].label) + "\" data-scope=\"" + bars[k].second +
                      "\" data-value=\"" + Num(v, 4) + "\"");
      out += Text(left + v / scale * width + 4, y0 + 10, v > 0 ? Num(v, 2) : "-");
    }
  }
  const double x1 = left + width / scale;
  out += Line(x1, top - 8, x1, h - 4, "rule", " data-rule=\"1\"");
  out += Text(x1 + 3, top - 10, "1.0 (no change)");
  return out + "</svg>\n";
}

std::string BalanceChart(const std::vector<CoreBar>& cores, double avg_us, bool half_hint) {
  const double left = 50, height = 140, top = 12, width = 560;
  const double n = std::max<double>(1, static_cast<double>(cores.size()));
  const double step = width / n;
  double max_us = Finite(avg_us);
  for (const CoreBar& c : cores) max_us = std::max(max_us, Finite(c.time_us));
  if (max_us <= 0) max_us = 1;
  const auto y_of = [&](double us) { return top + height * (1 - Finite(us) / max_us); };
  std::string out = Open("per-core", left + width + 10, top + height + 34);
  out += Line(left, top, left, top + height, "axis");
  out += Line(left, top + height, left + width, top + height, "axis");
  out += Text(left - 4, top + 8, Num(max_us, 1), "end");
  out += Text(left - 4, top + height, "0", "end");
  for (size_t i = 0; i < cores.size(); ++i) {
    const CoreBar& c = cores[i];
    const double x = left + step * static_cast<double>(i);
    const std::string css = c.mark.empty() ? "core" : "core " + ClassName(c.mark);
    out += "<g>" + Rect(x + step * 0.1, y_of(c.time_us), step * 0.8, top + height - y_of(c.time_us),
                        css,
                        " data-core=\"" + std::to_string(c.core_id) + "\" data-us=\"" +
                            Num(c.time_us, 3) + "\"");
    out += "<title>" +
           Escape("core " + std::to_string(c.core_id) + ": " + Num(c.time_us, 3) + " us" +
                  (c.mark.empty() ? "" : " (" + c.mark + ")")) +
           "</title></g>";
    if (cores.size() <= 48 || !c.mark.empty()) {
      out += Text(x + step / 2, top + height + 12, std::to_string(c.core_id), "middle");
    }
  }
  out += Line(left, y_of(avg_us), left + width, y_of(avg_us), "avg",
              " data-us=\"" + Num(avg_us, 3) + "\"");
  if (cores.size() >= 4) {
    const size_t half = cores.size() / 2;
    double front = 0, back = 0;
    for (size_t i = 0; i < cores.size(); ++i) (i < half ? front : back) += Finite(cores[i].time_us);
    front /= static_cast<double>(half);
    back /= static_cast<double>(cores.size() - half);
    const double mid = left + step * static_cast<double>(half);
    const std::string hint = half_hint ? " hint" : "";
    out += Line(mid, top, mid, top + height, "half" + hint);
    out += Line(left, y_of(front), mid, y_of(front), "half-avg" + hint);
    out += Line(mid, y_of(back), left + width, y_of(back), "half-avg" + hint);
  }
  out += Text(left + width / 2, top + height + 28, "core id (bar: core time, us)", "middle");
  return out + "</svg>\n";
}

std::string ForestPlot(const std::vector<ForestRow>& rows) {
  const double left = 260, width = 320, row = 22, top = 16;
  double lo = 1, hi = 1;
  for (const ForestRow& r : rows) {
    for (double v : {r.point, r.low, r.high}) {
      if (std::isfinite(v) && v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  const double pad = std::max(0.02, (hi - lo) * 0.08);
  lo -= pad, hi += pad;
  const auto x_of = [&](double v) { return left + width * (v - lo) / (hi - lo); };
  const double h = top + row * static_cast<double>(rows.size()) + 24;
  std::string out = Open("forest", left + width + 90, h);
  out += Line(x_of(1), top - 8, x_of(1), h - 18, "one", " data-value=\"1\"");
  out += Text(x_of(lo), h - 4, Num(lo, 3), "start");
  out += Text(x_of(1), h - 4, "1 (no change)", "middle");
  out += Text(x_of(hi), h - 4, Num(hi, 3), "end");
  for (size_t i = 0; i < rows.size(); ++i) {
    const ForestRow& r = rows[i];
    const double y = top + row * static_cast<double>(i) + 6;
    out += Text(left - 8, y + 4, r.label, "end");
    const std::string data = " data-ratio=\"" + Num(r.point, 4) + "\"";
    if (r.low > 0 && r.high > 0) {
      out += Line(x_of(r.low), y, x_of(r.high), y, "ci",
                  " data-low=\"" + Num(r.low, 4) + "\" data-high=\"" + Num(r.high, 4) + "\"");
    }
    if (r.point > 0) out += Circle(x_of(r.point), y, 4.5, "point " + ClassName(r.css), data);
    out += Text(left + width + 8, y + 4, Num(r.point, 3));
  }
  return out + "</svg>\n";
}

std::string SeriesChart(const std::vector<SeriesPoint>& points, double baseline_value,
                        const std::string& baseline_label, const std::string& unit) {
  const double left = 70, width = 560, top = 14, height = 170;
  double lo = baseline_value > 0 ? baseline_value : 0, hi = lo;
  bool first = baseline_value <= 0;
  for (const SeriesPoint& p : points) {
    const double v = Finite(p.value);
    if (first) lo = hi = v, first = false;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const double pad = std::max((hi - lo) * 0.1, std::max(std::fabs(hi) * 0.02, 1e-9));
  lo -= pad, hi += pad;
  const double step = points.size() > 1 ? width / static_cast<double>(points.size() - 1) : 0;
  const auto x_of = [&](size_t i) { return left + (points.size() > 1 ? step * i : width / 2); };
  const auto y_of = [&](double v) { return top + height * (1 - (Finite(v) - lo) / (hi - lo)); };
  std::string out = Open("series", left + width + 40, top + height + 40);
  out += Line(left, top, left, top + height, "axis");
  out += Line(left, top + height, left + width, top + height, "axis");
  out += Text(left - 4, top + 8, Num(hi, 2), "end");
  out += Text(left - 4, top + height, Num(lo, 2), "end");
  out += Text(8, top + height / 2, unit);
  if (baseline_value > 0) {
    out += Line(left, y_of(baseline_value), left + width, y_of(baseline_value), "baseline",
                " data-us=\"" + Num(baseline_value, 3) + "\"");
    out += Text(left + 6, top + 10, "- - " + baseline_label);  // legend, clear of the points
  }
  std::string path;
  for (size_t i = 0; i < points.size(); ++i) {
    path += (i == 0 ? "" : " ") + C(x_of(i)) + "," + C(y_of(points[i].value));
  }
  out += "<polyline class=\"series\" points=\"" + path + "\"/>";
  const size_t label_every = std::max<size_t>(1, points.size() / 12);
  for (size_t i = 0; i < points.size(); ++i) {
    const SeriesPoint& p = points[i];
    out += Circle(x_of(i), y_of(p.value), 5, "mark " + ClassName(p.css),
                  " data-label=\"" + Escape(p.label) + "\" data-value=\"" + Num(p.value, 3) + "\"",
                  p.title);
    if (i % label_every == 0) out += Text(x_of(i), top + height + 14, p.label, "middle");
  }
  return out + "</svg>\n";
}

std::string Sparkline(const std::vector<double>& values, int highlight) {
  const double w = 120, h = 24;
  std::string out = Open("sparkline", w, h);
  if (values.empty()) return out + "</svg>";
  double lo = Finite(values[0]), hi = lo;
  for (double v : values) lo = std::min(lo, Finite(v)), hi = std::max(hi, Finite(v));
  const double span = hi > lo ? hi - lo : 1;
  const double step = values.size() > 1 ? (w - 6) / static_cast<double>(values.size() - 1) : 0;
  const auto x_of = [&](size_t i) { return 3 + step * static_cast<double>(i); };
  const auto y_of = [&](double v) { return h - 3 - (h - 6) * (Finite(v) - lo) / span; };
  std::string path;
  for (size_t i = 0; i < values.size(); ++i) {
    path += (i == 0 ? "" : " ") + C(x_of(i)) + "," + C(y_of(values[i]));
  }
  out += "<polyline class=\"spark\" points=\"" + path + "\" data-points=\"" +
         std::to_string(values.size()) + "\"/>";
  if (highlight >= 0 && static_cast<size_t>(highlight) < values.size()) {
    out += Circle(x_of(highlight), y_of(values[highlight]), 2.5, "spark-this", "");
  }
  return out + "</svg>";
}

std::string SampleStrip(const std::vector<double>& samples, double aggregate) {
  const double left = 20, width = 520, y = 22;
  double lo = Finite(aggregate), hi = lo;
  for (double s : samples) lo = std::min(lo, Finite(s)), hi = std::max(hi, Finite(s));
  const double pad = std::max((hi - lo) * 0.1, std::max(std::fabs(hi) * 0.005, 1e-9));
  const auto x_of = [&](double v) {
    return left + width * (Finite(v) - lo + pad) / (hi - lo + 2 * pad);
  };
  std::string out = Open("samples", left + width + 20, 48);
  out += Line(left, y, left + width, y, "axis");
  if (samples.size() > 1) {
    out += Line(x_of(lo), y - 8, x_of(hi), y - 8, "ci",
                " data-low=\"" + Num(lo, 3) + "\" data-high=\"" + Num(hi, 3) + "\"");
  }
  for (double s : samples) out += Circle(x_of(s), y, 4, "sample", " data-us=\"" + Num(s, 3) + "\"");
  out += Line(x_of(aggregate), y - 12, x_of(aggregate), y + 10, "agg",
              " data-us=\"" + Num(aggregate, 3) + "\"");
  out += Text(x_of(lo), y + 22, Num(lo, 2), "start");
  out += Text(x_of(hi), y + 22, Num(hi, 2), "end");
  return out + "</svg>\n";
}

}  // namespace npuperf::report
