// The charts of the report pages as inline SVG, drawn here (no chart
// library, no script). Every label is escaped; every class name a caller
// passes goes through ClassName. Elements carry data-* attributes (the
// value they show) so tests and tools can read a chart from the DOM.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace npuperf::report {

// A horizontal bar of a ratio chart: value is a fraction in [0, 1].
struct Bar {
  std::string label;
  double value = 0;
};
// A vertical rule line across a ratio chart at a fraction.
struct RuleLine {
  double value = 0;
  std::string css;    // "rule-high", "rule-max"
  std::string label;  // e.g. "80 %"
};
// Bars of pipe ratios (0..100 %) with rule lines; a bar above the highest
// rule is drawn as "over".
std::string RatioBars(const std::string& name, const std::vector<Bar>& bars,
                      const std::vector<RuleLine>& rules);

// A row of a paired ratio chart: two values of one item (e.g. a ratio in two
// scopes); a value <= 0 or not finite is absent (no bar, "-").
struct PairedBar {
  std::string label;
  double first = 0, second = 0;
};
// Two horizontal bars per row (classed "bar first" and "bar second", with a
// legend naming them), scaled to the largest value and at least 1.2, and a
// rule line at 1 (no change): ratios below 1 end left of it.
std::string PairedRatioBars(const std::string& name, const std::vector<PairedBar>& rows,
                            const std::string& first_name, const std::string& second_name);

// One core of a balance chart.
struct CoreBar {
  int core_id = 0;
  double time_us = 0;
  std::string mark;  // "slowest", "fastest" or ""
};
// Vertical bars, one per core, with the average line; with four or more
// cores the two halves' averages are drawn, classed "hint" when
// `half_hint` (the two-cluster hint of per_core.h fired).
std::string BalanceChart(const std::vector<CoreBar>& cores, double avg_us, bool half_hint);

// A row of a forest plot: a point and its interval (low == high == 0: no
// interval).
struct ForestRow {
  std::string label;
  double point = 0, low = 0, high = 0;
  std::string css;  // e.g. "v-regressed"
};
// Ratio intervals against the no-change line at 1.
std::string ForestPlot(const std::vector<ForestRow>& rows);

// A point of a time series.
struct SeriesPoint {
  std::string label;  // shown under the axis, e.g. "r12"
  double value = 0;
  std::string css;    // marker class, e.g. "v-improved", "pinned", "none"
  std::string title;  // tooltip
};
// A line chart of values over points, with an optional horizontal baseline
// (baseline_value > 0) labelled `baseline_label`.
std::string SeriesChart(const std::vector<SeriesPoint>& points, double baseline_value,
                        const std::string& baseline_label, const std::string& unit);

// A 120x24 sparkline of values; `highlight` (an index, or -1) gets a dot.
std::string Sparkline(const std::vector<double>& values, int highlight);

// The samples of a duration as dots on one axis, their range as a line and
// the aggregate as a tick.
std::string SampleStrip(const std::vector<double>& samples, double aggregate);

}  // namespace npuperf::report
