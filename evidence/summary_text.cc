#include "evidence/summary_text.h"

#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "evidence/derived.h"
#include "evidence/findings.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;
using Lines = std::vector<std::string>;

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return std::string(buf, n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1));
}

double Get(const Evidence& ev, const std::string& k) {
  auto it = ev.merged.find(k);
  return it == ev.merged.end() ? 0 : it->second;
}

std::string Pct(const std::string& name, double ratio) {
  return Fmt("%s=%6.2f%%", name.c_str(), ratio * 100);
}

// "  <label>: <parts joined by ' | '>" for the fields with a value > 0.
void RatioLine(const Evidence& ev, const std::string& label,
               const std::vector<std::pair<std::string, std::string>>& fields, Lines* out) {
  std::string line;
  for (const auto& [name, field] : fields) {
    double v = Get(ev, field);
    if (v > 0) line += Cat(line.empty() ? "" : " | ", Pct(name, v));
  }
  if (!line.empty()) out->push_back(Cat("  ", label, ": ", line));
}

struct Text {
  bool zh;
  const char* operator()(const char* en, const char* zh_text) const { return zh ? zh_text : en; }
};

void Header(const Evidence& ev, const Text& t, Lines* out) {
  out->push_back(
      t("=== On-device performance summary (msprof) ===", "=== 上板性能统计摘要 (msprof) ==="));
  out->push_back(Cat("Op: ", ev.op_name.empty() ? "unknown" : ev.op_name));
  out->push_back(Cat("Type: ", ev.op_type.empty() ? "unknown" : ev.op_type, " | TaskType: ",
                     ev.task_type, " | Duration: ", ShortNumber(ev.task_duration_us),
                     "us | BlockDim: ", ev.block_num, " (mix=", ev.mix_block_num, ")"));
  if (!ev.missing_metrics.empty()) {
    std::string names;
    for (const std::string& m : ev.missing_metrics) names += Cat(names.empty() ? "" : ", ", m);
    out->push_back(Cat(t("[WARN] Missing metrics: ", "[WARN] 缺失指标: "), names));
  }
  out->push_back("");
  out->push_back(
      t("[Note] msprof op_summary values are per-op aggregates (no per-core "
        "min/avg/max);",
        "[注] msprof 的 op_summary 是 per-op 聚合值（不含逐核 min/avg/max）；"));
  out->push_back(t("     for per-core data use msprof op (needs the msopprof binary).",
                   "     如需逐核数据请改用 msprof op (需要 msopprof 二进制)。"));
}

void PipeRatios(const Evidence& ev, const Text& t, Lines* out) {
  std::string_view core =
      ev.bound.primary_core == CoreType::kNone ? "unknown" : LowerName(ev.bound.primary_core);
  out->push_back("");
  out->push_back(
      Cat(t("--- Pipe ratios (dominant core = ", "--- Pipe ratios (主导核 = "), core, ") ---"));
  out->push_back(
      Fmt("  aicore_time: %.3fus | aiv_time: %.3fus", ev.aicore_time_us, ev.aiv_time_us));
  RatioLine(ev, "aic",
            {{"mac", "aic_mac_ratio"},
             {"mte1", "aic_mte1_ratio"},
             {"mte2", "aic_mte2_ratio"},
             {"mte3", "aic_mte3_ratio"},
             {"fixpipe", "aic_fixpipe_ratio"},
             {"scalar", "aic_scalar_ratio"},
             {"icache_miss", "aic_icache_miss_rate"}},
            out);
  RatioLine(ev, "aiv",
            {{"vec", "aiv_vec_ratio"},
             {"scalar", "aiv_scalar_ratio"},
             {"mte2", "aiv_mte2_ratio"},
             {"mte3", "aiv_mte3_ratio"},
             {"icache_miss", "aiv_icache_miss_rate"}},
            out);
  RatioLine(ev, "core",  // 310P: one unprefixed core type
            {{"vec", "vec_ratio"},
             {"mac", "mac_ratio"},
             {"scalar", "scalar_ratio"},
             {"mte1", "mte1_ratio"},
             {"mte2", "mte2_ratio"},
             {"mte3", "mte3_ratio"},
             {"icache_miss", "icache_miss_rate"}},
            out);
  if (ev.cube_utilization_pct > 0) {
    out->push_back(Fmt("  cube_utilization: %.2f%%", ev.cube_utilization_pct));
  }
}

void BoundRouting(const Evidence& ev, Lines* out) {
  const BoundDiagnosis& b = ev.bound;
  std::string scalar = !b.scalar_route_triggered   ? "None"
                       : *b.scalar_route_triggered ? "True"
                                                   : "False";
  out->push_back("");
  out->push_back("--- Bound routing (ratio-derived; NOT terminal Roofline proof) ---");
  std::string_view primary =
      b.primary_core == CoreType::kNone ? "unknown" : LowerName(b.primary_core);
  out->push_back(Cat("  primary_core=", primary, " | routing_label=", Name(b.routing_label),
                     " | scalar_route_triggered=", scalar));
  out->push_back(Cat("  pipe_bound=", Name(b.label),
                     " (first of MTE2, CUBE, VEC, FIXP, MTE3, SCALAR above 80%; MTE2/CUBE also as "
                     "the largest share above 70%)"));
  out->push_back(
      "  pipeline_overlap=unverified: op_summary ratios have no event ordering; use "
      "timeline/dependency evidence before claiming overlap.");
}

void HeadOverhead(const Evidence& ev, const Text& t, Lines* out) {
  double longest = std::max(ev.aicore_time_us, ev.aiv_time_us);
  out->push_back("");
  out->push_back(t("--- Head overhead ---", "--- 头开销 ---"));
  if (ev.head_overhead_status == HeadOverheadStatus::kNotApplicable) {
    out->push_back(Cat(t("  not applicable: ", "  不适用: "), ev.head_overhead_note));
    return;
  }
  if (ev.head_overhead_status == HeadOverheadStatus::kNegativeGap) {
    out->push_back(Cat(t("  NEGATIVE GAP: ", "  负间隙: "), ev.head_overhead_note));
  }
  out->push_back(Cat("  Task Duration: ", ShortNumber(ev.task_duration_us), "us | ",
                     t("longest core: ", "核最长耗时: "), Fmt("%.3f", longest), "us | ",
                     t("overhead: ", "头开销: "),
                     Fmt("%.3fus (%.1f%%)", ev.head_overhead_us, ev.head_overhead_pct)));
}

// A section of "  <label>: V.VV GB/s" lines, printed when any value > 0.
void BandwidthSection(const Evidence& ev, const std::string& title,
                      const std::vector<std::pair<std::string, std::string>>& fields, Lines* out) {
  Lines body;
  for (const auto& [label, field] : fields) {
    double v = Get(ev, field);
    if (v > 0) body.push_back(Fmt("  %s: %.2f GB/s", label.c_str(), v));
  }
  if (body.empty()) return;
  out->push_back("");
  out->push_back(title);
  out->insert(out->end(), body.begin(), body.end());
}

void Bandwidths(const Evidence& ev, const Text& t, Lines* out) {
  BandwidthSection(ev,
                   t("--- Memory bandwidth (aic-metrics=Memory) ---",
                     "--- Memory 带宽 (aic-metrics=Memory) ---"),
                   {{"aic main_mem read", "aic_main_mem_read_bw(GB/s)"},
                    {"aic main_mem write", "aic_main_mem_write_bw(GB/s)"},
                    {"aiv main_mem read", "aiv_main_mem_read_bw(GB/s)"},
                    {"aiv main_mem write", "aiv_main_mem_write_bw(GB/s)"},
                    {"aic L1 read", "aic_l1_read_bw(GB/s)"},
                    {"aic L1 write", "aic_l1_write_bw(GB/s)"},
                    {"aiv UB read", "aiv_ub_read_bw(GB/s)"},
                    {"aiv UB write", "aiv_ub_write_bw(GB/s)"}},
                   out);
  BandwidthSection(ev, "--- MemoryL0 ---",
                   {{"L0A read", "aic_l0a_read_bw(GB/s)"},
                    {"L0A write", "aic_l0a_write_bw(GB/s)"},
                    {"L0B read", "aic_l0b_read_bw(GB/s)"},
                    {"L0B write", "aic_l0b_write_bw(GB/s)"},
                    {"L0C read (cube)", "aic_l0c_read_bw_cube(GB/s)"},
                    {"L0C write (cube)", "aic_l0c_write_bw_cube(GB/s)"}},
                   out);
  BandwidthSection(ev, "--- MemoryUB ---",
                   {{"UB read (vector)", "aiv_ub_read_bw_vector(GB/s)"},
                    {"UB write (vector)", "aiv_ub_write_bw_vector(GB/s)"},
                    {"UB read (scalar)", "aiv_ub_read_bw_scalar(GB/s)"},
                    {"UB write (scalar)", "aiv_ub_write_bw_scalar(GB/s)"},
                    {"aic UB read (scalar)", "aic_ub_read_bw_scalar(GB/s)"},
                    {"aic UB write (scalar)", "aic_ub_write_bw_scalar(GB/s)"},
                    {"aiv fixp2ub write", "aiv_fixp2ub_write_bw(GB/s)"},
                    {"aic fixp2ub write", "aic_fixp2ub_write_bw(GB/s)"}},
                   out);
}

void L2AndConflicts(const Evidence& ev, Lines* out) {
  std::map<std::string, L2Count> l2 = L2Counts(ev.merged);
  if (!l2.empty()) {
    out->push_back("");
    out->push_back("--- L2Cache ---");
    for (const auto& [key, label] : {std::pair{"aic_read", "aic read"},
                                     {"aic_write", "aic write"},
                                     {"aiv_read", "aiv read"},
                                     {"aiv_write", "aiv write"}}) {
      auto it = l2.find(key);
      if (it == l2.end()) continue;
      out->push_back(Fmt("  %s: hit=%.0f miss=%.0f hit_rate=%.2f%%", label, it->second.hit,
                         it->second.miss,
                         it->second.hit / (it->second.hit + it->second.miss) * 100));
    }
  }
  std::string line;
  for (const auto& [name, field] : std::vector<std::pair<std::string, std::string>>{
           {"vec_bankgroup_cflt", "aiv_vec_bankgroup_cflt_ratio"},
           {"vec_bank_cflt", "aiv_vec_bank_cflt_ratio"},
           {"vec_resc_cflt", "aiv_vec_resc_cflt_ratio"}}) {
    if (Get(ev, field) > 0) line += Cat(line.empty() ? "" : " | ", Pct(name, Get(ev, field)));
  }
  if (line.empty()) return;
  out->push_back("");
  out->push_back("--- ResourceConflict ---");
  out->push_back(Cat("  ", line));
}

void Arithmetic(const Evidence& ev, Lines* out) {
  std::string line;
  for (const auto& [name, field] :
       std::vector<std::pair<std::string, std::string>>{{"mac_fp16", "aic_mac_fp16_ratio"},
                                                        {"mac_int8", "aic_mac_int8_ratio"},
                                                        {"vec_fp32", "aiv_vec_fp32_ratio"},
                                                        {"vec_fp16", "aiv_vec_fp16_ratio"},
                                                        {"vec_int32", "aiv_vec_int32_ratio"},
                                                        {"vec_misc", "aiv_vec_misc_ratio"}}) {
    if (Get(ev, field) > 0) line += Cat(line.empty() ? "" : " | ", Pct(name, Get(ev, field)));
  }
  for (const auto& [name, field] : std::vector<std::pair<std::string, std::string>>{
           {"cube_fops", "aic_cube_fops"}, {"vector_fops", "aiv_vector_fops"}}) {
    if (Get(ev, field) > 0)
      line += Cat(line.empty() ? "" : " | ", Fmt("%s=%.0f", name.c_str(), Get(ev, field)));
  }
  if (line.empty()) return;
  out->push_back("");
  out->push_back("--- ArithmeticUtilization ---");
  out->push_back(Cat("  ", line));
}

std::string CoreList(const PerCore& p, const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) {
    for (const CoreCycles& c : p.cores) {
      if (c.core_id == id) s += Cat(s.empty() ? "" : ", ", Fmt("Core%d=%.2fus", id, c.time_us));
    }
  }
  return s;
}

void PerCoreSection(const PerCore& p, const Text& t, Lines* out) {
  if (!p.ok()) return;
  std::string db = p.db.filename().string();
  out->push_back("");
  out->push_back(
      Cat(t("--- Per-core load balance (sample-based ", "--- 逐核负载均衡 (sample-based "), db,
          ") ---"));
  out->push_back(Cat(t("  scope: process (every kernel of the run, not only the target); device ",
                       "  范围: 整个进程（含所有 kernel，非仅目标算子）；device "),
                     p.device_id, ", ", Name(p.core_type)));
  out->push_back(Fmt(t("  cores: %zu  | back-calculated clock: %.3f GHz (%.4f ns/cycle)",
                       "  有效核数: %zu  | 主频推算: %.3f GHz (%.4f ns/cycle)"),
                     p.cores.size(), p.freq_ghz, p.ns_per_cycle));
  out->push_back(Fmt("  min=%.3fus  avg=%.3fus  max=%.3fus", p.min_us, p.avg_us, p.max_us));
  const char* verdict = p.verdict == BalanceVerdict::kPass ? t("PASS (<10%)", "达标 (<10%)")
                        : p.verdict == BalanceVerdict::kWarning
                            ? t("WARNING (10~30%)", "警告 (10~30%)")
                            : t("CRITICAL (>=30%)", "严重问题 (>30%)");
  out->push_back(Fmt("  (max-min)/max = %.2f%%  ->  %s [scope: process%s]", p.spread_pct, verdict,
                     p.clock_implausible
                         ? t("; IMPLAUSIBLE: not the target's cycles", "; 不可信: 非目标算子的周期")
                         : ""));
  if (p.clock_implausible) out->push_back(Cat("  ", p.clock_note));
  out->push_back(Cat(t("  Top-3 slow cores: ", "  Top-3 慢核: "), CoreList(p, p.slowest_cores)));
  out->push_back(Cat(t("  Top-3 fast cores: ", "  Top-3 快核: "), CoreList(p, p.fastest_cores)));
  if (!p.half_gap_hint) return;
  out->push_back(Fmt(t("  [Hint] first-half core mean %.2fus vs second half %.2fus, gap %.2f%%",
                       "  [提示] 前半段 core 均值 %.2fus vs 后半段 %.2fus，差距 %.2f%%"),
                     p.first_half_avg_us, p.second_half_avg_us, p.half_gap_pct));
  out->push_back(
      t("         looks like two clusters (NUMA / L2 slice) skew; try block swizzle / "
        "tail-round balancing.",
        "         疑似两簇 (NUMA / L2 slice) 负载偏斜，建议尝试 block swat / "
        "尾轮均衡策略。"));
}

void DvfsAndErrors(const Evidence& ev, const Text& t, Lines* out) {
  const DvfsCheck& d = ev.dvfs;
  out->push_back("");
  out->push_back("--- DVFS ---");
  if (d.status == DvfsStatus::kUnknown) {
    out->push_back(Cat("  status=unknown (", d.note, ")"));
  } else {
    out->push_back(
        Fmt("  status=%s | observed=%.1f MHz | rated=%.1f MHz | deviation=%+.2f%% "
            "(tolerance %.1f%%) | source=%s",
            NameOf(d.status).c_str(), d.observed_mhz, d.rated_mhz, d.deviation_pct, d.tolerance_pct,
            NameOf(d.source).c_str()));
  }
  if (ev.golden.status != GoldenStatus::kNotProvided) {
    out->push_back("");
    out->push_back(
        "--- Golden reference ratio (golden per-iteration E2E / target kernel; NOT a speed-up) "
        "---");
    out->push_back(ev.golden.status == GoldenStatus::kJoined
                       ? Fmt("  golden=%.3fus | kernel=%.3fus | golden_reference_ratio=%.3f",
                             ev.golden.golden_us, ev.golden.kernel_us, ev.golden.ratio)
                       : Cat("  status=", StatusText(ev.golden)));
  }
  if (ev.errors.empty()) return;
  out->push_back("");
  out->push_back(t("--- Evidence errors ---", "--- 证据错误 ---"));
  for (const EvidenceError& e : ev.errors) out->push_back(Cat("  [", e.code, "] ", e.message));
}

void Footer(const Evidence& ev, const SummaryOptions& o, const Text& t, Lines* out) {
  out->push_back("");
  out->push_back(t("--- Raw data location ---", "--- 原始数据位置 ---"));
  if (!o.round_dir.empty()) {
    out->push_back(Cat(t("  Archived CSVs: ", "  归档 CSV : "), o.round_dir.string(), "/"));
  }
  out->push_back(Cat(t("  Source PROF group: ", "  采集源 PROF（compare 默认清理）: "),
                     ev.prof_group.string(), "/"));
  out->push_back(t("  op_summary_<Metric>.csv of every aic-metrics group is copied to the archive;",
                   "  按 aic-metrics 拆分的 op_summary_<Metric>.csv 均已复制到归档目录，"));
  out->push_back(t("  Read them for column-level detail.", "  如需逐列查看可直接 Read。"));
  out->push_back("");
  out->push_back(t("--- Metric sources ---", "--- Metric 来源 ---"));
  for (const MetricGroup& g : ev.metrics) {
    out->push_back(Fmt("  %-22s <- %s", g.group.c_str(), g.source.string().c_str()));
  }
  for (const std::string& m : ev.missing_metrics) {
    out->push_back(Fmt("  %-22s <MISSING>", m.c_str()));
  }
}

}  // namespace

std::string ShortNumber(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string RenderSummary(const Evidence& ev, const SummaryOptions& options) {
  Text t{options.lang == Lang::kZh};
  Lines out;
  Header(ev, t, &out);
  PipeRatios(ev, t, &out);
  BoundRouting(ev, &out);
  HeadOverhead(ev, t, &out);
  Bandwidths(ev, t, &out);
  L2AndConflicts(ev, &out);
  Arithmetic(ev, &out);
  PerCoreSection(ev.per_core, t, &out);
  PerCoreSection(ev.per_core_secondary, t, &out);
  DvfsAndErrors(ev, t, &out);
  for (std::string& line : FindingsTextLines(EvaluateFindings(ev))) out.push_back(std::move(line));
  Footer(ev, options, t, &out);
  std::string text;
  for (size_t i = 0; i < out.size(); ++i) text += Cat(i ? "\n" : "", out[i]);
  return text;
}

}  // namespace npuperf::evidence
