#include "evidence/per_core.h"

#include <algorithm>
#include <numeric>

#include <SQLiteCpp/SQLiteCpp.h>

#include "evidence/prof_layout.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

bool HasColumn(SQLite::Database& db, const char* table, const char* column) {
  SQLite::Statement q(db, Cat("PRAGMA table_info(", table, ")"));
  while (q.executeStep()) {
    if (q.getColumn(1).getString() == column) return true;
  }
  return false;
}

// A PROF_* directory (device_<id>/ inside) rather than an msprof --output.
bool HasDeviceDir(const fs::path& dir) {
  std::error_code ec;
  for (const fs::path& p : SortedChildren(dir, ec)) {
    if (internal::StartsWith(p.filename().string(), "device_")) return true;
  }
  return false;
}

BalanceVerdict VerdictOf(double spread_pct) {
  if (spread_pct < kSpreadWarningPct) return BalanceVerdict::kPass;
  if (spread_pct < kSpreadCriticalPct) return BalanceVerdict::kWarning;
  return BalanceVerdict::kCritical;
}

void SetStatus(PerCore* out, PerCoreStatus status, std::string detail = "") {
  out->status = status;
  out->status_detail = std::move(detail);
}

// Finds the sample db: of `device_id`, or of the only device holding one.
// On failure the reason is in out->status.
absl::StatusOr<DeviceDb> LocateDb(const fs::path& sample, std::string_view db_name, int device_id,
                                  PerCore* out) {
  std::error_code ec;
  if (!fs::is_directory(sample, ec)) {
    SetStatus(out, PerCoreStatus::kNoSampleRun);
    return absl::NotFoundError("no sample run");
  }
  absl::StatusOr<fs::path> prof = HasDeviceDir(sample) ? sample : FindSingleProfDir(sample);
  if (!prof.ok()) {
    SetStatus(out, prof.status().code() == absl::StatusCode::kNotFound
                       ? PerCoreStatus::kNoAicoreDb
                       : PerCoreStatus::kAmbiguousProfDir);
    return prof.status();
  }
  absl::StatusOr<std::vector<DeviceDb>> dbs = FindDeviceDbs(*prof, db_name);
  if (!dbs.ok()) {
    SetStatus(out, PerCoreStatus::kSqliteError, internal::Msg(dbs.status()));
    return dbs.status();
  }
  std::vector<DeviceDb> chosen;
  for (const DeviceDb& d : *dbs) {
    if (device_id < 0 || d.device_id == device_id) chosen.push_back(d);
  }
  if (chosen.empty()) {
    SetStatus(out, PerCoreStatus::kNoAicoreDb);
    return absl::NotFoundError("no db");
  }
  if (chosen.size() > 1) {
    SetStatus(out, PerCoreStatus::kAmbiguousAicoreDb, Cat(chosen.size()));
    return absl::FailedPreconditionError("ambiguous");
  }
  return chosen.front();
}

}  // namespace

absl::StatusOr<std::vector<CoreCycles>> ReadCoreCycles(const fs::path& path) {
  try {
    SQLite::Database db(path.string(), SQLite::OPEN_READONLY);
    std::string where = "CAST(task_cyc AS INTEGER) > 0 AND coreid IS NOT NULL";
    if (HasColumn(db, "AICoreOriginalData", "replayid")) where += " AND replayid = 0";
    SQLite::Statement q(db, Cat("SELECT coreid, SUM(CAST(task_cyc AS INTEGER)) FROM "
                                "AICoreOriginalData WHERE ",
                                where, " GROUP BY coreid ORDER BY coreid"));
    std::vector<CoreCycles> out;
    while (q.executeStep()) {
      CoreCycles c;
      c.core_id = q.getColumn(0).getInt();
      c.cycles = q.getColumn(1).getInt64();
      out.push_back(c);
    }
    return out;
  } catch (const std::exception& e) {
    return absl::InternalError(Cat(path.string(), ": ", e.what()));
  }
}

void ComputeBalance(std::vector<CoreCycles> cores, double core_time_us, PerCore* out) {
  int64_t max_cycles = 0;
  for (const CoreCycles& c : cores) max_cycles = std::max(max_cycles, c.cycles);
  out->ns_per_cycle = core_time_us * 1000.0 / static_cast<double>(max_cycles);
  out->freq_ghz = 1.0 / out->ns_per_cycle;
  double sum = 0;
  out->min_us = 1e300;
  out->max_us = 0;
  for (CoreCycles& c : cores) {
    c.time_us = static_cast<double>(c.cycles) * out->ns_per_cycle / 1000.0;
    out->min_us = std::min(out->min_us, c.time_us);
    out->max_us = std::max(out->max_us, c.time_us);
    sum += c.time_us;
  }
  size_t n = cores.size();
  out->avg_us = sum / static_cast<double>(n);
  out->spread_pct = out->max_us > 0 ? (out->max_us - out->min_us) / out->max_us * 100 : 0;
  out->verdict = VerdictOf(out->spread_pct);
  std::vector<CoreCycles> by_time = cores;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const CoreCycles& a, const CoreCycles& b) { return a.time_us > b.time_us; });
  out->slowest_cores.clear();
  out->fastest_cores.clear();
  for (size_t i = 0; i < n && i < 3; ++i) out->slowest_cores.push_back(by_time[i].core_id);
  for (size_t i = 0; i < n && i < 3; ++i) out->fastest_cores.push_back(by_time[n - 1 - i].core_id);
  if (n >= 4) {
    size_t half = n / 2;
    double a = 0, b = 0;
    for (size_t i = 0; i < n; ++i) (i < half ? a : b) += cores[i].time_us;
    a /= static_cast<double>(half);
    b /= static_cast<double>(n - half);
    double top = std::max(a, b);
    out->first_half_avg_us = a;
    out->second_half_avg_us = b;
    out->half_gap_pct = top > 0 ? std::abs(a - b) / top * 100 : 0;
    out->half_gap_hint = out->half_gap_pct >= kHalfGapHintPct;
  }
  out->cores = std::move(cores);
}

std::string_view SampleDbName(CoreType core_type) {
  return core_type == CoreType::kAiv ? "ai_vector_core.db" : "aicore.db";
}

PerCore LoadPerCore(const fs::path& sample_run, CoreType core_type, double core_time_us,
                    int device_id) {
  PerCore out;
  out.core_type = core_type;
  absl::StatusOr<DeviceDb> db = LocateDb(sample_run, SampleDbName(core_type), device_id, &out);
  if (!db.ok()) return out;
  out.device_id = db->device_id;
  out.db = db->path;
  absl::StatusOr<std::vector<CoreCycles>> cores = ReadCoreCycles(db->path);
  if (!cores.ok()) {
    SetStatus(&out, PerCoreStatus::kSqliteError, internal::Msg(cores.status()));
    return out;
  }
  if (cores->empty()) {
    SetStatus(&out, PerCoreStatus::kNoPositiveCoreCycles);
    return out;
  }
  if (!(core_time_us > 0)) {
    // Cycles are still worth keeping: per_core_cycles.csv needs no clock.
    out.cores = std::move(*cores);
    SetStatus(&out, PerCoreStatus::kNoCoreTime);
    return out;
  }
  ComputeBalance(std::move(*cores), core_time_us, &out);
  SetStatus(&out, PerCoreStatus::kProcessScopeUnattributed);
  return out;
}

std::string FormatCoreCyclesCsv(const PerCore& per_core) {
  std::string out = "coreid,task_cycles\n";
  for (const CoreCycles& c : per_core.cores) out += Cat(c.core_id, ",", c.cycles, "\n");
  return out;
}

}  // namespace npuperf::evidence
