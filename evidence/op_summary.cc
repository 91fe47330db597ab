#include "evidence/op_summary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>

#include "evidence/csv_reader.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

constexpr std::array<std::string_view, 25> kIdentityColumns = {"Device_id",
                                                               "Model Name",
                                                               "Model ID",
                                                               "Task ID",
                                                               "Stream ID",
                                                               "Infer ID",
                                                               "Op Name",
                                                               "OP Type",
                                                               "OP State",
                                                               "Task Type",
                                                               "Task Start Time(us)",
                                                               "Task Start Time",
                                                               "Task Duration(us)",
                                                               "Task Wait Time(us)",
                                                               "Block Num",
                                                               "Block Dim",
                                                               "Mix Block Num",
                                                               "Mix Block Dim",
                                                               "HF32 Eligible",
                                                               "Input Shapes",
                                                               "Input Data Types",
                                                               "Input Formats",
                                                               "Output Shapes",
                                                               "Output Data Types",
                                                               "Output Formats"};

struct Columns {
  int op_name = -1, op_type = -1, task_type = -1, duration = -1;
  int block = -1, mix_block = -1, shapes = -1, dtypes = -1, formats = -1;
};

absl::StatusOr<Columns> Locate(const CsvSliceReader& csv, const fs::path& file) {
  Columns c;
  c.op_name = csv.Find("Op Name");
  if (c.op_name < 0) return absl::InvalidArgumentError(Cat(file.string(), ": no 'Op Name' column"));
  c.op_type = csv.Find("OP Type");
  c.task_type = csv.Find("Task Type");
  c.duration = csv.Find("Task Duration(us)");
  c.block = csv.FindAny({"Block Num", "Block Dim"});
  c.mix_block = csv.FindAny({"Mix Block Num", "Mix Block Dim"});
  c.shapes = csv.Find("Input Shapes");
  c.dtypes = csv.Find("Input Data Types");
  c.formats = csv.Find("Input Formats");
  return c;
}

std::string CellOr(const CsvSliceReader& csv, int col) {
  return col < 0 ? std::string() : std::string(csv.Cell(col));
}

std::string CanonicalField(std::string_view name) {
  if (name == "aic_cube_ratio") return "aic_mac_ratio";
  if (name == "aic_cube_time(us)") return "aic_mac_time(us)";
  return std::string(name);
}

absl::StatusOr<std::optional<int64_t>> IntCell(const CsvSliceReader& csv, int col) {
  absl::StatusOr<std::optional<double>> v = csv.Number(col);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return std::optional<int64_t>();
  if (std::abs(**v) > 9e15) return csv.ErrorAt(col, "integer out of range");
  return std::optional<int64_t>(static_cast<int64_t>(std::llround(**v)));
}

absl::StatusOr<OpRow> MakeRow(const CsvSliceReader& csv, const Columns& c) {
  OpRow row;
  row.op_name = CellOr(csv, c.op_name);
  row.op_type = CellOr(csv, c.op_type);
  row.task_type = CellOr(csv, c.task_type);
  row.input_shapes = CellOr(csv, c.shapes);
  row.input_data_types = CellOr(csv, c.dtypes);
  row.input_formats = CellOr(csv, c.formats);
  row.file = csv.current_path();
  absl::StatusOr<std::optional<double>> d = csv.Number(c.duration);
  if (!d.ok()) return d.status();
  row.task_duration_us = *d;
  absl::StatusOr<std::optional<int64_t>> b = IntCell(csv, c.block);
  if (!b.ok()) return b.status();
  row.block_num = *b;
  absl::StatusOr<std::optional<int64_t>> mb = IntCell(csv, c.mix_block);
  if (!mb.ok()) return mb.status();
  row.mix_block_num = *mb;
  const std::vector<std::string>& header = csv.header();
  for (size_t i = 0; i < header.size(); ++i) {
    if (IsIdentityColumn(header[i]) || header[i] == "Context ID") continue;
    absl::StatusOr<std::optional<double>> v = csv.Number(static_cast<int>(i));
    if (!v.ok()) return v.status();
    if (v->has_value()) row.fields.emplace_back(CanonicalField(header[i]), **v);
  }
  return row;
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

}  // namespace

std::optional<double> OpRow::Get(std::string_view field) const {
  for (const auto& [name, value] : fields) {
    if (name == field) return value;
  }
  return std::nullopt;
}

bool IsIdentityColumn(std::string_view column) {
  return std::find(kIdentityColumns.begin(), kIdentityColumns.end(), column) !=
         kIdentityColumns.end();
}

absl::StatusOr<OpRow> SelectTargetRow(const std::vector<fs::path>& parts,
                                      std::string_view op_name) {
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(parts);
  if (!opened.ok()) return opened.status();
  CsvSliceReader& csv = **opened;
  absl::StatusOr<Columns> cols = Locate(csv, parts.front());
  if (!cols.ok()) return cols.status();
  std::optional<OpRow> found;
  std::vector<std::string> matches;
  while (true) {
    absl::StatusOr<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (csv.Cell(cols->op_name) != op_name) continue;
    matches.push_back(csv.Where());
    if (matches.size() > 1) continue;
    absl::StatusOr<OpRow> row = MakeRow(csv, *cols);
    if (!row.ok()) return row.status();
    row->line = csv.line();
    found = std::move(*row);
  }
  if (matches.empty()) {
    return absl::NotFoundError(Cat("no row with Op Name == '", op_name, "' in ",
                                   parts.front().string(), "; candidates: ", CandidateList(parts)));
  }
  if (matches.size() > 1) {
    std::string where;
    for (size_t i = 0; i < matches.size() && i < 10; ++i) where += Cat(i ? ", " : "", matches[i]);
    return absl::FailedPreconditionError(
        Cat("expected exactly one row for op_name=", op_name, "; found ", matches.size(), " (",
            where, "). Use a runner that emits one measured target launch per profiling process."));
  }
  return std::move(*found);
}

absl::StatusOr<std::vector<OpCandidate>> ListCandidates(const std::vector<fs::path>& parts) {
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(parts);
  if (!opened.ok()) return opened.status();
  CsvSliceReader& csv = **opened;
  absl::StatusOr<Columns> cols = Locate(csv, parts.front());
  if (!cols.ok()) return cols.status();
  std::map<std::pair<std::string, std::string>, OpCandidate> groups;
  while (true) {
    absl::StatusOr<bool> more = csv.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    std::string name(csv.Cell(cols->op_name));
    if (name.empty()) continue;
    std::string type = CellOr(csv, cols->task_type);
    OpCandidate& g = groups[{name, type}];
    g.op_name = name;
    g.task_type = type;
    ++g.count;
    absl::StatusOr<std::optional<double>> d = csv.Number(cols->duration);
    if (!d.ok()) return d.status();
    if (d->has_value() && **d > 0) g.total_duration_us += **d;
  }
  std::vector<OpCandidate> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const OpCandidate& a, const OpCandidate& b) {
    return a.total_duration_us > b.total_duration_us;
  });
  return out;
}

std::string FormatCandidatesTsv(const std::vector<OpCandidate>& candidates) {
  std::string out = "count\ttask_type\ttotal_duration_us\texact_op_name\n";
  for (const OpCandidate& c : candidates) {
    char dur[64];
    std::snprintf(dur, sizeof(dur), "%.6f", c.total_duration_us);
    out += Cat(c.count, "\t", c.task_type, "\t", dur, "\t", c.op_name, "\n");
  }
  return out;
}

}  // namespace npuperf::evidence
