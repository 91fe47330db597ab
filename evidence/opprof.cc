#include "evidence/opprof.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "evidence/columns.h"
#include "evidence/csv_reader.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;
using Json = nlohmann::json;

// <dir>/<metric>.csv or <dir>/<metric>_<digits>.csv (exactly one).
absl::StatusOr<std::optional<fs::path>> MetricFile(const fs::path& dir, const std::string& metric) {
  std::vector<fs::path> hits;
  std::error_code ec;
  for (const fs::path& p : SortedChildren(dir, ec)) {
    std::string name = p.filename().string();
    std::string_view rest = name;
    if (!internal::ConsumePrefix(&rest, metric) || !internal::EndsWith(rest, ".csv")) continue;
    rest.remove_suffix(4);
    bool stamped =
        internal::ConsumePrefix(&rest, "_") && !rest.empty() &&
        std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (rest.empty() || stamped) hits.push_back(p);
  }
  if (hits.empty()) return std::optional<fs::path>();
  if (hits.size() > 1) {
    return absl::FailedPreconditionError(Cat("several ", metric, " CSVs in ", dir.string()));
  }
  return std::optional<fs::path>(hits.front());
}

// Whether `name` is a file msprof op writes per launch: OpBasicInfo.csv, a
// <Metric>[_<ts>].csv of any group, or CANN 9.x summary.jsonl.
bool IsLaunchFile(const std::string& name) {
  if (name == "summary.jsonl") return true;
  if (!internal::EndsWith(name, ".csv")) return false;
  if (internal::StartsWith(name, "OpBasicInfo")) return true;
  for (const std::string& m : SevenMetrics()) {
    if (internal::StartsWith(name, m)) return true;
  }
  return internal::StartsWith(name, "MemoryAccess");
}

// Directories holding a launch's files (one per launch), path order. Any
// subset of the metric groups makes a launch (msprof op --aic-metrics=<some>).
std::vector<fs::path> DataDirs(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsLaunchFile(it->path().filename().string())) found.push_back(it->path().parent_path());
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

absl::StatusOr<OpprofBasicInfo> ReadBasicCsv(const fs::path& file) {
  absl::StatusOr<std::unique_ptr<CsvReader>> csv = CsvReader::Open(file);
  if (!csv.ok()) return csv.status();
  CsvReader& r = **csv;
  OpprofBasicInfo b;
  b.file = file;
  absl::StatusOr<bool> row = r.Next();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InvalidArgumentError(Cat(file.string(), ": no data row"));
  if (int c = r.Find("Op Name"); c >= 0 && !IsMissingCell(r.Cell(c))) b.op_name = r.Cell(c);
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

std::optional<double> JsonNumber(const Json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

// Calls fn(object) for each JSON line of a .jsonl file.
template <typename Fn>
void ForEachJsonLine(const fs::path& file, Fn fn) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object()) fn(j);
  }
}

// summary.jsonl OpInfoSummary (CANN 9.x, no OpBasicInfo.csv).
std::optional<OpprofBasicInfo> ReadSummaryJsonl(const fs::path& file) {
  std::optional<OpprofBasicInfo> out;
  ForEachJsonLine(file, [&](const Json& j) {
    if (j.value("category", "") != "OpInfoSummary") return;
    OpprofBasicInfo b;
    b.file = file;
    if (j.contains("Op Name") && j["Op Name"].is_string()) b.op_name = j["Op Name"];
    if (j.contains("Op Type") && j["Op Type"].is_string()) b.op_type = j["Op Type"];
    b.task_duration_us = JsonNumber(j, "Task Duration(us)").value_or(0);
    b.block_dim = static_cast<int64_t>(JsonNumber(j, "Block Dim").value_or(0));
    b.mix_block_dim = static_cast<int64_t>(JsonNumber(j, "Mix Block Dim").value_or(0));
    b.current_freq_mhz = JsonNumber(j, "Current Freq");
    b.rated_freq_mhz = JsonNumber(j, "Rated Freq");
    out = b;
  });
  return out;
}

void ReadHardware(const fs::path& data_dir, OpprofHardware* hw) {
  fs::path info = data_dir / "dump" / "op_basic_info.txt";
  std::ifstream txt(info);
  for (std::string line; std::getline(txt, line);) {
    std::string_view v = line;
    if (internal::ConsumePrefix(&v, "Run Soc Version=")) {
      hw->soc = std::string(v);
      hw->file = info;
    }
  }
  fs::path hardware = data_dir / "HardwareInfo.jsonl";
  ForEachJsonLine(hardware, [&](const Json& j) {
    std::string category = j.value("category", "");
    if (category == "Device Info" && j.contains("chip info") && j["chip info"].is_string()) {
      std::string chip = j["chip info"];
      hw->soc = chip.substr(0, chip.find(' '));  // "Ascend950PR_9599 V100"
      hw->file = hardware;
    } else if (category == "AI Core Information") {
      if (std::optional<double> v = JsonNumber(j, "ai cube count"))
        hw->cube_cores = static_cast<int>(*v);
      if (std::optional<double> v = JsonNumber(j, "ai vector count"))
        hw->vector_cores = static_cast<int>(*v);
      hw->cube_mhz = JsonNumber(j, "ai cube frequency(MHZ)");
      hw->file = hardware;
    }
  });
}

absl::StatusOr<OpprofMetric> ReadMetricCsv(const std::string& metric, const fs::path& file) {
  absl::StatusOr<std::unique_ptr<CsvReader>> csv = CsvReader::Open(file);
  if (!csv.ok()) return csv.status();
  CsvReader& r = **csv;
  OpprofMetric m{metric, file, 0, {}};
  const std::vector<std::string>& header = r.header();
  std::vector<double> sum(header.size(), 0);
  m.columns.resize(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    m.columns[i].column = CanonicalColumn(header[i]);
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

absl::StatusOr<OpprofSummary> ReadDataDir(const fs::path& data) {
  OpprofSummary s;
  s.data_dir = data;
  absl::StatusOr<std::optional<fs::path>> basic = MetricFile(data, "OpBasicInfo");
  if (!basic.ok()) return basic.status();
  if (basic->has_value()) {
    absl::StatusOr<OpprofBasicInfo> b = ReadBasicCsv(**basic);
    if (!b.ok()) return b.status();
    s.basic = *b;
  } else {
    s.basic = ReadSummaryJsonl(data / "summary.jsonl");
  }
  if (!s.basic) {
    return absl::NotFoundError(
        Cat("OpBasicInfo.csv not found in ", data.string(),
            " (nor a CANN 9.x summary.jsonl OpInfoSummary): msprof op writes it for every launch; "
            "the kernel's name, Task Duration and clocks come from it"));
  }
  ReadHardware(data, &s.hardware);
  for (const std::string& metric : SevenMetrics()) {
    absl::StatusOr<std::optional<fs::path>> file = MetricFile(data, metric);
    if (!file.ok()) return file.status();
    if (!file->has_value()) {
      s.missing.push_back(metric);
      continue;
    }
    absl::StatusOr<OpprofMetric> m = ReadMetricCsv(metric, **file);
    if (!m.ok()) return m.status();
    s.metrics.push_back(std::move(*m));
  }
  for (const OpprofMetric& m : s.metrics) {
    for (const char* col : {"aic_time(us)", "aiv_time(us)"}) {
      if (const ColumnStats* c = m.Find(col))
        s.max_core_time_us = std::max(s.max_core_time_us, c->max);
    }
  }
  return s;
}

}  // namespace

const ColumnStats* OpprofMetric::Find(std::string_view column) const {
  for (const ColumnStats& c : columns) {
    if (c.column == column) return &c;
  }
  return nullptr;
}

absl::StatusOr<std::vector<OpprofSummary>> ReadOpprofLaunches(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(Cat("'", dir.string(), "' is not a directory."));
  }
  std::vector<fs::path> dirs = DataDirs(dir);
  if (dirs.empty()) {
    return absl::NotFoundError(Cat("no msprof op output in ", dir.string(),
                                   " (looked for OpBasicInfo.csv, <Metric>.csv of any group, "
                                   "summary.jsonl)"));
  }
  std::vector<OpprofSummary> out;
  for (const fs::path& d : dirs) {
    absl::StatusOr<OpprofSummary> s = ReadDataDir(d);
    if (!s.ok()) return s.status();
    out.push_back(*std::move(s));
  }
  return out;
}

absl::StatusOr<OpprofSummary> ReadOpprof(const fs::path& dir) {
  absl::StatusOr<std::vector<OpprofSummary>> all = ReadOpprofLaunches(dir);
  if (!all.ok()) return all.status();
  if (all->size() > 1) {
    return absl::FailedPreconditionError(Cat("expected one msprof op launch under ", dir.string(),
                                             "; found ", all->size(),
                                             " launch directories (pick one with --launch)"));
  }
  return std::move(all->front());
}

}  // namespace npuperf::evidence
