#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/evidence.h"

namespace npuperf::evidence {

// `msprof op` output (OPPROF_*), msprof-output.md §2.7 / §3.8: the op's basic
// info plus one per-block CSV per metric (rows per block_id / sub_block_id,
// `NA` for missing, a trailing comma on every line in older versions).
// Layouts read:
//   flattened   OPPROF_*/OpBasicInfo.csv, <Metric>.csv, dump/op_basic_info.txt
//   official    OPPROF_*/[device<N>/]<OpName>/<launch>/{OpBasicInfo,<Metric>}_<ts>.csv
//               (one directory per launch of the kernel)
//   CANN 9.x    <dir>/<Metric>.csv, summary.jsonl (OpInfoSummary: Op Name, Task
//               Duration, Block Dim, Current/Rated Freq), HardwareInfo.jsonl
//               (chip, core counts, clocks); no OpBasicInfo.csv
// Stateless; thread-safe.

struct OpprofBasicInfo {
  std::string op_name, op_type;
  double task_duration_us = 0;
  int64_t block_dim = 0, mix_block_dim = 0;
  std::optional<double> current_freq_mhz, rated_freq_mhz;
  // Where the figures came from (OpBasicInfo.csv or summary.jsonl).
  std::filesystem::path file;
};

// What the run says about its device: dump/op_basic_info.txt "Run Soc
// Version", HardwareInfo.jsonl chip and AI Core counts and frequency.
struct OpprofHardware {
  std::string soc;
  std::optional<int> cube_cores, vector_cores;
  std::optional<double> cube_mhz;
  std::filesystem::path file;
};

// min / avg / max of one numeric column over the blocks that carry it.
struct ColumnStats {
  std::string column;  // canonical name (aic_cube_ratio -> aic_mac_ratio)
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

// One launch directory of an msprof op run.
struct OpprofSummary {
  std::filesystem::path data_dir;  // the directory holding the CSVs
  std::optional<OpprofBasicInfo> basic;
  OpprofHardware hardware;
  // The groups found, in SevenMetrics() order (any subset is a valid capture).
  std::vector<OpprofMetric> metrics;
  // The seven groups this launch has no CSV of (msprof op --aic-metrics=<subset>).
  std::vector<std::string> missing;
  // Longest block time (max of aic_time(us) / aiv_time(us) maxima).
  double max_core_time_us = 0;
};

// Reads `dir` (an OPPROF_* directory, a directory holding exactly one, or a
// CANN 9.x capture directory). Any subset of the metric CSVs is read (the
// absent groups listed in `missing`). Errors: NotFound when no launch file
// is present, or "OpBasicInfo.csv not found in <dir>" for a launch without
// it (nor summary.jsonl); several launch directories (use
// ReadOpprofLaunches); malformed CSV (file/line/column).
absl::StatusOr<OpprofSummary> ReadOpprof(const std::filesystem::path& dir);

// Every launch directory under `dir`, in path order (the official layout
// numbers them 0, 1, ...); one element for the flattened layouts.
absl::StatusOr<std::vector<OpprofSummary>> ReadOpprofLaunches(const std::filesystem::path& dir);

// The evidence of `options.op_name` from an msprof op run (seeded `ev`
// carries the input record): identity and Task Duration from the basic
// info; per metric the block average of every column (aicore_time /
// aiv_time: the longest block); the DVFS check on Current vs Rated Freq
// (the capture's own rated clock wins over the SoC table); launches picked
// by options.launch among the launch directories. NotFound when the run
// profiled another kernel.
absl::StatusOr<Evidence> OpprofEvidence(const std::filesystem::path& dir,
                                        const BuildOptions& options, Evidence ev);

}  // namespace npuperf::evidence
