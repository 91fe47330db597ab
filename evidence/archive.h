#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evidence/evidence.h"
#include "evidence/summary_text.h"

namespace npuperf::evidence {

// The per-round archive of one standard-mode summarize:
//
//   <ops_dir>/docs/perf/round_NNN/
//     op_summary_<Metric>.csv        ×7 (any layout of layout.h) (slices:
//     op_summary_<Metric>_slice_<k>.csv) op_statistic_<Metric>.csv, task_time_<Metric>.csv,
//     api_statistic_<Metric>.csv per_core_cycles.csv            coreid,task_cycles (dominant core
//     type) summary.txt, evidence.json, evidence_status.json
//
// Stateless functions; safe to call from several processes at once (round
// reservation is an atomic mkdir).

// True for "round_" followed by at least one digit and nothing else.
bool IsValidRoundName(std::string_view name);

// Creates and returns <ops_dir>/docs/perf/<round>: `round_name` when given
// (InvalidArgument if malformed, AlreadyExists if present — never reused),
// else the lowest free round_NNN from round_001 (fills gaps; safe under races).
absl::StatusOr<std::filesystem::path> ReserveRound(const std::filesystem::path& ops_dir,
                                                   std::string_view round_name);

// Writes `content` to `path` through a temp file, fsync and rename.
absl::Status WriteFileAtomic(const std::filesystem::path& path, std::string_view content);

// Copies the CSVs of every metric run present in `prof_group` into
// `round_dir` as listed above. Returns the number of files copied.
absl::StatusOr<int> ArchiveGroupCsvs(const std::filesystem::path& prof_group,
                                     const std::filesystem::path& round_dir);

// The CSVs of whatever `ev.prof_group` holds (layout.h): a group as
// ArchiveGroupCsvs; one msprof run or torch_npu export as
// <table>_<group>.csv (kernel_details_<group>.csv for torch_npu, <group> the
// metric group read); an msprof op run as opprof_<Metric>.csv per metric CSV
// read. Returns the number of files copied.
absl::StatusOr<int> ArchiveInputCsvs(const Evidence& ev, const std::filesystem::path& round_dir);

// ArchiveInputCsvs + per_core_cycles.csv + summary.txt (in `lang`) +
// evidence.json + evidence_status.json. Returns the number of CSVs written
// (the copies plus per_core_cycles.csv when written).
absl::StatusOr<int> WriteRound(const Evidence& ev, const std::filesystem::path& round_dir,
                               Lang lang);

}  // namespace npuperf::evidence
