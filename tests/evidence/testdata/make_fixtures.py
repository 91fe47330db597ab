#!/usr/bin/env python3
"""Writes the hand-specified standard-group fixtures of tests/evidence.

Rows are built from real msprof rows (msprof-output.md §7: E2 is a 910B
MIX_AIC kernel, 256 blocks / 512 mix, scalar-bound on AIV). Every number the
tests assert is written here explicitly. Re-run after editing:
    python3 tests/evidence/testdata/make_fixtures.py
"""
import os
import shutil
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = ("Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
        "Task Start Time(us),Task Duration(us),Task Wait Time(us),{block},{mix},HF32 Eligible,"
        "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
        "Output Formats,Context ID")

PMU = {
    "PipeUtilization": "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,"
    "aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),"
    "aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),"
    "aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,"
    "aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,"
    "cube_utilization(%)",
    "ArithmeticUtilization": "aicore_time(us),aic_total_cycles,aic_mac_fp16_ratio,"
    "aic_mac_int8_ratio,aic_cube_fops,aiv_time(us),aiv_total_cycles,aiv_vec_fp32_ratio,"
    "aiv_vec_fp16_ratio,aiv_vec_int32_ratio,aiv_vec_misc_ratio,aiv_vector_fops",
    "Memory": "aicore_time(us),aic_total_cycles,aic_l1_read_bw(GB/s),aic_l1_write_bw(GB/s),"
    "aic_main_mem_read_bw(GB/s),aic_main_mem_write_bw(GB/s),aic_l2_read_bw(GB/s),"
    "aic_l2_write_bw(GB/s),aiv_time(us),aiv_total_cycles,aiv_ub_read_bw(GB/s),"
    "aiv_ub_write_bw(GB/s),aiv_main_mem_read_bw(GB/s),aiv_main_mem_write_bw(GB/s),"
    "aiv_l2_read_bw(GB/s),aiv_l2_write_bw(GB/s)",
    "MemoryL0": "aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/s),"
    "aic_l0b_read_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),"
    "aic_l0c_write_bw_cube(GB/s),aiv_time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s),"
    "aiv_l0c_write_bw(GB/s)",
    "MemoryUB": "aicore_time(us),aic_total_cycles,aic_ub_read_bw_scalar(GB/s),"
    "aic_ub_write_bw_scalar(GB/s),aiv_time(us),aiv_total_cycles,aiv_ub_read_bw_vector(GB/s),"
    "aiv_ub_write_bw_vector(GB/s),aiv_ub_read_bw_scalar(GB/s),aiv_ub_write_bw_scalar(GB/s)",
    "L2Cache": "aicore_time(us),aic_total_cycles,aic_write_cache_hit,"
    "aic_write_cache_miss_allocate,aic_r0_read_cache_hit,aic_r0_read_cache_miss_allocate,"
    "aic_r1_read_cache_hit,aic_r1_read_cache_miss_allocate,aiv_time(us),aiv_total_cycles,"
    "aiv_write_cache_hit,aiv_write_cache_miss_allocate,aiv_r0_read_cache_hit,"
    "aiv_r0_read_cache_miss_allocate,aiv_r1_read_cache_hit,aiv_r1_read_cache_miss_allocate",
    "ResourceConflictRatio": "aicore_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,"
    "aiv_vec_bankgroup_cflt_ratio,aiv_vec_bank_cflt_ratio,aiv_vec_resc_cflt_ratio",
}

# Target (E2) metric cells per group.
E2 = {
    "PipeUtilization": "12.716,532700,0.0,0.0,10.213,0.803,0.031,0.002,0.024,0.002,0.006,0.0,"
    "0.037,79569.043,6666439114,0.189,0.0,79457.736,0.999,0.012,0.0,0.012,0.0,0.0,0.014",
    "ArithmeticUtilization": "12.8,533000,0.0,0.0,0,79570.1,6666500000,0.001,0.002,0.0,0.003,"
    "524288",
    "Memory": "12.9,533100,1.5,0.5,2.25,0.75,3.0,1.0,79571.0,6666600000,10.5,5.25,1.6,0.4,"
    "2.0,0.5",
    "MemoryL0": "12.7,532000,0.1,0.2,0.3,0.4,0.5,0.6,79568.0,6666400000,0.0,0.0",
    "MemoryUB": "12.7,532000,0.05,0.02,79568.0,6666400000,7.5,3.5,0.9,0.1",
    "L2Cache": "12.7,532000,300,100,900,100,0,0,79568.0,6666400000,20,80,700,250,50,0",
    "ResourceConflictRatio": "12.7,532000,79568.0,6666400000,0.01,0.02,0.03",
}

NOISE_PMU_ZERO = "0"


def base_row(name, typ, dur, block, mix, start, shapes='"1,32;1,32"'):
    return (f"0,4294967295,0,1756,{name},{name},dynamic,{typ},{start}\t,{dur},0,{block},{mix},NO,"
            f"{shapes},DT_FLOAT16;DT_FLOAT16,ND;ND,\"1,32\",DT_FLOAT16,ND,0")


def pmu_zeros(metric):
    return ",".join(["0"] * len(PMU[metric].split(",")))


def write(path, text, crlf=False, bom=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = text.replace("\n", "\r\n") if crlf else text
    with open(path, "wb") as f:
        f.write((b"\xef\xbb\xbf" if bom else b"") + data.encode())


def op_dir(group, metric):
    return os.path.join(group, f"PROF_{metric}", "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA",
                        "mindstudio_profiler_output")


def make_sample_db(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    cols = ", ".join(f"event{i} TEXT" for i in range(1, 9))
    db.execute("CREATE TABLE AICoreOriginalData(mode INTEGER, replayid INTEGER, timestamp NUMERIC,"
               f" coreid INTEGER, task_cyc TEXT, {cols})")
    db.executemany("INSERT INTO AICoreOriginalData(mode, replayid, timestamp, coreid, task_cyc)"
                   " VALUES (0, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()


def group_a2_e2():
    g = os.path.join(HERE, "group_a2_e2")
    shutil.rmtree(g, ignore_errors=True)
    for i, metric in enumerate(PMU):
        block = "Block Num,Mix Block Num" if metric != "Memory" else "Block Dim,Mix Block Dim"
        b, m = block.split(",")
        lines = [BASE.format(block=b, mix=m) + "," + PMU[metric]]
        lines.append(base_row("aclnnRandn_Noise", "AI_CORE", "500.000", 24, "N/A",
                              "1780676244300000.000") + "," + pmu_zeros(metric))
        lines.append(base_row("main_kernel", "MIX_AIC", "87139.380", 256, 512,
                              "1780676244313289.000") + "," + E2[metric])
        lines.append(base_row("_Z14rmsnorm_kernelPfS_iiii", "AI_VECTOR_CORE", "12.500", 8, 0,
                              "1780676244400500.000") + "," + pmu_zeros(metric))
        d = op_dir(g, metric)
        write(os.path.join(d, "op_summary_20260605161737.csv"), "\n".join(lines) + "\n",
              crlf=(metric == "MemoryUB"), bom=(metric == "L2Cache"))
        write(os.path.join(d, "task_time_20260605161737.csv"),
              "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),"
              "task_stop(us)\n0,main_kernel,MIX_AIC,1756,0,87141.960,1.000\t,2.000\t\n")
        write(os.path.join(d, "op_statistic_20260605161737.csv"),
              "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
              "Max Time(us),Ratio(%)\n0,main_kernel,MIX_AIC,1,87139.38,87139.38,87139.38,"
              "87139.38,99.4\n")
    sample = os.path.join(g, "PROF_Sample", "PROF_000001_20260605161800000_SAMPLESAMPLESAMP")
    # AIV: 8 cores; core 0 ran 79569.043 us at 1800 MHz = 143224277 cycles.
    aiv = [143224277, 140000000, 139000000, 141000000, 120000000, 121000000, 119000000, 122000000]
    rows = []
    for core, cyc in enumerate(aiv):
        rows.append((0, 1000 + core, core, str(cyc - 1000)))
        rows.append((0, 2000 + core, core, "1000"))
    rows.append((1, 3000, 0, "999999999"))   # replay group 1: ignored
    rows.append((0, 3001, 1, "0"))           # zero cycles: ignored
    rows.append((0, 3002, None, "5000"))     # NULL core: ignored
    make_sample_db(os.path.join(sample, "device_3", "sqlite", "ai_vector_core.db"), rows)
    # AIC: 4 cores, core time 12.716 us -> 22889 cycles at 1800 MHz on the slowest.
    aic = [22889, 22000, 21000, 20000]
    make_sample_db(os.path.join(sample, "device_3", "sqlite", "aicore.db"),
                   [(0, 10 + c, c, str(v)) for c, v in enumerate(aic)])


def group_dup():
    g = os.path.join(HERE, "group_dup")
    shutil.rmtree(g, ignore_errors=True)
    metric = "PipeUtilization"
    lines = [BASE.format(block="Block Num", mix="Mix Block Num") + "," + PMU[metric]]
    for start in ("1780676244313289.000", "1780676244413289.000"):
        lines.append(base_row("main_kernel", "MIX_AIC", "87139.380", 256, 512, start) + "," +
                     E2[metric])
    lines.append(base_row("other_kernel", "AI_CORE", "5.000", 1, 0, "1") + "," + pmu_zeros(metric))
    write(os.path.join(op_dir(g, metric), "op_summary_20260605161737.csv"), "\n".join(lines) + "\n")


def group_aiv_partial():
    """AIV-only kernel, Block Dim naming, only two groups, a vec ratio of 1.2."""
    g = os.path.join(HERE, "group_aiv_partial")
    shutil.rmtree(g, ignore_errors=True)
    pipe = ("0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,8.66,15591,0.5,1.2,8.5,0.98,4.7,"
            "0.55,3.1,0.36,0.025,N/A")
    lines = [BASE.format(block="Block Dim", mix="Mix Block Dim") + "," + PMU["PipeUtilization"],
             base_row("sanitized_add_custom_vector", "AI_VECTOR_CORE", "9.220", 8, "N/A",
                      "1780676244313289.000", shapes='"8,2048;8,2048"') + "," + pipe]
    write(os.path.join(op_dir(g, "PipeUtilization"), "op_summary_20260605161737.csv"),
          "\n".join(lines) + "\n", crlf=True, bom=True)
    mem = "0,0,0,0,0,0,0,0,8.7,15600,0.9,0.4,1.8,1.6,0,0"
    lines = [BASE.format(block="Block Dim", mix="Mix Block Dim") + "," + PMU["Memory"],
             base_row("sanitized_add_custom_vector", "AI_VECTOR_CORE", "9.300", 8, "N/A",
                      "1780676244313289.000", shapes='"8,2048;8,2048"') + "," + mem]
    write(os.path.join(op_dir(g, "Memory"), "op_summary_20260605161737.csv"), "\n".join(lines) + "\n")
    # An empty aicore.db (zero bytes): must be reported, not crash.
    sample = os.path.join(g, "PROF_Sample", "PROF_000001_20260605161800000_SAMPLESAMPLESAMP")
    write(os.path.join(sample, "device_0", "sqlite", "ai_vector_core.db"), "")


if __name__ == "__main__":
    group_a2_e2()
    group_dup()
    group_aiv_partial()
