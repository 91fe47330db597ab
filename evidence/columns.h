#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evidence/csv_reader.h"

namespace npuperf::evidence {

// The one table of column names: for every column npuperf reads, its
// canonical name (op_summary's, CANN 8.5 spelling) and the names other
// variants write for the same thing (docs/evidence.md "Column names"):
//
//   canonical              also read as
//   Op Name                Name (torch_npu kernel_details)
//   OP Type                Type (kernel_details)
//   Task Type              Accelerator Core (kernel_details)
//   Task Start Time(us)    Start Time(us) (kernel_details), Task Start Time (CANN 5/6)
//   Task Duration(us)      Duration(us) (kernel_details)
//   Task Wait Time(us)     Wait Time(us) (kernel_details)
//   Task ID, Stream ID     Task Id, Stream Id (torch_npu)
//   Block Num              Block Dim (CANN <= 8.3, kernel_details, msprof op)
//   Mix Block Num          Mix Block Dim
//   aic_mac_ratio          aic_cube_ratio (msprof op)
//   aic_mac_time(us)       aic_cube_time(us) (msprof op)
//
// and for task_time (quick mode):
//
//   kernel_name            Op Name (pre-CANN-6 task_time)
//   kernel_type            Type (pre-CANN-6 task_time)
//
// Pure data and lookups; thread-safe.

// One canonical column and its aliases.
struct ColumnAlias {
  std::string_view canonical;
  std::vector<std::string_view> also;
};

// The op_summary / kernel_details aliases above, canonical first.
const std::vector<ColumnAlias>& OpSummaryColumns();

// Index in `csv` of `canonical` or of one of its aliases in OpSummaryColumns(),
// or -1. A name that is not in the table is looked up as given.
int FindColumn(const CsvSliceReader& csv, std::string_view canonical);

// The canonical spelling of a header name (an alias maps to its canonical
// name; anything else is returned unchanged).
std::string CanonicalColumn(std::string_view name);

// True for identity (non-metric) columns of op_summary and kernel_details,
// by canonical or alias name: Device_id, Model ID/Name, Task/Stream ID,
// Infer ID, Step Id, the op and task names and types, times, block counts,
// HF32 Eligible, shapes, dtypes, formats and Context ID.
bool IsIdentityColumn(std::string_view column);

}  // namespace npuperf::evidence
