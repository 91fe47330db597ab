#include "evidence/op_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "evidence/candidates.h"
#include "evidence/columns.h"
#include "evidence/csv_reader.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

struct Columns {
  int op_name = -1, op_type = -1, task_type = -1, duration = -1, start = -1;
  int block = -1, mix_block = -1, shapes = -1, dtypes = -1, formats = -1, stream = -1, task = -1;
  std::vector<int> metric;         // header indexes of the metric columns
  std::vector<std::string> names;  // their canonical names
  // Positions in `metric` of aicore_time(us) and aiv_time(us) (-1: absent).
  int aicore_time = -1, aiv_time = -1;
};

absl::StatusOr<Columns> Locate(const CsvSliceReader& csv, const fs::path& file) {
  Columns c;
  c.op_name = FindColumn(csv, "Op Name");
  if (c.op_name < 0) {
    return absl::InvalidArgumentError(Cat(file.string(), ": no 'Op Name' (or 'Name') column"));
  }
  c.op_type = FindColumn(csv, "OP Type");
  c.task_type = FindColumn(csv, "Task Type");
  c.duration = FindColumn(csv, "Task Duration(us)");
  c.start = FindColumn(csv, "Task Start Time(us)");
  c.block = FindColumn(csv, "Block Num");
  c.mix_block = FindColumn(csv, "Mix Block Num");
  c.shapes = FindColumn(csv, "Input Shapes");
  c.dtypes = FindColumn(csv, "Input Data Types");
  c.formats = FindColumn(csv, "Input Formats");
  c.stream = FindColumn(csv, "Stream ID");
  c.task = FindColumn(csv, "Task ID");
  const std::vector<std::string>& header = csv.header();
  for (size_t i = 0; i < header.size(); ++i) {
    if (IsIdentityColumn(header[i])) continue;
    c.metric.push_back(static_cast<int>(i));
    c.names.push_back(CanonicalColumn(header[i]));
    const int at = static_cast<int>(c.names.size()) - 1;
    if (c.names.back() == "aicore_time(us)") c.aicore_time = at;
    if (c.names.back() == "aiv_time(us)") c.aiv_time = at;
  }
  return c;
}

std::string CellOr(const CsvSliceReader& csv, int col) {
  return col < 0 ? std::string() : std::string(csv.Cell(col));
}

absl::StatusOr<std::optional<int64_t>> IntCell(const CsvSliceReader& csv, int col) {
  absl::StatusOr<std::optional<double>> v = csv.Number(col);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return std::optional<int64_t>();
  if (std::abs(**v) > 9e15) return csv.ErrorAt(col, "integer out of range");
  return std::optional<int64_t>(static_cast<int64_t>(std::llround(**v)));
}

// One target row: identity, launch and metric values (NaN = N/A).
struct RawRow {
  OpRow identity;
  LaunchInfo launch;
  std::vector<double> values;
};

absl::StatusOr<RawRow> MakeRow(const CsvSliceReader& csv, const Columns& c) {
  RawRow r;
  OpRow& row = r.identity;
  row.op_name = CellOr(csv, c.op_name);
  row.op_type = CellOr(csv, c.op_type);
  row.task_type = CellOr(csv, c.task_type);
  row.input_shapes = CellOr(csv, c.shapes);
  row.input_data_types = CellOr(csv, c.dtypes);
  row.input_formats = CellOr(csv, c.formats);
  row.file = csv.current_path();
  row.line = csv.line();
  for (auto [col, out] : {std::pair{c.block, &row.block_num},
                          {c.mix_block, &row.mix_block_num},
                          {c.stream, &r.launch.stream_id},
                          {c.task, &r.launch.task_id}}) {
    // Stream/Task ID are N/A on HCCL rows; Block Num is N/A at task-time l0.
    absl::StatusOr<std::optional<int64_t>> v = IntCell(csv, col);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  for (auto [col, out] :
       {std::pair{c.duration, &row.task_duration_us}, {c.start, &r.launch.start_us}}) {
    absl::StatusOr<std::optional<double>> v = csv.Number(col);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  if (c.start >= 0) r.launch.start_ns = ParseMicrosAsNs(csv.Cell(c.start));
  r.launch.duration_us = row.task_duration_us.value_or(0);
  r.launch.where = csv.Where();
  r.values.reserve(c.metric.size());
  for (int col : c.metric) {
    absl::StatusOr<std::optional<double>> v = csv.Number(col);
    if (!v.ok()) return v.status();
    r.values.push_back(v->value_or(kMissing));
  }
  return r;
}

std::string CandidateList(const std::vector<fs::path>& parts) {
  absl::StatusOr<std::vector<OpCandidate>> all = ListCandidates(parts);
  if (!all.ok()) return Cat("(cannot list: ", internal::Msg(all.status()), ")");
  if (all->empty()) return "none";
  std::string out;
  for (size_t i = 0; i < all->size() && i < 10; ++i) {
    const OpCandidate& c = (*all)[i];
    char dur[32];
    std::snprintf(dur, sizeof(dur), "%.3f", c.total_duration_us);
    out += Cat(i == 0 ? "" : "; ", c.op_name, " [", c.task_type, ", ", c.count, " rows, ", dur,
               " us]");
  }
  if (all->size() > 10) out += Cat("; ... ", all->size() - 10, " more");
  return out;
}

// The metric fields of one row (N/A left out).
std::vector<std::pair<std::string, double>> Fields(const Columns& c, const std::vector<double>& v) {
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isnan(v[i])) out.emplace_back(c.names[i], v[i]);
  }
  return out;
}

// The larger of a row's aicore_time and aiv_time (0 when neither is a
// positive number), read by position: no copy of the row's fields.
double CoreTimeOfRow(const Columns& c, const std::vector<double>& values) {
  double best = 0;
  for (int at : {c.aicore_time, c.aiv_time}) {
    if (at >= 0 && std::isfinite(values[static_cast<size_t>(at)]))
      best = std::max(best, values[static_cast<size_t>(at)]);
  }
  return best;
}

// `all`: per field the median over the used rows, with its spread.
void Aggregate(const Columns& c, const std::vector<RawRow>& rows, SelectedTarget* out) {
  for (size_t i = 0; i < c.metric.size(); ++i) {
    std::vector<double> v;
    for (size_t u : out->used) {
      if (!std::isnan(rows[u].values[i])) v.push_back(rows[u].values[i]);
    }
    if (v.empty()) continue;
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    out->spread.push_back({c.names[i], {*lo, *hi}});
    out->row.fields.emplace_back(c.names[i], Median(v));
  }
  out->row.task_duration_us = Median(out->durations_us);
  const OpRow& first = rows[out->used.front()].identity;
  for (size_t u : out->used) {
    const OpRow& r = rows[u].identity;
    for (auto [what, same] : {std::pair{"Input Shapes", r.input_shapes == first.input_shapes},
                              {"Block Num", r.block_num == first.block_num},
                              {"Mix Block Num", r.mix_block_num == first.mix_block_num},
                              {"Task Type", r.task_type == first.task_type}}) {
      std::string w = Cat("launches of ", first.op_name, " differ in ", what,
                          "; --launch all aggregates them anyway");
      if (!same && std::find(out->warnings.begin(), out->warnings.end(), w) == out->warnings.end())
        out->warnings.push_back(w);
    }
  }
}

// Used rows that continue a task counted already: the Stream/Task ID of an
// earlier used row, starting before that task ends (+1 us), as when one task
// is written as several rows (PyPTO's PYPTO_<op>: 3 per launch). Ids alone
// would also join the launches 65,536 tasks apart that reuse them.
size_t ContinuedRows(const std::vector<LaunchInfo>& launches, const std::vector<size_t>& used) {
  std::map<std::pair<int64_t, int64_t>, int64_t> end_of;  // ids -> end of the task, ns
  size_t n = 0;
  for (size_t u : used) {
    const LaunchInfo& l = launches[u];
    if (!l.stream_id || !l.task_id || !l.start_ns) continue;
    const int64_t end = *l.start_ns + std::llround(l.duration_us * 1000.0);
    auto [it, fresh] = end_of.try_emplace({*l.stream_id, *l.task_id}, end);
    if (fresh) continue;
    if (*l.start_ns <= it->second + 1000) ++n;
    it->second = end;
  }
  return n;
}

}  // namespace

std::optional<double> OpRow::Get(std::string_view field) const {
  for (const auto& [name, value] : fields) {
    if (name == field) return value;
  }
  return std::nullopt;
}

double PrimaryCoreTime(const std::vector<std::pair<std::string, double>>& fields) {
  double best = 0;
  for (const auto& [name, value] : fields) {
    if ((name == "aicore_time(us)" || name == "aiv_time(us)") && std::isfinite(value) &&
        value > best)
      best = value;
  }
  return best;
}

std::vector<double> CompleteCoreTimes(std::vector<double> times) {
  for (double t : times) {
    if (!(t > 0) || !std::isfinite(t)) return {};
  }
  return times;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

absl::StatusOr<SelectedTarget> SelectTarget(const std::vector<fs::path>& parts,
                                            std::string_view op_name,
                                            const LaunchSelector& selector) {
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(parts);
  if (!opened.ok()) return opened.status();
  CsvSliceReader& csv = **opened;
  absl::StatusOr<Columns> cols = Locate(csv, parts.front());
  if (!cols.ok()) return cols.status();
  std::vector<RawRow> rows;
  while (true) {
    absl::StatusOr<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (csv.Cell(cols->op_name) != op_name) continue;
    absl::StatusOr<RawRow> row = MakeRow(csv, *cols);
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  if (rows.empty()) {
    return absl::NotFoundError(Cat("no row with Op Name == '", op_name, "' in ",
                                   parts.front().string(), "; candidates: ", CandidateList(parts)));
  }
  SelectedTarget out;
  for (const RawRow& r : rows) out.launches.push_back(r.launch);
  std::vector<size_t> perm = OrderLaunches(&out.launches);
  std::vector<RawRow> ordered;
  ordered.reserve(rows.size());
  for (size_t i : perm) ordered.push_back(std::move(rows[i]));
  absl::StatusOr<std::vector<size_t>> used =
      SelectLaunches(out.launches, selector, op_name, parts.front().string());
  if (!used.ok()) return used.status();
  out.used = *std::move(used);
  for (size_t u : out.used) out.durations_us.push_back(out.launches[u].duration_us);
  out.row = ordered[out.used.front()].identity;
  std::vector<double> cores;
  for (size_t u : out.used) cores.push_back(CoreTimeOfRow(*cols, ordered[u].values));
  out.core_times_us = CompleteCoreTimes(std::move(cores));
  if (selector.kind == LaunchSelector::Kind::kAll) {
    Aggregate(*cols, ordered, &out);
  } else {
    out.row.fields = Fields(*cols, ordered[out.used.front()].values);
  }
  if (size_t n = ContinuedRows(out.launches, out.used); n > 0) {
    out.warnings.push_back(Cat(n, " of the ", out.used.size(), " rows of ", op_name,
                               " used continue the task of an earlier row (same Stream ID and "
                               "Task ID, starting before it ends: one task written as several "
                               "rows, as PyPTO's PYPTO_<op>): each row counts as a launch here; "
                               "task_time has one row per task (list-op-names names it)"));
  }
  return out;
}

}  // namespace npuperf::evidence
