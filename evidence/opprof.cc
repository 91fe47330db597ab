#include "evidence/opprof.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "evidence/csv_reader.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

const std::vector<std::string>& OpprofMetrics() {
  static const auto* const kMetrics = new std::vector<std::string>{
      "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB",
      "L2Cache",         "ResourceConflictRatio"};
  return *kMetrics;
}

// <dir>/<metric>.csv or <dir>/<metric>_<digits>.csv (exactly one).
absl::StatusOr<std::optional<fs::path>> MetricFile(const fs::path& dir, const std::string& metric) {
  std::vector<fs::path> hits;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::string_view rest = name;
    if (!internal::ConsumePrefix(&rest, metric) || !internal::EndsWith(rest, ".csv")) continue;
    rest.remove_suffix(4);
    bool stamped =
        internal::ConsumePrefix(&rest, "_") && !rest.empty() &&
        std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (rest.empty() || stamped) hits.push_back(it->path());
  }
  if (hits.empty()) return std::optional<fs::path>();
  if (hits.size() > 1) {
    return absl::FailedPreconditionError(Cat("several ", metric, " CSVs in ", dir.string()));
  }
  return std::optional<fs::path>(hits.front());
}

// The directory that holds OpBasicInfo.csv / PipeUtilization.csv.
absl::StatusOr<fs::path> DataDir(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name == "OpBasicInfo.csv" || internal::StartsWith(name, "OpBasicInfo_")) {
      found.push_back(it->path().parent_path());
    }
  }
  if (ec) return absl::NotFoundError(Cat("'", dir.string(), "' is not a directory."));
  if (found.size() > 1) {
    return absl::FailedPreconditionError(
        Cat("expected one OpBasicInfo.csv under ", dir.string(), "; found ", found.size()));
  }
  return found.empty() ? dir : found.front();
}

absl::StatusOr<OpprofBasicInfo> ReadBasic(const fs::path& file) {
  absl::StatusOr<std::unique_ptr<CsvReader>> csv = CsvReader::Open(file);
  if (!csv.ok()) return csv.status();
  CsvReader& r = **csv;
  OpprofBasicInfo b;
  absl::StatusOr<bool> row = r.Next();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InvalidArgumentError(Cat(file.string(), ": no data row"));
  if (int c = r.Find("Op Name"); c >= 0) b.op_name = r.Cell(c);
  if (int c = r.Find("Op Type"); c >= 0) b.op_type = r.Cell(c);
  struct NumCol {
    const char* name;
    std::optional<double>* out;
  };
  std::optional<double> duration, block, mix;
  for (NumCol n : {NumCol{"Task Duration(us)", &duration}, NumCol{"Block Dim", &block},
                   NumCol{"Mix Block Dim", &mix}, NumCol{"Current Freq", &b.current_freq_mhz},
                   NumCol{"Rated Freq", &b.rated_freq_mhz}}) {
    absl::StatusOr<std::optional<double>> v = r.Number(r.Find(n.name));
    if (!v.ok()) return v.status();
    *n.out = *v;
  }
  b.task_duration_us = duration.value_or(0);
  b.block_dim = static_cast<int64_t>(block.value_or(0));
  b.mix_block_dim = static_cast<int64_t>(mix.value_or(0));
  return b;
}

absl::StatusOr<OpprofMetric> ReadMetric(const std::string& metric, const fs::path& file) {
  absl::StatusOr<std::unique_ptr<CsvReader>> csv = CsvReader::Open(file);
  if (!csv.ok()) return csv.status();
  CsvReader& r = **csv;
  OpprofMetric m{metric, file, 0, {}};
  const std::vector<std::string>& header = r.header();
  std::vector<double> sum(header.size(), 0);
  m.columns.resize(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    m.columns[i].column = header[i];
    m.columns[i].min = std::numeric_limits<double>::infinity();
    m.columns[i].max = -std::numeric_limits<double>::infinity();
  }
  while (true) {
    absl::StatusOr<bool> more = r.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    ++m.rows;
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == "block_id" || header[i] == "sub_block_id") continue;
      absl::StatusOr<std::optional<double>> v = r.Number(static_cast<int>(i));
      if (!v.ok()) return v.status();
      if (!v->has_value()) continue;
      ColumnStats& c = m.columns[i];
      c.min = std::min(c.min, **v);
      c.max = std::max(c.max, **v);
      sum[i] += **v;
      ++c.n;
    }
  }
  std::vector<ColumnStats> kept;
  for (size_t i = 0; i < header.size(); ++i) {
    if (m.columns[i].n == 0) continue;
    m.columns[i].avg = sum[i] / static_cast<double>(m.columns[i].n);
    kept.push_back(m.columns[i]);
  }
  m.columns = std::move(kept);
  return m;
}

DvfsCheck OpprofDvfs(const std::optional<OpprofBasicInfo>& basic, double tolerance_pct) {
  DvfsCheck d;
  d.tolerance_pct = tolerance_pct;
  if (!basic || !basic->current_freq_mhz || !basic->rated_freq_mhz || *basic->rated_freq_mhz <= 0) {
    d.note = "OpBasicInfo has no Current/Rated Freq";
    return d;
  }
  d.observed_mhz = *basic->current_freq_mhz;
  d.rated_mhz = *basic->rated_freq_mhz;
  d.source = ClockSource::kOpprofCurrentFreq;
  d.deviation_pct = (d.observed_mhz - d.rated_mhz) / d.rated_mhz * 100;
  d.status = std::abs(d.deviation_pct) <= tolerance_pct ? DvfsStatus::kOk : DvfsStatus::kSuspect;
  if (d.status == DvfsStatus::kSuspect) d.note = "Current < Rated only raises a DVFS hypothesis";
  return d;
}

}  // namespace

const ColumnStats* OpprofMetric::Find(std::string_view column) const {
  for (const ColumnStats& c : columns) {
    if (c.column == column) return &c;
  }
  return nullptr;
}

absl::StatusOr<OpprofSummary> ReadOpprof(const fs::path& dir, double dvfs_tolerance_pct) {
  absl::StatusOr<fs::path> data = DataDir(dir);
  if (!data.ok()) return data.status();
  OpprofSummary s;
  s.data_dir = *data;
  absl::StatusOr<std::optional<fs::path>> basic = MetricFile(*data, "OpBasicInfo");
  if (!basic.ok()) return basic.status();
  if (basic->has_value()) {
    absl::StatusOr<OpprofBasicInfo> b = ReadBasic(**basic);
    if (!b.ok()) return b.status();
    s.basic = *b;
  }
  for (const std::string& metric : OpprofMetrics()) {
    absl::StatusOr<std::optional<fs::path>> file = MetricFile(*data, metric);
    if (!file.ok()) return file.status();
    if (!file->has_value()) {
      if (metric == "PipeUtilization") {
        return absl::NotFoundError(Cat("PipeUtilization.csv not found in ", data->string()));
      }
      continue;
    }
    absl::StatusOr<OpprofMetric> m = ReadMetric(metric, **file);
    if (!m.ok()) return m.status();
    s.metrics.push_back(std::move(*m));
  }
  for (const char* col : {"aic_time(us)", "aiv_time(us)"}) {
    if (const ColumnStats* c = s.metrics.front().Find(col))
      s.max_core_time_us = std::max(s.max_core_time_us, c->max);
  }
  if (s.basic && s.basic->task_duration_us > 0) {
    s.head_overhead_us = std::max(0.0, s.basic->task_duration_us - s.max_core_time_us);
  }
  s.dvfs = OpprofDvfs(s.basic, dvfs_tolerance_pct);
  return s;
}

}  // namespace npuperf::evidence
