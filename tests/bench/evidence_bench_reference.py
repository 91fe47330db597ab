#!/usr/bin/env python3
"""Python re-implementation of the reference script's standard-mode summarize.

NOT the pypto-gym script itself (its code is not vendored here): a re-implementation of
msprof_perf_summary.py standard mode (`<PROF_GROUP> <ops_dir>`) as reference-scripts.md describes
it, calibrated to the public script's algorithm and cost (issue 18):

- every op_summary is read whole with csv.DictReader (§8.1), one metric at a time;
- pick_target_row returns the FIRST row whose stripped Op Name equals the target, and only
  without one falls back to the longest AI_CORE/AIV/MIX row (§9.2, non-strict);
- merge_metric_rows fills a field from a later metric when the kept value is empty/N/A or zero
  (§9.3);
- archive_csvs copies with shutil.copy2, the extra tables once per name (§8.1);
- aicore.db of device_0 is opened twice, as the script does: once for the summary's balance
  section and once for per_core_cycles.csv (§9.4);
- summary.txt has the script's sections (§8.2), built from the merged row.

An earlier version built the candidate list over every row and formatted little of the summary;
it read and scanned more than the script does and took 27.8 s at 200,000 rows where the public
script takes 9.21 s on the same machine class, so the ratio it gave overstated npuperf's lead.

Used by evidence_bench to compare wall time and peak RSS.
Usage: evidence_bench_reference.py <PROF_GROUP> <ops_dir> <op_name>
"""
import csv
import glob
import os
import re
import shutil
import sqlite3
import statistics
import sys

METRICS = ["PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB",
           "L2Cache", "ResourceConflictRatio"]
EMPTY = (None, "", "N/A", "NA")


def to_float(value, default=0.0):
    if value is None:
        return default
    text = str(value).strip().rstrip("\t ")
    if text in ("", "N/A", "NA", "-"):
        return default
    try:
        return float(text)
    except (TypeError, ValueError):
        return default


def op_summary_of(metric_dir):
    found = sorted(glob.glob(os.path.join(metric_dir, "**", "mindstudio_profiler_output",
                                          "op_summary_*.csv"), recursive=True))
    return found[-1] if found else None


def load_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, "r", encoding="utf-8", errors="replace") as handle:
        return list(csv.DictReader(handle))


def target_row(rows, name):
    if not rows:
        return None
    if name:
        for row in rows:
            if row.get("Op Name", "").strip() == name:
                return row
    kernels = [r for r in rows if any(t in r.get("Task Type", "") for t in ("AI_CORE", "AIV", "MIX"))]
    return max(kernels or rows, key=lambda r: to_float(r.get("Task Duration(us)")))


def fold_into(merged, row):
    for key, value in row.items():
        if key in (None, ""):
            continue
        if key not in merged:
            merged[key] = value
            continue
        kept = merged[key]
        if kept in EMPTY and value not in EMPTY:
            merged[key] = value
        elif to_float(kept) == 0 and to_float(value) != 0:
            merged[key] = value


def merged_row(group, name):
    merged = {"_sources": {}, "_missing": []}
    for metric in METRICS:
        metric_dir = os.path.join(group, "PROF_" + metric)
        path = op_summary_of(metric_dir) if os.path.isdir(metric_dir) else None
        row = target_row(load_rows(path), name) if path else None
        if row is None:
            merged["_missing"].append(metric)
            continue
        merged["_sources"][metric] = path
        fold_into(merged, row)
    return merged


def core_cycles(group):
    found = glob.glob(os.path.join(group, "PROF_Sample", "PROF_*", "device_0", "sqlite", "aicore.db"))
    if not found:
        return []
    try:
        con = sqlite3.connect(sorted(found)[-1])
        rows = list(con.execute("SELECT coreid, SUM(task_cyc) FROM AICoreOriginalData WHERE task_cyc>0 "
                                "GROUP BY coreid ORDER BY coreid"))
        con.close()
        return [(int(c), int(s)) for c, s in rows if c is not None]
    except sqlite3.Error:
        return []


def balance_lines(merged, group):
    cores = core_cycles(group)
    aicore_us = to_float(merged.get("aicore_time(us)"))
    if not cores or aicore_us <= 0 or max(c for _, c in cores) <= 0:
        return []
    ns_per_cycle = aicore_us * 1000.0 / max(c for _, c in cores)
    times = [(core, cyc * ns_per_cycle / 1000.0) for core, cyc in cores]
    values = [t for _, t in times]
    spread = (max(values) - min(values)) / max(values) * 100.0
    out = ["", "--- per-core balance ---",
           "  cores: %d | clock: %.3f GHz" % (len(times), 1.0 / ns_per_cycle),
           "  min=%.3fus avg=%.3fus max=%.3fus" % (min(values), statistics.mean(values), max(values)),
           "  (max-min)/max = %.2f%%" % spread]
    ranked = sorted(times, key=lambda x: -x[1])
    out.append("  slowest: " + ", ".join("Core%d=%.2fus" % c for c in ranked[:3]))
    out.append("  fastest: " + ", ".join("Core%d=%.2fus" % c for c in ranked[-3:][::-1]))
    if len(times) >= 4:
        half = len(times) // 2
        front = statistics.mean(values[:half])
        back = statistics.mean(values[half:])
        gap = abs(front - back) / max(front, back) * 100.0
        if gap >= 2.0:
            out.append("  front %.2fus vs back %.2fus: %.2f%%" % (front, back, gap))
    return out


def ratio_text(merged, key):
    return "%6.2f%%" % (to_float(merged.get(key)) * 100.0)


def positive_lines(merged, title, fields, fmt):
    if not any(to_float(merged.get(k)) > 0 for _, k in fields):
        return []
    return ["", title] + [fmt % (label, to_float(merged.get(k))) for label, k in fields
                          if to_float(merged.get(k)) > 0]


def summary_text(merged, round_dir, group):
    duration = to_float(merged.get("Task Duration(us)"))
    aicore = to_float(merged.get("aicore_time(us)"))
    aiv = to_float(merged.get("aiv_time(us)"))
    lines = ["=== summary (msprof) ===", "Op: %s" % merged.get("Op Name", "unknown"),
             "Type: %s | TaskType: %s | Duration: %sus | BlockDim: %d (mix=%d)" % (
                 merged.get("OP Type", "unknown"), merged.get("Task Type", ""), duration,
                 int(to_float(merged.get("Block Num"))), int(to_float(merged.get("Mix Block Num"))))]
    if merged["_missing"]:
        lines.append("[WARN] missing: " + ", ".join(merged["_missing"]))
    for _ in range(2):  # the script prints its pipe-ratio block twice (§8.2)
        lines += ["", "--- Pipe ratios ---", "  aicore_time: %.3fus | aiv_time: %.3fus" % (aicore, aiv)]
        for core, keys in (("aic", ("mac", "cube", "mte1", "mte2", "mte3", "fixpipe", "scalar")),
                           ("aiv", ("vec", "scalar", "mte2", "mte3"))):
            parts = ["%s=%s" % (k, ratio_text(merged, "%s_%s_ratio" % (core, k))) for k in keys
                     if to_float(merged.get("%s_%s_ratio" % (core, k))) > 0]
            if parts:
                lines.append("  %s: %s" % (core, " | ".join(parts)))
    core_max = max(aicore, aiv)
    lines += ["", "--- head overhead ---", "  Task Duration: %sus | core max: %.3fus | overhead: %.3fus" % (
        duration, core_max, max(0.0, duration - core_max))]
    bw = "  %s: %.2f GB/s"
    lines += positive_lines(merged, "--- Memory ---", [(k, k) for k in (
        "aic_main_mem_read_bw(GB/s)", "aic_main_mem_write_bw(GB/s)", "aiv_main_mem_read_bw(GB/s)",
        "aiv_main_mem_write_bw(GB/s)", "aic_l1_read_bw(GB/s)", "aic_l1_write_bw(GB/s)",
        "aiv_ub_read_bw(GB/s)", "aiv_ub_write_bw(GB/s)")], bw)
    lines += positive_lines(merged, "--- MemoryL0 ---", [(k, k) for k in (
        "aic_l0a_read_bw(GB/s)", "aic_l0a_write_bw(GB/s)", "aic_l0b_read_bw(GB/s)",
        "aic_l0b_write_bw(GB/s)", "aic_l0c_read_bw_cube(GB/s)", "aic_l0c_write_bw_cube(GB/s)")], bw)
    lines += positive_lines(merged, "--- MemoryUB ---", [(k, k) for k in (
        "aiv_ub_read_bw_vector(GB/s)", "aiv_ub_write_bw_vector(GB/s)", "aic_ub_read_bw_scalar(GB/s)",
        "aic_ub_write_bw_scalar(GB/s)")], bw)
    for core in ("aic", "aiv"):
        hit = to_float(merged.get(core + "_read_local_l2_hit"))
        miss = to_float(merged.get(core + "_read_local_l2_miss"))
        if hit + miss > 0:
            lines.append("  %s read: hit=%d miss=%d hit_rate=%.2f%%" % (core, hit, miss, hit / (hit + miss) * 100))
    lines += positive_lines(merged, "--- ResourceConflict ---", [
        ("vec_bank_cflt", "aiv_vec_bank_cflt_ratio"), ("vec_resc_cflt", "aiv_vec_resc_cflt_ratio")], "  %s=%.4f")
    lines += balance_lines(merged, group)
    lines += ["", "--- sources ---", "  archive: %s/" % round_dir, "  PROF: %s/" % group]
    lines += ["  %-22s <- %s" % (m, merged["_sources"].get(m, "<MISSING>")) for m in METRICS]
    return "\n".join(lines)


def next_round(ops):
    perf = os.path.join(ops, "docs", "perf")
    if not os.path.exists(perf):
        return os.path.join(perf, "round_001")
    numbers = [int(re.search(r"\d+", d).group()) for d in os.listdir(perf) if re.match(r"round_\d+", d)]
    return os.path.join(perf, "round_%03d" % (max(numbers) + 1 if numbers else 1))


def archive(group, round_dir):
    os.makedirs(round_dir, exist_ok=True)
    copied = 0
    for metric in METRICS:
        metric_dir = os.path.join(group, "PROF_" + metric)
        path = op_summary_of(metric_dir) if os.path.isdir(metric_dir) else None
        if not path:
            continue
        shutil.copy2(path, os.path.join(round_dir, "op_summary_%s.csv" % metric))
        copied += 1
        for table in ("op_statistic_", "task_time_", "api_statistic_"):
            for found in sorted(glob.glob(os.path.join(os.path.dirname(path), table + "*.csv"))):
                dest = os.path.join(round_dir, "%s_%s.csv" % (table.rstrip("_"), metric))
                if not os.path.exists(dest):
                    shutil.copy2(found, dest)
                    copied += 1
                break
    return copied


def main():
    group, ops, name = sys.argv[1:4]
    merged = merged_row(group, name)
    round_dir = next_round(ops)
    archive(group, round_dir)
    cores = core_cycles(group)
    if cores:
        with open(os.path.join(round_dir, "per_core_cycles.csv"), "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["coreid", "task_cycles"])
            writer.writerows(cores)
    with open(os.path.join(round_dir, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(summary_text(merged, round_dir, group))
    return 0


if __name__ == "__main__":
    sys.exit(main())
