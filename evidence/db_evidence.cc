#include "evidence/db_evidence.h"

#include <algorithm>
#include <cmath>

#include "evidence/derived.h"
#include "evidence/kernel_names.h"
#include "evidence/str_util.h"
#include "evidence/unified_db.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

bool Empty(const std::string& s) { return s.empty() || s == "N/A"; }

bool IsTimeField(const std::string& name) { return internal::EndsWith(name, "time(us)"); }

// Identity cells the CSV left empty, from the db row.
int FillIdentity(const OpRow& db, OpRow* row) {
  int filled = 0;
  for (auto [mine, theirs] : {std::pair{&row->task_type, &db.task_type},
                              {&row->op_type, &db.op_type},
                              {&row->input_shapes, &db.input_shapes},
                              {&row->input_data_types, &db.input_data_types},
                              {&row->input_formats, &db.input_formats}}) {
    if (Empty(*mine) && !Empty(*theirs)) {
      *mine = *theirs;
      ++filled;
    }
  }
  for (auto [mine, theirs] :
       {std::pair{&row->block_num, &db.block_num}, {&row->mix_block_num, &db.mix_block_num}}) {
    if (mine->value_or(0) == 0 && theirs->value_or(0) != 0) {
      *mine = *theirs;
      ++filled;
    }
  }
  return filled;
}

// Metric cells the CSV left missing or zero, from the db row.
int FillFields(const OpRow& db, OpRow* row) {
  int filled = 0;
  for (const auto& field : db.fields) {
    const auto& name = field.first;
    const auto& value = field.second;
    auto it = std::find_if(row->fields.begin(), row->fields.end(),
                           [&name](const auto& f) { return f.first == name; });
    if (it == row->fields.end()) {
      row->fields.emplace_back(name, value);
      ++filled;
    } else if (it->second == 0 && value != 0) {
      it->second = value;
      ++filled;
    }
  }
  return filled;
}

// The launch window of the used launches: [first start, last end] in ns.
std::optional<std::pair<int64_t, int64_t>> UsedWindow(const Evidence& ev) {
  int64_t lo = 0, hi = 0;
  bool any = false;
  for (const LaunchInfo& l : ev.launch.used) {
    if (!l.start_ns) return std::nullopt;
    int64_t end = *l.start_ns + std::llround(l.duration_us * 1000.0);
    lo = any ? std::min(lo, *l.start_ns) : *l.start_ns;
    hi = any ? std::max(hi, end) : end;
    any = true;
  }
  if (!any) return std::nullopt;
  return std::pair{lo, hi};
}

// One side's core time from its cycles; 0 when a figure is missing.
double SideTime(double cycles, double mhz, int64_t blocks, int cores) {
  // Without Block Num the time lies anywhere between cycles / (clock x cores)
  // and cycles / clock: not derived.
  if (!(cycles > 0) || !(mhz > 0) || blocks <= 0) return 0;
  double waves = cores > 0 ? std::ceil(static_cast<double>(blocks) / cores) : 1;
  return cycles / mhz / static_cast<double>(blocks) * waves;
}

}  // namespace

bool IsLevel0Row(const OpRow& row) {
  if (Empty(row.task_type) || Empty(row.op_type)) return true;
  bool time_zero = true, cycles = false;
  for (const auto& [name, value] : row.fields) {
    if (IsTimeField(name) && value != 0) time_zero = false;
    if (internal::EndsWith(name, "_total_cycles") && value > 0) cycles = true;
  }
  return time_zero && cycles;
}

absl::StatusOr<SelectedTarget> SelectRunTarget(const RunLayout& run, const BuildOptions& options,
                                               Evidence* ev) {
  ev->unified_db = run.unified_db;
  if (!run.op_summary.empty()) {
    absl::StatusOr<SelectedTarget> t =
        SelectTarget(run.op_summary, options.op_name, options.launch);
    if (absl::IsNotFound(t.status())) {  // task_time's name of an op_summary kernel?
      return absl::NotFoundError(
          Cat(internal::Msg(t.status()), OtherNameHint(run, options.op_name)));
    }
    if (!t.ok()) return t;
    std::string src = Cat("op_summary ", run.op_summary.front().string());
    for (const char* k : {"identity", "duration", "pmu"}) ev->sources[k] = src;
    FillFromDb(run, options, &*t, ev);
    return t;
  }
  if (run.unified_db.empty()) {
    return absl::NotFoundError(
        Cat("no op_summary (or kernel_details) table and no msprof_<ts>.db in ",
            run.table_dir.string()));
  }
  absl::StatusOr<SelectedTarget> t =
      SelectDbTarget(run.unified_db, options.op_name, options.launch);
  if (!t.ok()) return t;
  std::string src = Cat("msprof_db ", run.unified_db.string());
  for (const char* k : {"identity", "duration"}) ev->sources[k] = src;
  if (!t->row.fields.empty()) ev->sources["pmu"] = Cat(src, " TASK_PMU_INFO");
  return t;
}

void FillFromDb(const RunLayout& run, const BuildOptions& options, SelectedTarget* t,
                Evidence* ev) {
  if (run.unified_db.empty() || !IsLevel0Row(t->row)) return;
  absl::StatusOr<SelectedTarget> db =
      SelectDbTarget(run.unified_db, options.op_name, options.launch);
  if (!db.ok()) {
    ev->warnings.push_back(
        Cat("level0 op_summary row not filled from the unified db: ", internal::Msg(db.status())));
    return;
  }
  if (db->launches.size() != t->launches.size()) {
    ev->warnings.push_back(Cat("level0 op_summary row not filled: the unified db has ",
                               db->launches.size(), " launches of ", options.op_name,
                               ", op_summary ", t->launches.size()));
    return;
  }
  std::string src = Cat("msprof_db ", run.unified_db.string());
  if (FillIdentity(db->row, &t->row) > 0)
    ev->sources["identity"] = Cat(ev->sources["identity"], "; N/A cells from ", src);
  if (int n = FillFields(db->row, &t->row); n > 0)
    ev->sources["pmu"] = Cat(ev->sources["pmu"], "; ", n, " empty or zero cells from ", src);
  for (size_t i = 0; i < t->launches.size(); ++i) {
    if (!t->launches[i].start_ns) t->launches[i].start_ns = db->launches[i].start_ns;
  }
}

void ReadClockWindow(const BuildOptions& options, Evidence* ev) {
  if (ev->unified_db.empty()) return;
  std::optional<std::pair<int64_t, int64_t>> w = UsedWindow(*ev);
  if (!w) return;
  absl::StatusOr<std::optional<DbClockWindow>> c =
      ReadDbClock(ev->unified_db, options.device_id, w->first, w->second);
  if (!c.ok()) {
    ev->warnings.push_back(Cat("unified db clock: ", internal::Msg(c.status())));
    return;
  }
  if (!c->has_value()) return;
  const DbClockWindow& d = **c;
  ev->db_clock = Evidence::ClockWindow{d.min_mhz, d.max_mhz, d.mean_mhz, d.changes};
  ev->sources["clock"] = Cat("msprof_db ", ev->unified_db.string(), " AICORE_FREQ over ", w->first,
                             "..", w->second, " ns");
}

void CoreTimesFromCycles(const BuildOptions& options, Evidence* ev) {
  if (ev->aicore_time_us > 0 || ev->aiv_time_us > 0) return;
  auto cycles = [&](const char* k) {
    auto it = ev->merged.find(k);
    return it == ev->merged.end() ? 0.0 : it->second;
  };
  double aic = cycles("aic_total_cycles"), aiv = cycles("aiv_total_cycles");
  if (!(aic > 0 || aiv > 0)) return;
  SocResolution soc = ResolveSoc(options.soc, FactsOf(*ev));
  double mhz = ev->db_clock ? ev->db_clock->mean_mhz
                            : (options.rated_mhz > 0 ? options.rated_mhz : soc.rated_mhz);
  std::string clock = ev->db_clock ? "the unified db's AICORE_FREQ mean"
                                   : (options.rated_mhz > 0 ? "--rated-mhz" : soc.rated_source);
  int cube = soc.soc ? soc.soc->CubeSide() : ev->device_facts.cube_cores.value_or(0);
  int vec = soc.soc ? soc.soc->vector_cores : ev->device_facts.vector_cores.value_or(0);
  ev->aicore_time_us = SideTime(aic, mhz, ev->block_num, cube);
  int64_t aiv_blocks = ev->mix_block_num > 0 ? ev->mix_block_num : ev->block_num;
  ev->aiv_time_us = SideTime(aiv, mhz, aiv_blocks, vec);
  for (auto [key, value, side] : {std::tuple{"aicore_time(us)", ev->aicore_time_us, "aic"},
                                  std::tuple{"aiv_time(us)", ev->aiv_time_us, "aiv"}}) {
    if (!(value > 0)) continue;
    ev->merged[key] = value;
    ev->sources[std::string(side) == "aic" ? "aicore_time_us" : "aiv_time_us"] =
        Cat("cycles: ", side, "_total_cycles / ", mhz, " MHz (", clock.empty() ? "?" : clock,
            ") / blocks x waves (", side == std::string("aic") ? cube : vec, " cores)");
  }
  if (ev->aicore_time_us > 0 || ev->aiv_time_us > 0) {
    ev->warnings.push_back(
        "core times derived from *_total_cycles: op_summary's *_time(us) are 0 (CANN 9 level0 "
        "export); see sources");
  } else {
    ev->warnings.push_back(Cat(
        "op_summary's *_time(us) are 0 (CANN 9 level0 export) and the cycles cannot replace "
        "them: ",
        mhz > 0 ? "Block Num is unknown (N/A or 0; the unified db's COMPUTE_TASK_INFO has it)"
                : "no clock (give --soc or --rated-mhz, or read the unified db's AICORE_FREQ)"));
  }
}

}  // namespace npuperf::evidence
