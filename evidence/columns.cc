#include "evidence/columns.h"

#include <algorithm>
#include <array>

namespace npuperf::evidence {
namespace {

constexpr std::array<std::string_view, 24> kIdentityColumns = {
    "Device_id",         "Model Name",         "Model ID",         "Task ID",
    "Stream ID",         "Infer ID",           "Step Id",          "Op Name",
    "OP Type",           "OP State",           "Task Type",        "Task Start Time(us)",
    "Task Duration(us)", "Task Wait Time(us)", "Block Num",        "Mix Block Num",
    "HF32 Eligible",     "Input Shapes",       "Input Data Types", "Input Formats",
    "Output Shapes",     "Output Data Types",  "Output Formats",   "Context ID"};

const ColumnAlias* AliasOf(std::string_view name) {
  for (const ColumnAlias& a : OpSummaryColumns()) {
    if (a.canonical == name) return &a;
    if (std::find(a.also.begin(), a.also.end(), name) != a.also.end()) return &a;
  }
  return nullptr;
}

}  // namespace

const std::vector<ColumnAlias>& OpSummaryColumns() {
  static const auto* const kTable = new std::vector<ColumnAlias>{
      {"Op Name", {"Name"}},
      {"OP Type", {"Type"}},
      {"Task Type", {"Accelerator Core"}},
      {"Task Start Time(us)", {"Start Time(us)", "Task Start Time"}},
      {"Task Duration(us)", {"Duration(us)"}},
      {"Task Wait Time(us)", {"Wait Time(us)"}},
      {"Task ID", {"Task Id"}},
      {"Stream ID", {"Stream Id"}},
      {"Block Num", {"Block Dim"}},
      {"Mix Block Num", {"Mix Block Dim"}},
      {"aic_mac_ratio", {"aic_cube_ratio"}},
      {"aic_mac_time(us)", {"aic_cube_time(us)"}},
  };
  return *kTable;
}

int FindColumn(const CsvSliceReader& csv, std::string_view canonical) {
  int c = csv.Find(canonical);
  if (c >= 0) return c;
  const ColumnAlias* a = AliasOf(canonical);
  if (a == nullptr) return -1;
  for (std::string_view name : a->also) {
    c = csv.Find(name);
    if (c >= 0) return c;
  }
  return csv.Find(a->canonical);
}

std::string CanonicalColumn(std::string_view name) {
  const ColumnAlias* a = AliasOf(name);
  return std::string(a == nullptr ? name : a->canonical);
}

bool IsIdentityColumn(std::string_view column) {
  std::string canonical = CanonicalColumn(column);
  return std::find(kIdentityColumns.begin(), kIdentityColumns.end(), canonical) !=
         kIdentityColumns.end();
}

}  // namespace npuperf::evidence
