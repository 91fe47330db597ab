#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "SQLiteCpp/Database.h"
#include "absl/status/statusor.h"
#include "sim/device_model.h"
#include "sim/pmu_columns.h"
#include "sim/soc.h"

namespace npuperf::sim {

// Sample-based PMU collection (--aic-mode=sample-based): every core is sampled
// every 1/aic_freq seconds over the whole process, whether or not it ran
// anything, so every kernel (target or incidental) contributes to the per-core
// load. Writes device_<id>/sqlite/aicore.db (cube cores) and
// ai_vector_core.db (vector cores) with AICoreOriginalData + MetricSummary,
// and ai_core_utilization_*.csv / ai_vector_core_utilization_*.csv.
// Not thread-safe.
class SampleCollector {
 public:
  SampleCollector(const SocSpec& soc, MetricGroup group, int freq_hz, int64_t start_ns);

  // Attributes one task, started at `start_ns` (unix ns), to its cores' slices.
  void Add(int64_t start_ns, const KernelResult& r);

  // Writes the databases (unless `omit_db`) and CSVs (<table><suffix>.csv in
  // output_dir); returns the number of AICoreOriginalData rows written.
  absl::StatusOr<int64_t> Write(const std::filesystem::path& device_dir,
                                const std::filesystem::path& output_dir, const std::string& suffix,
                                int device, int64_t end_ns, bool omit_db) const;

 private:
  struct Side {
    int cores = 0;
    std::vector<double> slots;      // [slice][core][1 + events]: task_cyc, event1..N
    std::vector<CoreStats> totals;  // per core, whole process
  };
  void AddSide(Side& side, int64_t start_ns, const CoreStats& c, double freq_mhz, bool cube);
  void EnsureSlices(Side& side, int64_t slices);
  absl::Status WriteDb(const Side& side, const std::filesystem::path& path, int64_t slices,
                       bool cube, int64_t* rows) const;
  void WriteSummary(SQLite::Database& db, const Side& side, bool cube) const;
  absl::Status WriteCsv(const Side& side, const std::filesystem::path& path, int device,
                        bool cube) const;
  std::vector<std::string> SummaryMetrics(bool cube) const;

  SocSpec soc_;
  MetricGroup group_;
  int64_t slice_ns_;
  int64_t start_ns_;
  int events_;
  Side aic_, aiv_;
};

}  // namespace npuperf::sim
