// Exact op_summary PMU headers per metric group and SoC family
// (msprof-output.md §3.4 for A2/A3, §3.5 for A5).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sim/pmu_columns.h"

namespace npuperf::sim {
namespace {

struct GroupInfo {
  MetricGroup group;
  absl::string_view name;
  absl::string_view a2;  // empty: unsupported on the family
  absl::string_view a5;
};

constexpr GroupInfo kGroups[] = {
    {MetricGroup::kPipeUtilization, "PipeUtilization",
     "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
     "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
     "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,"
     "aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),"
     "aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)",
     "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
     "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
     "aic_mte3_time(us),aic_mte3_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,"
     "aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),"
     "aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,"
     "aiv_icache_miss_rate,cube_utilization(%)"},
    {MetricGroup::kArithmeticUtilization, "ArithmeticUtilization",
     "aicore_time(us),aic_total_cycles,aic_mac_fp16_ratio,aic_mac_int8_ratio,aic_cube_fops,"
     "aiv_time(us),aiv_total_cycles,aiv_vec_fp32_ratio,aiv_vec_fp16_ratio,aiv_vec_int32_ratio,"
     "aiv_vec_misc_ratio,aiv_vector_fops",
     "aicore_time(us),aic_total_cycles,aic_mac_fp16_ratio,aic_mac_int8_ratio,aic_cube_fops,"
     "aiv_time(us),aiv_total_cycles"},
    {MetricGroup::kMemory, "Memory",
     "aicore_time(us),aic_total_cycles,aic_l1_read_bw(GB/s),aic_l1_write_bw(GB/s),"
     "aic_main_mem_read_bw(GB/s),aic_main_mem_write_bw(GB/s),aic_l2_read_bw(GB/s),"
     "aic_l2_write_bw(GB/s),aiv_time(us),aiv_total_cycles,aiv_ub_read_bw(GB/s),"
     "aiv_ub_write_bw(GB/s),aiv_main_mem_read_bw(GB/s),aiv_main_mem_write_bw(GB/s),"
     "aiv_l2_read_bw(GB/s),aiv_l2_write_bw(GB/s)",
     "aicore_time(us),aic_total_cycles,aic_l1_read_bw(GB/s),aic_l1_write_bw(GB/s),"
     "aic_main_mem_read_bw(GB/s),aic_main_mem_write_bw(GB/s),aiv_time(us),aiv_total_cycles,"
     "aiv_ub_read_bw(GB/s),aiv_ub_write_bw(GB/s),aiv_main_mem_read_bw(GB/s),"
     "aiv_main_mem_write_bw(GB/s)"},
    {MetricGroup::kMemoryL0, "MemoryL0",
     "aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/s),"
     "aic_l0b_read_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),"
     "aic_l0c_write_bw_cube(GB/s),aiv_time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s),"
     "aiv_l0c_write_bw(GB/s)",
     "aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/s),"
     "aic_l0b_read_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),"
     "aic_l0c_write_bw_cube(GB/s),aiv_time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s)"},
    {MetricGroup::kMemoryUB, "MemoryUB",
     "aicore_time(us),aic_total_cycles,aic_ub_read_bw_scalar(GB/s),aic_ub_write_bw_scalar(GB/s),"
     "aiv_time(us),aiv_total_cycles,aiv_ub_read_bw_vector(GB/s),aiv_ub_write_bw_vector(GB/s),"
     "aiv_ub_read_bw_scalar(GB/s),aiv_ub_write_bw_scalar(GB/s)",
     "aicore_time(us),aic_total_cycles,aic_ub_read_bw_scalar(GB/s),aic_ub_write_bw_scalar(GB/s),"
     "aic_fixp2ub_write_bw(GB/s),aiv_time(us),aiv_total_cycles,aiv_ub_read_bw_vector(GB/s),"
     "aiv_ub_write_bw_vector(GB/s),aiv_ub_read_bw_scalar(GB/s),aiv_ub_write_bw_scalar(GB/s),"
     "aiv_fixp2ub_write_bw(GB/s)"},
    {MetricGroup::kResourceConflictRatio, "ResourceConflictRatio",
     "aicore_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,aiv_vec_bankgroup_cflt_ratio,"
     "aiv_vec_bank_cflt_ratio,aiv_vec_resc_cflt_ratio",
     "aicore_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,aiv_vec_bank_cflt_ratio,"
     "aiv_vec_resc_cflt_ratio"},
    {MetricGroup::kL2Cache, "L2Cache",
     "aicore_time(us),aic_total_cycles,aic_write_cache_hit,aic_write_cache_miss_allocate,"
     "aic_r0_read_cache_hit,aic_r0_read_cache_miss_allocate,aic_r1_read_cache_hit,"
     "aic_r1_read_cache_miss_allocate,aiv_time(us),aiv_total_cycles,aiv_write_cache_hit,"
     "aiv_write_cache_miss_allocate,aiv_r0_read_cache_hit,aiv_r0_read_cache_miss_allocate,"
     "aiv_r1_read_cache_hit,aiv_r1_read_cache_miss_allocate",
     "aicore_time(us),aic_total_cycles,aic_read_local_l2_hit,aic_read_local_l2_miss,"
     "aic_read_local_l2_victim,aic_write_local_l2_hit,aic_write_local_l2_miss,"
     "aic_write_local_l2_victim,aiv_time(us),aiv_total_cycles,aiv_read_local_l2_hit,"
     "aiv_read_local_l2_miss,aiv_read_local_l2_victim,aiv_write_local_l2_hit,"
     "aiv_write_local_l2_miss,aiv_write_local_l2_victim"},
    {MetricGroup::kMemoryAccess, "MemoryAccess",
     "aicore_time(us),aic_total_cycles,aic_read_main_memory_datas(KB),"
     "aic_write_main_memory_datas(KB),aic_GM_to_L1_datas(KB),aic_L0C_to_L1_datas(KB),"
     "aic_L0C_to_GM_datas(KB),aic_GM_to_UB_datas(KB),aic_UB_to_GM_datas(KB),aiv_time(us),"
     "aiv_total_cycles,aiv_read_main_memory_datas(KB),aiv_write_main_memory_datas(KB),"
     "aiv_GM_to_L1_datas(KB),aiv_L0C_to_L1_datas(KB),aiv_L0C_to_GM_datas(KB),"
     "aiv_GM_to_UB_datas(KB),aiv_UB_to_GM_datas(KB)",
     ""},
};

const GroupInfo& Info(MetricGroup group) {
  for (const GroupInfo& g : kGroups) {
    if (g.group == group) return g;
  }
  return kGroups[0];
}

}  // namespace

absl::StatusOr<MetricGroup> ParseMetricGroup(absl::string_view name) {
  for (const GroupInfo& g : kGroups) {
    if (g.name == name) return g.group;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("invalid --aic-metrics value '", name,
                   "' (want PipeUtilization, ArithmeticUtilization, Memory, MemoryL0, MemoryUB, "
                   "ResourceConflictRatio, L2Cache or MemoryAccess)"));
}

absl::string_view MetricGroupName(MetricGroup group) { return Info(group).name; }

absl::Status CheckGroupSupported(MetricGroup group, const SocSpec& soc) {
  const GroupInfo& g = Info(group);
  if ((soc.family == SocFamily::kA5 ? g.a5 : g.a2).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--aic-metrics=", g.name, " is not supported on ", soc.name));
  }
  return absl::OkStatus();
}

std::vector<std::string> PmuHeader(MetricGroup group, SocFamily family) {
  const GroupInfo& g = Info(group);
  absl::string_view text = family == SocFamily::kA5 ? g.a5 : g.a2;
  if (text.empty()) return {};
  return absl::StrSplit(text, ',');
}

}  // namespace npuperf::sim
