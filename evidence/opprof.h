#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/evidence.h"

namespace npuperf::evidence {

// `msprof op` output (OPPROF_*), msprof-output.md §2.7 / §3.8: OpBasicInfo.csv
// plus one per-block CSV per metric (rows per block_id / sub_block_id, `NA`
// for missing, trailing comma on every line). Both the flattened layout
// (OPPROF_*/OpBasicInfo.csv) and the official one
// (OPPROF_*/[device<N>/]<OpName>/<launch>/<Metric>_<ts>.csv) are read.
// Stateless; thread-safe.

struct OpprofBasicInfo {
  std::string op_name, op_type;
  double task_duration_us = 0;
  int64_t block_dim = 0, mix_block_dim = 0;
  std::optional<double> current_freq_mhz, rated_freq_mhz;
};

// min / avg / max of one numeric column over the blocks that carry it.
struct ColumnStats {
  std::string column;
  double min = 0, avg = 0, max = 0;
  size_t n = 0;
};

struct OpprofMetric {
  std::string metric;  // "PipeUtilization", ...
  std::filesystem::path file;
  size_t rows = 0;
  std::vector<ColumnStats> columns;  // CSV order

  const ColumnStats* Find(std::string_view column) const;
};

struct OpprofSummary {
  std::filesystem::path data_dir;  // the directory holding OpBasicInfo.csv
  std::optional<OpprofBasicInfo> basic;
  std::vector<OpprofMetric> metrics;  // PipeUtilization first, then the others found
  // Longest block time (max of aic_time(us) / aiv_time(us) maxima), and
  // Task Duration minus it.
  double max_core_time_us = 0;
  double head_overhead_us = 0;
  // Current vs Rated Freq from OpBasicInfo (the only clock msprof op gives).
  DvfsCheck dvfs;
};

// Reads `dir` (an OPPROF_* directory, or a directory holding exactly one).
// Errors: NotFound "PipeUtilization.csv not found in <dir>", several
// OpBasicInfo.csv found, malformed CSV (file/line/column).
absl::StatusOr<OpprofSummary> ReadOpprof(const std::filesystem::path& dir,
                                         double dvfs_tolerance_pct = 5);

}  // namespace npuperf::evidence
