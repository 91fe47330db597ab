#include "sim/opprof_writer.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "sim/format.h"

namespace npuperf::sim {
namespace {

bool IsMix(TaskType t) { return t == TaskType::kMixAic || t == TaskType::kMixAiv; }

std::string OpType(TaskType t) {
  if (IsMix(t)) return "mix";
  return t == TaskType::kAiCore ? "cube" : "vector";
}

// msprof op's names where op_summary's differ: the cube pipe is "cube", not "mac", and the AIC
// core time aic_time(us), not aicore_time(us).
std::string OpprofName(const std::string& op_summary_name) {
  if (op_summary_name == "aicore_time(us)") return "aic_time(us)";
  return absl::StrReplaceAll(op_summary_name, {{"aic_mac_", "aic_cube_"}});
}

// The task's counts of one core side scaled to block `b`'s share of its busy
// cycles, as a one-block task (the other side unused).
KernelResult BlockResult(const KernelResult& k, bool cube, int b) {
  const CoreStats& src = cube ? k.aic : k.aiv;
  KernelResult one = k;
  CoreStats& mine = cube ? one.aic : one.aiv;
  CoreStats& other = cube ? one.aiv : one.aic;
  mine = CoreStats{};
  mine.cores = src.cores;
  mine.blocks = 1;
  AddScaled(mine, src, src.total_cycles > 0 ? src.block_cycles[b] / src.total_cycles : 0);
  other = CoreStats{};
  return one;
}

std::string Cell(const PmuColumn& c, const KernelResult& one, double rated_mhz) {
  std::string cell;
  AppendPmuCells({c}, one, rated_mhz, cell);
  return cell.substr(1);  // AppendPmuCells writes ",<value>"
}

absl::Status WriteMetric(const OpprofConfig& cfg, MetricGroup g, const KernelResult& k) {
  std::vector<PmuColumn> cols;
  for (const std::string& name : PmuHeader(g, cfg.soc.family)) {
    absl::StatusOr<PmuColumn> c = ResolvePmuColumn(name);
    if (!c.ok()) return c.status();
    if (c->side != CoreSide::kNone) cols.push_back(*std::move(c));  // no per-block task figures
  }
  const std::filesystem::path path = cfg.dir / absl::StrCat(MetricGroupName(g), ".csv");
  std::ofstream out(path);
  out << "block_id,sub_block_id,";
  for (const PmuColumn& c : cols) out << OpprofName(c.name) << ",";
  out << "\n";
  // A MIX block is one AIC (cube0) with its AIV sub-blocks (vector0, vector1, ...).
  const int per_block =
      k.aic.blocks > 0 && k.aiv.blocks > 0 ? std::max(1, k.aiv.blocks / k.aic.blocks) : 1;
  for (bool cube : {true, false}) {
    const CoreStats& side = cube ? k.aic : k.aiv;
    for (int b = 0; b < side.blocks; ++b) {
      KernelResult one = BlockResult(k, cube, b);
      out << (cube ? b : b / per_block) << ","
          << (cube ? std::string("cube0") : absl::StrCat("vector", b % per_block)) << ",";
      for (const PmuColumn& c : cols) {
        bool mine = (c.side == CoreSide::kAic) == cube;
        out << (mine ? Cell(c, one, cfg.soc.freq_mhz) : "NA") << ",";
      }
      out << "\n";
    }
  }
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path.string()));
}

}  // namespace

absl::Status WriteOpprof(const OpprofConfig& cfg, const Launch& l, const KernelResult& k) {
  std::error_code ec;
  std::filesystem::create_directories(cfg.dir / "dump", ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", cfg.dir.string()));
  {
    std::ofstream basic(cfg.dir / "OpBasicInfo.csv");
    basic << "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device Id,Pid,Current "
             "Freq,Rated Freq,\n"
          << KernelName(l) << "," << OpType(l.task_type) << "," << Fixed(k.duration_us, 6) << ","
          << l.block_num << "," << (IsMix(l.task_type) ? std::to_string(l.mix_block_num) : "NA")
          << "," << cfg.device << "," << getpid() << "," << Fixed(cfg.freq_mhz, 0) << ","
          << Fixed(cfg.soc.freq_mhz, 0) << ",\n";
    if (!basic) return absl::InternalError("cannot write OpBasicInfo.csv");
    std::ofstream info(cfg.dir / "dump" / "op_basic_info.txt");
    info << "Op Name=" << KernelName(l) << "\nRun Soc Version=" << cfg.soc.name << "\n";
  }
  for (MetricGroup g : cfg.groups) {
    absl::Status s = WriteMetric(cfg, g, k);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace npuperf::sim
