#include "evidence/statistic.h"

#include <cmath>
#include <optional>
#include <utility>

#include "evidence/csv_reader.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

// Column indexes by name; every name in `required` must exist.
absl::StatusOr<std::vector<int>> Columns(const CsvSliceReader& csv, const fs::path& file,
                                         const std::vector<const char*>& required) {
  std::vector<int> out;
  for (const char* name : required) {
    int c = csv.Find(name);
    if (c < 0) return absl::InvalidArgumentError(Cat(file.string(), ": no '", name, "' column"));
    out.push_back(c);
  }
  return out;
}

// Numeric cells of the current row at `cols` (missing -> 0).
absl::StatusOr<std::vector<double>> Numbers(const CsvSliceReader& csv, const std::vector<int>& cols,
                                            size_t from) {
  std::vector<double> out;
  for (size_t i = from; i < cols.size(); ++i) {
    absl::StatusOr<std::optional<double>> v = csv.Number(cols[i]);
    if (!v.ok()) return v.status();
    out.push_back(v->value_or(0));
  }
  return out;
}

// Streams every row of `parts`, handing (reader, columns) to `row`.
template <typename Fn>
absl::Status ForEachRow(const std::vector<fs::path>& parts,
                        const std::vector<const char*>& required, Fn row) {
  absl::StatusOr<std::unique_ptr<CsvSliceReader>> opened = CsvSliceReader::Open(parts);
  if (!opened.ok()) return opened.status();
  absl::StatusOr<std::vector<int>> cols = Columns(**opened, parts.front(), required);
  if (!cols.ok()) return cols.status();
  while (true) {
    absl::StatusOr<bool> more = (*opened)->Next();
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    absl::Status s = row(**opened, *cols);
    if (!s.ok()) return s;
  }
}

}  // namespace

absl::StatusOr<std::vector<OpStatisticRow>> ReadOpStatistic(const std::vector<fs::path>& parts) {
  std::vector<OpStatisticRow> out;
  absl::Status s = ForEachRow(
      parts,
      {"OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
       "Max Time(us)", "Ratio(%)"},
      [&](const CsvSliceReader& csv, const std::vector<int>& c) -> absl::Status {
        absl::StatusOr<std::vector<double>> n = Numbers(csv, c, 2);
        if (!n.ok()) return n.status();
        const std::vector<double>& v = *n;
        out.push_back({std::string(csv.Cell(c[0])), std::string(csv.Cell(c[1])),
                       static_cast<int64_t>(std::llround(v[0])), v[1], v[2], v[3], v[4], v[5]});
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<ApiStatisticRow>> ReadApiStatistic(const std::vector<fs::path>& parts) {
  std::vector<ApiStatisticRow> out;
  absl::Status s = ForEachRow(
      parts,
      {"Level", "API Name", "Time(us)", "Count", "Avg(us)", "Min(us)", "Max(us)", "Variance"},
      [&](const CsvSliceReader& csv, const std::vector<int>& c) -> absl::Status {
        absl::StatusOr<std::vector<double>> n = Numbers(csv, c, 2);
        if (!n.ok()) return n.status();
        const std::vector<double>& v = *n;
        out.push_back({std::string(csv.Cell(c[0])), std::string(csv.Cell(c[1])),
                       static_cast<int64_t>(std::llround(v[1])), v[0], v[2], v[3], v[4], v[5]});
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return out;
}

}  // namespace npuperf::evidence
