#include "report/roofline_chart.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "report/html.h"
#include "report/report.h"

namespace npuperf::report {
namespace internal {
namespace {

using Json = nlohmann::json;

std::string C(double v) { return Num(v, 1); }

std::string Line(double x1, double y1, double x2, double y2, const std::string& css,
                 const std::string& extra = "") {
  return "<line class=\"" + css + "\" x1=\"" + C(x1) + "\" y1=\"" + C(y1) + "\" x2=\"" + C(x2) +
         "\" y2=\"" + C(y2) + "\"" + extra + "/>";
}

std::string Text(double x, double y, const std::string& text, const std::string& anchor = "start") {
  return "<text x=\"" + C(x) + "\" y=\"" + C(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"11\">" + Escape(text) + "</text>";
}

double Number(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0;
}

std::string Str(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "1.6 TB/s"-style figure with an SI prefix.
std::string Si(double v, const std::string& unit) {
  static const std::pair<double, const char*> kPrefix[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, p] : kPrefix) {
    if (std::fabs(v) >= scale) return Num(v / scale, 2) + " " + p + unit;
  }
  return Num(v, 2) + " " + unit;
}

// Log-log axes: decades [lo, hi] of x and y mapped onto the plot area.
struct Axes {
  double left = 70, top = 14, width = 520, height = 240;
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;  // log10
  double X(double v) const { return left + width * (std::log10(v) - x_lo) / (x_hi - x_lo); }
  double Y(double v) const { return top + height * (1 - (std::log10(v) - y_lo) / (y_hi - y_lo)); }
};

Axes AxesFor(double ai, double ridge, double peak, double bw, double achieved) {
  Axes a;
  a.x_lo = std::floor(std::log10(std::min(ai, ridge))) - 1;
  a.x_hi = std::ceil(std::log10(std::max(ai, ridge))) + 1;
  a.y_hi = std::ceil(std::log10(peak * 1.5));
  a.y_lo = std::floor(std::log10(std::min(achieved, bw * std::pow(10.0, a.x_lo))));
  if (a.y_hi - a.y_lo < 2) a.y_lo = a.y_hi - 2;
  return a;
}

// Two roofline objects drawn against the same ceilings (peaks equal to
// 1e-9 relative): their points may share one chart.
bool SameCeilings(const Json& a, const Json& b) {
  auto same = [&](const char* key) {
    const double x = Number(a, key), y = Number(b, key);
    return x > 0 && y > 0 && std::fabs(x - y) <= 1e-9 * std::max(x, y);
  };
  return same("peak_ops_per_s") && same("peak_bytes_per_s");
}

std::string AxisTicks(const Axes& a) {
  std::string out = Line(a.left, a.top, a.left, a.top + a.height, "axis", " stroke=\"#444\"") +
                    Line(a.left, a.top + a.height, a.left + a.width, a.top + a.height, "axis",
                         " stroke=\"#444\"");
  for (double d = a.x_lo; d <= a.x_hi; d += 1) {
    out += Text(a.X(std::pow(10.0, d)), a.top + a.height + 14, "1e" + Num(d, 0), "middle");
  }
  for (double d = a.y_lo; d <= a.y_hi; d += 1) {
    out += Text(a.left - 4, a.Y(std::pow(10.0, d)) + 4, "1e" + Num(d, 0), "end");
  }
  out += Text(a.left + a.width / 2, a.top + a.height + 28, "arithmetic intensity (ops/byte)",
              "middle");
  out += Text(4, a.top + 8, "ops/s");
  return out;
}

void AddOverlap(std::vector<std::pair<double, double>> c, std::vector<std::pair<double, double>> m,
                std::vector<std::pair<double, double>>* out) {
  auto merge = [](std::vector<std::pair<double, double>>& v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<double, double>> u;
    for (const auto& iv : v) {
      if (!u.empty() && iv.first <= u.back().second) {
        u.back().second = std::max(u.back().second, iv.second);
      } else {
        u.push_back(iv);
      }
    }
    v = std::move(u);
  };
  merge(c);
  merge(m);
  for (size_t i = 0, j = 0; i < c.size() && j < m.size();) {
    const double s = std::max(c[i].first, m[j].first), e = std::min(c[i].second, m[j].second);
    if (s < e) out->push_back({s, e});
    (c[i].second < m[j].second) ? ++i : ++j;
  }
}

std::string Blockers(const Json& r) {
  std::string out =
      Para("roofline_terminal_status: " + Str(r, "roofline_terminal_status") +
           " · pipeline: " + Str(r, "pipeline_overlap_status") +
           " · completion_eligible: " + (r.value("completion_eligible", false) ? "true" : "false"));
  if (r.contains("completion_blockers") && r["completion_blockers"].is_array()) {
    for (const Json& b : r["completion_blockers"]) {
      if (b.is_string()) out += Para("not closable: " + b.get<std::string>(), "note");
    }
  }
  return out + Para("rule: " + Str(r, "terminal_rule"), "note");
}

}  // namespace

std::string RooflineChart(const Json& r, const Json* baseline) {
  const double ai = Number(r, "arithmetic_intensity"), ridge = Number(r, "ridge_point");
  const double peak = Number(r, "peak_ops_per_s"), bw = Number(r, "peak_bytes_per_s");
  const double achieved = Number(r, "achieved_ops_per_s");
  if (!(ai > 0 && ridge > 0 && peak > 0 && bw > 0 && achieved > 0)) return "";
  double base_ai = 0, base_achieved = 0;
  if (baseline != nullptr && SameCeilings(r, *baseline)) {
    base_ai = Number(*baseline, "arithmetic_intensity");
    base_achieved = Number(*baseline, "achieved_ops_per_s");
  }
  const bool with_base = base_ai > 0 && base_achieved > 0;
  Axes a = AxesFor(ai, ridge, peak, bw, achieved);
  if (with_base) {
    const Axes b = AxesFor(base_ai, ridge, peak, bw, base_achieved);
    a.x_lo = std::min(a.x_lo, b.x_lo);
    a.x_hi = std::max(a.x_hi, b.x_hi);
    a.y_lo = std::min(a.y_lo, b.y_lo);
  }
  const double x0 = std::pow(10.0, a.x_lo), x1 = std::pow(10.0, a.x_hi);
  std::string out =
      "<svg class=\"chart roofline\" id=\"roofline\" data-chart=\"roofline\" width=\"" +
      C(a.left + a.width + 20) + "\" height=\"" + C(a.top + a.height + 36) + "\" viewBox=\"0 0 " +
      C(a.left + a.width + 20) + " " + C(a.top + a.height + 36) +
      "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">";
  out += AxisTicks(a);
  out += Line(a.X(x0), a.Y(bw * x0), a.X(ridge), a.Y(peak), "ceiling bandwidth",
              " stroke=\"#1f77b4\" stroke-width=\"2\" data-bytes-per-s=\"" + Num(bw, 0) + "\"");
  out += Line(a.X(ridge), a.Y(peak), a.X(x1), a.Y(peak), "ceiling compute",
              " stroke=\"#d62728\" stroke-width=\"2\" data-ops-per-s=\"" + Num(peak, 0) + "\"");
  out += Line(a.X(ridge), a.top, a.X(ridge), a.top + a.height, "ridge",
              " stroke=\"#888\" stroke-dasharray=\"4 3\" data-ridge=\"" + Num(ridge, 3) + "\"");
  out += Text(a.X(ridge) + 4, a.top + a.height - 6, "ridge " + Num(ridge, 2) + " ops/B");
  out +=
      Text(a.X(x1) - 4, a.Y(peak) - 4, Str(r, "compute_ceiling") + " " + Si(peak, "ops/s"), "end");
  out += Text(a.X(x0) + 4, a.Y(bw * x0) - 6, "HBM " + Si(bw, "B/s"));
  if (with_base) {
    out += Line(a.X(base_ai), a.Y(base_achieved), a.X(ai), a.Y(achieved), "moved",
                " stroke=\"#555\" stroke-dasharray=\"3 2\"");
    out += "<circle class=\"point baseline\" cx=\"" + C(a.X(base_ai)) + "\" cy=\"" +
           C(a.Y(base_achieved)) +
           "\" r=\"5\" fill=\"none\" stroke=\"#555\" stroke-width=\"2\" data-intensity=\"" +
           Num(base_ai, 4) + "\" data-ops-per-s=\"" + Num(base_achieved, 0) + "\"><title>" +
           Escape("baseline: " + Num(base_ai, 3) + " ops/B, " + Si(base_achieved, "ops/s") + ", " +
                  Num(Number(*baseline, "percent_of_roof"), 1) + " % of the roof") +
           "</title></circle>";
  }
  out += "<circle class=\"point this-round\" cx=\"" + C(a.X(ai)) + "\" cy=\"" + C(a.Y(achieved)) +
         "\" r=\"5\" fill=\"#2ca02c\" data-intensity=\"" + Num(ai, 4) + "\" data-ops-per-s=\"" +
         Num(achieved, 0) + "\" data-percent-of-roof=\"" + Num(Number(r, "percent_of_roof"), 2) +
         "\"><title>" +
         Escape("this round: " + Num(ai, 3) + " ops/B, " + Si(achieved, "ops/s") + ", " +
                Num(Number(r, "percent_of_roof"), 1) + " % of the roof") +
         "</title></circle>";
  return out + "</svg>";
}

namespace {

// The "roofline" object of an evidence.json document (null when absent).
Json RooflineOf(const std::string& evidence_json) {
  if (evidence_json.empty()) return nullptr;
  Json doc = Json::parse(evidence_json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("roofline") || !doc["roofline"].is_object()) return nullptr;
  return doc["roofline"];
}

}  // namespace

std::string RooflineComparison(const std::string& baseline_evidence_json,
                               const std::string& candidate_evidence_json) {
  const Json base = RooflineOf(baseline_evidence_json);
  const Json cand = RooflineOf(candidate_evidence_json);
  if (base.is_null() && cand.is_null()) return "";
  const bool base_measured = !base.is_null() && Str(base, "status") == "measured";
  const bool cand_measured = !cand.is_null() && Str(cand, "status") == "measured";
  std::string body;
  if (!base_measured || !cand_measured) {
    body = Para(std::string("not on one chart: the ") +
                    (!base_measured && !cand_measured ? "baseline and the candidate are"
                     : !base_measured                 ? "baseline is"
                                                      : "candidate is") +
                    " not measured (standard rounds with the memory and arithmetic groups are)",
                "note");
    if (cand_measured) body += RooflineChart(cand);
  } else if (!SameCeilings(base, cand)) {
    body = Para(
        "not on one chart: the ceilings differ (another SoC or clock): each round's page "
        "has its own",
        "note");
  } else {
    body = RooflineChart(cand, &base);
    body +=
        Table("roofline-figures", {"figure", "baseline", "candidate"},
              {{"arithmetic intensity", Num(Number(base, "arithmetic_intensity"), 4) + " ops/B",
                Num(Number(cand, "arithmetic_intensity"), 4) + " ops/B"},
               {"achieved", Si(Number(base, "achieved_ops_per_s"), "ops/s"),
                Si(Number(cand, "achieved_ops_per_s"), "ops/s")},
               {"bytes moved per second", Si(Number(base, "achieved_bytes_per_s"), "B/s"),
                Si(Number(cand, "achieved_bytes_per_s"), "B/s")},
               {"percent of roof", Num(Number(base, "percent_of_roof"), 1) + " %",
                Num(Number(cand, "percent_of_roof"), 1) + " %"},
               {"binding ceiling", Str(base, "binding_ceiling"), Str(cand, "binding_ceiling")}});
  }
  return Section("roofline", "Roofline", body);
}

std::string RooflineSection(const v1::Evidence& e) {
  if (e.evidence_json().empty()) return "";
  const Json doc = Json::parse(e.evidence_json(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("roofline") || !doc["roofline"].is_object()) return "";
  const Json& r = doc["roofline"];
  std::string body;
  if (Str(r, "status") == "measured") {
    body += RooflineChart(r);
    body += Table("roofline-figures", {"figure", "value"},
                  {{"arithmetic intensity", Num(Number(r, "arithmetic_intensity"), 4) + " ops/B"},
                   {"achieved", Si(Number(r, "achieved_ops_per_s"), "ops/s") + ", " +
                                    Si(Number(r, "achieved_bytes_per_s"), "B/s")},
                   {"roof at this intensity", Si(Number(r, "roof_ops_per_s"), "ops/s")},
                   {"percent of roof", Num(Number(r, "percent_of_roof"), 1) + " %"},
                   {"ridge point", Num(Number(r, "ridge_point"), 3) + " ops/B"},
                   {"binding ceiling", Str(r, "binding_ceiling")}});
  } else {
    std::string missing;
    if (r.contains("missing") && r["missing"].is_array()) {
      for (const Json& m : r["missing"]) {
        if (m.is_string()) missing += (missing.empty() ? "" : "; ") + m.get<std::string>();
      }
    }
    body += Para("insufficient evidence: not measured: " + missing, "note");
  }
  if (r.contains("notes") && r["notes"].is_array()) {
    for (const Json& n : r["notes"]) {
      if (n.is_string()) body += Para(n.get<std::string>(), "note");
    }
  }
  return Section("roofline", "Roofline", body + Blockers(r));
}

namespace {

using Spans =
    std::pair<std::vector<std::pair<double, double>>, std::vector<std::pair<double, double>>>;

// One event bar of a lane; the event's interval is added to `spans`.
std::string EventBar(const Json& e, double y, const std::function<double(double)>& x_of,
                     Spans* spans) {
  static const std::map<std::string, std::string> kFill = {
      {"compute", "#d62728"}, {"movement", "#1f77b4"}, {"scalar", "#9467bd"}, {"wait", "#bbbbbb"}};
  const double s = std::atof(Str(e, "start_offset_us").c_str());
  const double d = std::atof(Str(e, "duration_us").c_str());
  const std::string cls = Str(e, "pipe_class");
  if (cls == "compute") spans->first.push_back({s, s + d});
  if (cls == "movement") spans->second.push_back({s, s + d});
  auto fill = kFill.find(cls);
  return "<rect class=\"ev ev-" + ClassName(cls) + "\" x=\"" + C(x_of(s)) + "\" y=\"" +
         C(y + (cls == "compute" ? 2 : 8)) + "\" width=\"" +
         Num(std::max(0.5, x_of(s + d) - x_of(s)), 2) + "\" height=\"6\" fill=\"" +
         (fill == kFill.end() ? "#7f7f7f" : fill->second) + "\"><title>" +
         Escape(Str(e, "instruction") + " +" + Str(e, "start_offset_us") + " us, " +
                Str(e, "duration_us") + " us") +
         "</title></rect>";
}

}  // namespace

std::string TimelineLanes(const Json& t) {
  const double window =
      std::atof(Str(t.value("target_task", Json::object()), "duration_us").c_str());
  if (!(window > 0) || !t.contains("monitored_lanes") || !t["monitored_lanes"].is_array()) {
    return "";
  }
  std::map<std::string, size_t> row;
  for (const Json& l : t["monitored_lanes"]) row.emplace(Str(l, "name"), row.size());
  const double left = 110, width = 560, h = 16, top = 8;
  const double height = top + h * static_cast<double>(row.size()) + 24;
  std::string out = "<svg class=\"chart timeline-lanes\" data-chart=\"timeline\" width=\"" +
                    C(left + width + 10) + "\" height=\"" + C(height) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">";
  const std::function<double(double)> x_of = [&](double us) {
    return left + width * std::clamp(us / window, 0.0, 1.0);
  };
  std::map<std::string, Spans> spans;  // lane -> (compute, movement)
  for (const auto& [name, i] : row) {
    out += Text(left - 4, top + h * static_cast<double>(i) + 12, name, "end");
  }
  for (const Json& e : t.value("events", Json::array())) {
    auto it = row.find(Str(e, "lane"));
    if (it == row.end()) continue;
    out += EventBar(e, top + h * static_cast<double>(it->second), x_of, &spans[it->first]);
  }
  for (const auto& [lane, cm] : spans) {
    std::vector<std::pair<double, double>> overlap;
    AddOverlap(cm.first, cm.second, &overlap);
    for (const auto& [s, e] : overlap) {
      out += "<rect class=\"overlap\" x=\"" + C(x_of(s)) + "\" y=\"" +
             C(top + h * static_cast<double>(row[lane]) + 14) + "\" width=\"" +
             Num(std::max(0.5, x_of(e) - x_of(s)), 2) + "\" height=\"2\" fill=\"#ff7f0e\"/>";
    }
  }
  out += Text(left, height - 6, "0 us") +
         Text(left + width, height - 6, Num(window, 3) + " us", "end");
  return out + "</svg>";
}

std::string TimelineSection(const Json& t) {
  if (!t.is_object()) {
    return Section("timeline", "Lanes of the target window",
                   Para("not a timeline_evidence document", "note"));
  }
  const Json& o = t.value("same_lane_pipe_interval_overlap", Json::object());
  std::string body = TimelineLanes(t);
  body += Para("attribution: " + Str(t, "attribution_status") + " · pipeline evidence: " +
               Str(t, "pipeline_evidence_status") + " · same-lane compute+movement overlap: " +
               Str(o.value("pair_overlap_us", Json::object()), "compute+movement") + " us");
  for (const Json& l : t.value("limitations", Json::array())) {
    if (l.is_string()) body += Para(l.get<std::string>(), "note");
  }
  return Section("timeline", "Lanes of the target window", body);
}

}  // namespace internal

std::string RenderTimelinePage(const std::string& timeline_json) {
  using Json = nlohmann::json;
  const Json t = Json::parse(timeline_json, nullptr, /*allow_exceptions=*/false);
  if (!t.is_object()) return Page("timeline", "timeline", "not a timeline_evidence document", "");
  return Page("timeline", "timeline of " + internal::Str(t, "target_op_name"),
              "instruction profile (supplemental; its durations never replace the round's)",
              internal::TimelineSection(t));
}

}  // namespace npuperf::report
