#include "sim/sample_db.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "SQLiteCpp/SQLiteCpp.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "sim/format.h"

namespace npuperf::sim {
namespace {

// Per-kernel fraction of busy cycles that each sampled event counts, in
// event order (PipeUtilization event sets; A5 samples two more events).
std::vector<double> EventShares(const CoreStats& c, bool cube, int events) {
  double t = c.total_cycles > 0 ? c.total_cycles : 1;
  std::vector<double> s;
  if (cube) {  // 0x416 0x417 0x9 0x302 0xc 0x303 0x54 0x55 [0xd 0x64]
    s = {c.mac_fp16 / t,          c.mac_int8 / t,
         c.pipe[kPipeScalar] / t, c.pipe[kPipeMte1] / t,
         c.pipe[kPipeMte2] / t,   c.pipe[kPipeFixpipe] / t,
         c.icache_req / t,        c.icache_miss / t,
         c.pipe[kPipeMte3] / t,   0.0};
  } else {  // 0x8 0xa 0x9 0xb 0xc 0xd 0x54 0x55 [0x64 0x66]
    s = {c.pipe[kPipeVec] / t,  c.pipe[kPipeMac] / t,  c.pipe[kPipeScalar] / t,
         c.pipe[kPipeMte1] / t, c.pipe[kPipeMte2] / t, c.pipe[kPipeMte3] / t,
         c.icache_req / t,      c.icache_miss / t,     c.bankgroup_stall / t,
         c.resc_stall / t};
  }
  s.resize(events);
  return s;
}

}  // namespace

SampleCollector::SampleCollector(const SocSpec& soc, MetricGroup group, int freq_hz,
                                 int64_t start_ns)
    : soc_(soc),
      group_(group),
      slice_ns_(1'000'000'000LL / std::max(1, freq_hz)),
      start_ns_(start_ns),
      events_(soc.pmu_events) {
  aic_.cores = soc.cube_cores;
  aiv_.cores = soc.vector_cores;
  aic_.totals.resize(aic_.cores);
  aiv_.totals.resize(aiv_.cores);
}

void SampleCollector::EnsureSlices(Side& side, int64_t slices) {
  size_t need = static_cast<size_t>(slices) * side.cores * (1 + events_);
  if (side.slots.size() < need) side.slots.resize(need, 0.0);
}

void SampleCollector::Add(int64_t start_ns, const KernelResult& r) {
  if (!r.has_pmu) return;
  if (r.aic.blocks > 0) AddSide(aic_, start_ns, r.aic, r.freq_mhz, true);
  if (r.aiv.blocks > 0) AddSide(aiv_, start_ns, r.aiv, r.freq_mhz, false);
}

void SampleCollector::AddSide(Side& side, int64_t start_ns, const CoreStats& c, double freq_mhz,
                              bool cube) {
  std::vector<double> shares = EventShares(c, cube, events_);
  int stride = 1 + events_;
  for (int core = 0; core < side.cores; ++core) {
    double cycles = c.core_cycles[core];
    if (cycles <= 0) continue;
    AddScaled(side.totals[core], c, cycles / c.total_cycles);
    int64_t begin = start_ns - start_ns_;
    int64_t end = begin + static_cast<int64_t>(cycles / freq_mhz * 1000.0);
    EnsureSlices(side, end / slice_ns_ + 1);
    for (int64_t s = std::max<int64_t>(0, begin / slice_ns_); s * slice_ns_ < end; ++s) {
      int64_t lo = std::max(begin, s * slice_ns_), hi = std::min(end, (s + 1) * slice_ns_);
      double in_slice = (hi - lo) * freq_mhz / 1000.0;
      double* slot = &side.slots[(static_cast<size_t>(s) * side.cores + core) * stride];
      slot[0] += in_slice;
      for (int e = 0; e < events_; ++e) slot[1 + e] += in_slice * shares[e];
    }
  }
}

absl::Status SampleCollector::WriteDb(const Side& side, const std::filesystem::path& path,
                                      int64_t slices, bool cube, int64_t* rows) const {
  std::filesystem::remove(path);
  SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  std::string cols =
      "mode INTEGER, replayid INTEGER, timestamp NUMERIC, coreid INTEGER, task_cyc TEXT";
  std::string marks = "0, 0, ?, ?, ?";
  for (int e = 1; e <= events_; ++e) {
    absl::StrAppend(&cols, ", event", e, " TEXT");
    marks += ", ?";
  }
  db.exec(absl::StrCat("CREATE TABLE AICoreOriginalData(", cols, ")"));
  db.exec("CREATE TABLE MetricSummary(metric text, value numeric, coreid INT)");
  SQLite::Transaction tx(db);
  SQLite::Statement ins(db, absl::StrCat("INSERT INTO AICoreOriginalData VALUES(", marks, ")"));
  int stride = 1 + events_;
  size_t have = side.slots.size() / stride / std::max(1, side.cores);
  for (int64_t s = 0; s < slices; ++s) {
    for (int core = 0; core < side.cores; ++core) {
      const double* slot = static_cast<size_t>(s) < have
                               ? &side.slots[(static_cast<size_t>(s) * side.cores + core) * stride]
                               : nullptr;
      ins.bind(1, static_cast<int64_t>(start_ns_ + (s + 1) * slice_ns_));
      ins.bind(2, core);
      for (int k = 0; k < stride; ++k)
        ins.bind(3 + k, static_cast<int64_t>(std::llround(slot ? slot[k] : 0.0)));
      ins.exec();
      ins.reset();
      ++*rows;
    }
  }
  WriteSummary(db, side, cube);
  tx.commit();
  return absl::OkStatus();
}

void SampleCollector::WriteSummary(SQLite::Database& db, const Side& side, bool cube) const {
  SQLite::Statement sum(db, "INSERT INTO MetricSummary VALUES(?, ?, ?)");
  for (int core = 0; core < side.cores; ++core) {
    const CoreStats& c = side.totals[core];
    double t_us = c.total_cycles / soc_.freq_mhz;
    std::vector<std::pair<std::string, double>> m = {{"total_time(ms)", t_us / 1000.0},
                                                     {"total_cycles", c.total_cycles}};
    for (const std::string& name : SummaryMetrics(cube)) {
      absl::StatusOr<double> v = CoreMetricByName(name, c, t_us);
      if (v.ok()) m.push_back({name, *v});
    }
    for (const auto& [name, v] : m) {
      sum.bind(1, name);
      sum.bind(2, std::round(v * 1000) / 1000);
      sum.bind(3, core);
      sum.exec();
      sum.reset();
    }
  }
}

std::vector<std::string> SampleCollector::SummaryMetrics(bool cube) const {
  if (group_ == MetricGroup::kPipeUtilization) {
    if (cube)
      return {"mac_ratio",  "scalar_ratio",  "mte1_ratio",
              "mte2_ratio", "fixpipe_ratio", "icache_miss_rate"};
    return {"vec_ratio",  "mac_ratio",  "scalar_ratio",    "mte1_ratio",
            "mte2_ratio", "mte3_ratio", "icache_miss_rate"};
  }
  std::vector<std::string> out;
  std::string prefix = cube ? "aic_" : "aiv_";
  for (const std::string& h : PmuHeader(group_, soc_.family)) {
    std::string bare = h;
    for (absl::string_view unit : {"(us)", "(GB/s)", "(KB)"}) {
      if (absl::EndsWith(bare, unit)) bare.resize(bare.size() - unit.size());
    }
    if (!absl::StartsWith(bare, prefix)) continue;
    bare = bare.substr(prefix.size());
    if (bare == "time" || bare == "total_cycles" || absl::EndsWith(bare, "_time")) continue;
    out.push_back(bare);
  }
  return out;
}

absl::Status SampleCollector::WriteCsv(const Side& side, const std::filesystem::path& path,
                                       int device, bool cube) const {
  std::vector<std::string> metrics = SummaryMetrics(cube);
  bool bound = group_ == MetricGroup::kPipeUtilization && !cube;
  std::ofstream out(path);
  out << "Device_id,Core ID";
  for (const std::string& m : metrics)
    out << "," << (absl::StrContains(m, "_bw") ? m + "(GB/s)" : m);
  out << (bound ? ",memory_bound\n" : "\n");
  std::vector<double> avg(metrics.size() + 1, 0.0);
  for (int core = 0; core < side.cores; ++core) {
    const CoreStats& c = side.totals[core];
    double t_us = c.total_cycles / soc_.freq_mhz;
    out << device << ",Core" << core;
    for (size_t i = 0; i < metrics.size(); ++i) {
      double v = CoreMetricByName(metrics[i], c, t_us).value_or(0.0);
      avg[i] += v / side.cores;
      out << "," << Shortest3(v);
    }
    if (bound) {
      double denom = std::max(c.pipe[kPipeMac], c.pipe[kPipeVec]);
      out << ","
          << (denom > 0 && c.pipe[kPipeMte2] > 0 ? Shortest3(c.pipe[kPipeMte2] / denom) : "N/A");
    }
    out << "\n";
  }
  out << device << ",Average";
  for (size_t i = 0; i < metrics.size(); ++i) out << "," << Fixed(avg[i], 3);
  out << (bound ? ",N/A\n" : "\n");
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path.string()));
}

absl::StatusOr<int64_t> SampleCollector::Write(const std::filesystem::path& device_dir,
                                               const std::filesystem::path& output_dir,
                                               const std::string& suffix, int device,
                                               int64_t end_ns, bool omit_db) const {
  int64_t slices = std::max<int64_t>(1, (end_ns - start_ns_ + slice_ns_ - 1) / slice_ns_);
  int64_t rows = 0;
  std::filesystem::create_directories(device_dir / "sqlite");
  try {
    if (!omit_db) {
      absl::Status s = WriteDb(aic_, device_dir / "sqlite" / "aicore.db", slices, true, &rows);
      if (s.ok())
        s = WriteDb(aiv_, device_dir / "sqlite" / "ai_vector_core.db", slices, false, &rows);
      if (!s.ok()) return s;
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("writing sample databases: ", e.what()));
  }
  absl::Status s = WriteCsv(aic_, output_dir / absl::StrCat("ai_core_utilization", suffix, ".csv"),
                            device, true);
  if (s.ok())
    s = WriteCsv(aiv_, output_dir / absl::StrCat("ai_vector_core_utilization", suffix, ".csv"),
                 device, false);
  if (!s.ok()) return s;
  return rows;
}

}  // namespace npuperf::sim
