#!/usr/bin/env python3
"""Python re-implementation of the reference standard-mode summarize hot path.

NOT the pypto-gym script itself (its code is not vendored here): a re-implementation
of msprof_perf_summary.py standard mode as reference-scripts.md describes it
(§8.1 layout and archiving, §9.1 safe_float, §9.2 non-strict pick_target_row,
§9.3 merge_metric_rows, §9.4 device_0 per-core loader), with the same library
calls (glob, csv.DictReader over the whole file, shutil.copy, sqlite3) so its
cost profile matches. Used by evidence_bench to compare wall time and peak RSS.

Usage: evidence_bench_reference.py <PROF_GROUP> <ops_dir> <op_name>
"""
import csv
import glob
import os
import shutil
import sqlite3
import sys

METRICS = ["PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB",
           "L2Cache", "ResourceConflictRatio"]


def safe_float(v, default=0.0):
    if v is None:
        return default
    s = str(v).strip().rstrip("\t")
    if s in ("", "N/A", "NA", "-"):
        return default
    try:
        return float(s)
    except ValueError:
        return default


def find_op_summary(group, metric):
    hits = sorted(glob.glob(os.path.join(group, "PROF_" + metric, "**", "mindstudio_profiler_output",
                                         "op_summary_*.csv"), recursive=True))
    return hits[-1] if hits else None


def read_rows(path):
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        return list(csv.DictReader(f))


def pick_target_row(rows, op_name):
    matches = [r for r in rows if (r.get("Op Name") or "").strip() == op_name]
    if not matches:
        matches = [r for r in rows if "AI_CORE" in (r.get("Task Type") or "")]
    best = None
    for r in matches:
        if best is None or safe_float(r.get("Task Duration(us)")) > safe_float(best.get("Task Duration(us)")):
            best = r
    return best


def merge_metric_rows(group, op_name):
    merged, missing, sources = {}, [], {}
    for metric in METRICS:
        path = find_op_summary(group, metric)
        row = pick_target_row(read_rows(path), op_name) if path else None
        if row is None:
            missing.append(metric)
            continue
        sources[metric] = path
        for k, v in row.items():
            if not k:
                continue
            cur = merged.get(k)
            if k not in merged:
                merged[k] = v
            elif cur in (None, "", "N/A", "NA") and v not in (None, ""):
                merged[k] = v
            elif safe_float(cur) == 0 and safe_float(v) != 0:
                merged[k] = v
    return merged, missing, sources


def next_round(ops):
    perf = os.path.join(ops, "docs", "perf")
    os.makedirs(perf, exist_ok=True)
    best = 0
    for name in os.listdir(perf):
        if name.startswith("round_") and name[6:9].isdigit():
            best = max(best, int(name[6:9]))
    path = os.path.join(perf, "round_%03d" % (best + 1))
    os.makedirs(path)
    return path


def archive(group, round_dir):
    n = 0
    for metric in METRICS:
        path = find_op_summary(group, metric)
        if not path:
            continue
        shutil.copy(path, os.path.join(round_dir, "op_summary_%s.csv" % metric))
        n += 1
        folder = os.path.dirname(path)
        for table in ("op_statistic", "task_time", "api_statistic"):
            hits = sorted(glob.glob(os.path.join(folder, table + "_*.csv")))
            dest = os.path.join(round_dir, "%s_%s.csv" % (table, metric))
            if hits and not os.path.exists(dest):
                shutil.copy(hits[0], dest)
                n += 1
    return n


def per_core(group):
    dbs = sorted(glob.glob(os.path.join(group, "PROF_Sample", "PROF_*", "device_0", "sqlite", "aicore.db")))
    if not dbs:
        return []
    try:
        con = sqlite3.connect("file:%s?mode=ro" % dbs[-1], uri=True)
        rows = con.execute("SELECT coreid, SUM(task_cyc) FROM AICoreOriginalData WHERE task_cyc>0 "
                           "GROUP BY coreid ORDER BY coreid").fetchall()
        con.close()
        return [(int(c), int(s)) for c, s in rows if c is not None]
    except sqlite3.Error:
        return []


def main():
    group, ops, op_name = sys.argv[1:4]
    merged, missing, sources = merge_metric_rows(group, op_name)
    round_dir = next_round(ops)
    n = archive(group, round_dir)
    cores = per_core(group)
    with open(os.path.join(round_dir, "per_core_cycles.csv"), "w") as f:
        f.write("coreid,task_cycles\n" + "".join("%d,%d\n" % c for c in cores))
    dur = safe_float(merged.get("Task Duration(us)"))
    core = max(safe_float(merged.get("aicore_time(us)")), safe_float(merged.get("aiv_time(us)")))
    lines = ["Op: %s" % merged.get("Op Name"), "Duration: %rus" % dur,
             "head overhead: %.3fus" % max(0.0, dur - core), "missing: %s" % ",".join(missing),
             "archived: %d" % n, "cores: %d" % len(cores)]
    with open(os.path.join(round_dir, "summary.txt"), "w") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    main()
