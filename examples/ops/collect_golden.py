#!/usr/bin/env python3
"""Writes GOLDEN_PERF_REPORT.json/.md for example operators by profiling each
operator's <op>_golden.py under msprof-sim (the Golden machine contract of
reference-scripts.md §2.4 / §8.6; E2E = sum of every golden kernel's
op_summary Task Duration in one repeat, median over repeats).

Usage: collect_golden.py --msprof build/sim-bin/msprof examples/ops/<op> [...]
"""
import argparse
import csv
import glob
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

WARMUP, REPEATS, SEED, DEVICE = 3, 3, 42, 0


def source_record(path):
    data = open(path, "rb").read()
    return {"path": os.path.realpath(path), "sha256": hashlib.sha256(data).hexdigest(), "size_bytes": len(data)}


def profile_once(msprof, golden, case_id, seed, state_dir):
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, MSPROF_SIM_SEED=str(seed), MSPROF_SIM_STATE_DIR=state_dir,
                   TILE_FWK_DEVICE_ID=str(DEVICE))
        env.pop("ASCEND_RT_VISIBLE_DEVICES", None)
        cmd = [msprof, "--output=" + out, "--task-time=on", "--ascendcl=on", sys.executable, golden,
               "--case-id", case_id]
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        (summary,) = glob.glob(os.path.join(out, "PROF_*", "mindstudio_profiler_output", "op_summary_*.csv"))
        with open(summary, newline="") as f:
            return sum(float(r["Task Duration(us)"]) for r in csv.DictReader(f) if float(r["Task Duration(us)"]) > 0)


def collect(op_dir, msprof, state_dir):
    op = os.path.basename(os.path.normpath(op_dir))
    manifest_path = os.path.join(op_dir, "PERFORMANCE_CASES.json")
    golden = os.path.join(op_dir, op + "_golden.py")
    manifest = json.load(open(manifest_path))
    cases = []
    for i, case in enumerate(manifest["cases"]):
        raw = [round(profile_once(msprof, golden, case["id"], SEED * 1000 + i * 10 + r, state_dir), 3)
               for r in range(REPEATS)]
        med = statistics.median(raw)
        cases.append({"id": case["id"], "shape": case["shape"], "dtype": case["dtype"],
                      "raw_repeat_e2e_us": raw, "median_total_us": med, "per_iteration_e2e_us": med})
    manifest_rec = dict(source_record(manifest_path), schema_version=1)
    report = {"schema_version": 1, "golden_source": source_record(golden), "case_manifest_source": manifest_rec,
              "device_id": DEVICE, "iterations": 1, "warmup": WARMUP, "repeats": REPEATS, "seed": SEED,
              "timing_scope": "all_golden_npu_kernels", "aggregation": "median_of_repeat_totals", "cases": cases}
    with open(os.path.join(op_dir, "GOLDEN_PERF_REPORT.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    write_markdown(op_dir, cases)


def write_markdown(op_dir, cases):
    lines = ["# Golden NPU Performance Reference", "", "- **Device ID**: %d" % DEVICE, "- **Iterations**: 1",
             "- **Warmup**: %d" % WARMUP, "- **Repeats**: %d" % REPEATS, "- **Seed**: %d" % SEED, "",
             "## Performance Summary", "", "| case | Input Shape | dtype | Median E2E (us) |",
             "|------|-------------|-------|-----------------|"]
    lines += ["| %s | %s | %s | %.6f |" % (c["id"], c["shape"], c["dtype"], c["median_total_us"]) for c in cases]
    lines += ["", "## Raw Repeats", ""]
    lines += ["- `%s`: [%s] us" % (c["id"], ", ".join("%.6f" % v for v in c["raw_repeat_e2e_us"])) for c in cases]
    lines += ["", "All positive NPU kernel durations emitted by the Golden callable are included.",
              "Input preparation and warmup are outside each formal profiler region.",
              "(Collected under msprof-sim with examples/ops/collect_golden.py; simulated Ascend910B2.)", ""]
    with open(os.path.join(op_dir, "GOLDEN_PERF_REPORT.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--msprof", required=True)
    p.add_argument("op_dirs", nargs="+")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as state_dir:
        for d in a.op_dirs:
            collect(d, os.path.abspath(a.msprof), state_dir)
            print("wrote", os.path.join(d, "GOLDEN_PERF_REPORT.json"))


if __name__ == "__main__":
    main()
