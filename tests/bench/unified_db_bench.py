#!/usr/bin/env python3
"""Issue 31 speed goal: a unified msprof_<ts>.db of N compute tasks (default
1,000,000) summarised by `npuperf summarize` (goal <= 2 s, memory not growing
with the file) and listed by `npuperf list-op-names` (goal <= 1 s), printed
beside the plain Python sqlite3 reading of the same file in the same run.

Not a timed test (style.md: speed goals live in tests/bench and print
figures). Usage:
  tests/bench/unified_db_bench.py [--npuperf build/bin/npuperf] [--tasks N] [--keep DIR]
                                  [--indexed]

The db is generated here with msprof's schema (msprof-output.md §5.4): TASK,
COMPUTE_TASK_INFO, TASK_PMU_INFO (12 metrics per task), AICORE_FREQ, NPU_INFO,
META_DATA, STRING_IDS, and no index, as msprof writes it (--indexed adds one
on each of TASK and COMPUTE_TASK_INFO, a what-if). One launch of the target
`add_custom`; the other tasks are five other kernels. Wall time and max RSS
come from /usr/bin/time.
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

PMU = [("aic_total_time", 0.0), ("aic_total_cycles", 0), ("aiv_total_time", 8.0),
       ("aiv_total_cycles", 115200), ("aiv_vec_time", 0.48), ("aiv_vec_ratio", 0.06),
       ("aiv_scalar_time", 7.76), ("aiv_scalar_ratio", 0.97), ("aiv_mte2_time", 4.0),
       ("aiv_mte2_ratio", 0.5), ("aiv_mte3_time", 2.64), ("aiv_mte3_ratio", 0.33)]
OTHERS = ["Cast", "MatMulV3", "aclnnAdd_AddAiCore_Add", "RmsNorm", "Softmax"]
START = 1778059616768656843


def generate(path, tasks, indexed):
    db = sqlite3.connect(path)
    db.executescript("""
      PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
      CREATE TABLE STRING_IDS(id INTEGER PRIMARY KEY, value TEXT);
      CREATE TABLE META_DATA(name TEXT, value TEXT);
      CREATE TABLE NPU_INFO(id INTEGER, name TEXT);
      CREATE TABLE AICORE_FREQ(deviceId INTEGER, timestampNs NUMERIC, freq INTEGER);
      CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
        globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
        streamId INTEGER, taskId INTEGER, modelId INTEGER);
      CREATE TABLE COMPUTE_TASK_INFO(name INTEGER, globalTaskId INTEGER,
        blockNum INTEGER, mixBlockNum INTEGER, taskType INTEGER, opType INTEGER,
        inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER,
        outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER, opState INTEGER,
        hf32Eligible INTEGER, gridDim INTEGER, blockDim INTEGER);
      CREATE TABLE TASK_PMU_INFO(globalTaskId INTEGER, name INTEGER, value NUMERIC);
      INSERT INTO META_DATA VALUES('SCHEMA_VERSION','1.2.0');
      INSERT INTO NPU_INFO VALUES(0,'Ascend910B');
    """)
    strings = {}

    def sid(s):
        if s not in strings:
            strings[s] = len(strings)
        return strings[s]

    names = [sid(n) for n in OTHERS]
    target = sid("add_custom")
    aiv, kaiv, nd, fl, shp, na = (sid("AI_VECTOR_CORE"), sid("KERNEL_AIVEC"), sid("ND"),
                                  sid("FLOAT"), sid("8,1024"), sid("N/A"))
    pmu_names = [(sid(n), v) for n, v in PMU]
    tgt_index = tasks // 2
    batch = 100000
    for lo in range(0, tasks, batch):
        task_rows, info_rows, pmu_rows = [], [], []
        for g in range(lo, min(tasks, lo + batch)):
            name = target if g == tgt_index else names[g % len(names)]
            start = START + g * 20000
            task_rows.append((start, start + 9220, 0, g, g, 1, kaiv, 0, 2, g % 65536, 4294967295))
            info_rows.append((name, g, 8, 0, aiv, name, nd, fl, shp, nd, fl, shp, na, na, na, 0, 0))
            pmu_rows.extend((g, n, v) for n, v in pmu_names)
        db.executemany("INSERT INTO TASK VALUES(?,?,?,?,?,?,?,?,?,?,?)", task_rows)
        db.executemany("INSERT INTO COMPUTE_TASK_INFO VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       info_rows)
        db.executemany("INSERT INTO TASK_PMU_INFO VALUES(?,?,?)", pmu_rows)
    db.executemany("INSERT INTO STRING_IDS VALUES(?,?)", [(i, s) for s, i in strings.items()])
    db.execute("INSERT INTO AICORE_FREQ VALUES(0, ?, 1800)", (START - 1000,))
    if indexed:  # not msprof's schema (msprof-output.md §5.4 lists no index): a what-if
        db.executescript("""
          CREATE INDEX TaskIndex ON TASK(startNs, globalTaskId);
          CREATE UNIQUE INDEX ComputeTaskIndex ON COMPUTE_TASK_INFO(globalTaskId);""")
    db.commit()
    db.close()


def python_reference(path):
    """What a plain sqlite3 script does for the same two answers."""
    t0 = time.perf_counter()
    db = sqlite3.connect(path)
    rows = db.execute("""
      SELECT s.value, COUNT(*), SUM(t.endNs - t.startNs) FROM COMPUTE_TASK_INFO c
      JOIN TASK t ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.name
      GROUP BY c.name""").fetchall()
    listed = time.perf_counter() - t0
    t0 = time.perf_counter()
    launches = db.execute("""
      SELECT t.globalTaskId, t.startNs, t.endNs FROM COMPUTE_TASK_INFO c
      JOIN TASK t ON t.globalTaskId = c.globalTaskId
      WHERE c.name = (SELECT id FROM STRING_IDS WHERE value = 'add_custom')""").fetchall()
    pmu = db.execute("SELECT name, value FROM TASK_PMU_INFO WHERE globalTaskId = ?",
                     (launches[0][0],)).fetchall()
    summarised = time.perf_counter() - t0
    db.close()
    return listed, summarised, len(rows), len(pmu)


def timed(cmd):
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True)
    last = out.stderr.strip().splitlines()[-1].split()
    return float(last[0]), int(last[1]), out.returncode, out.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--npuperf", default="build/bin/npuperf")
    ap.add_argument("--tasks", type=int, default=1000000)
    ap.add_argument("--keep", default="")
    ap.add_argument("--indexed", action="store_true",
                    help="also index TASK and COMPUTE_TASK_INFO (msprof's db has no index)")
    a = ap.parse_args()
    if not os.access(a.npuperf, os.X_OK):
        sys.exit(f"{a.npuperf}: not an executable (build the npuperf target, or pass --npuperf)")
    root = a.keep or tempfile.mkdtemp(prefix="npuperf_db_bench_")
    run = os.path.join(root, "PROF_000001_20260101000000000_ABCDEFGHIJKLMNOP")
    os.makedirs(run, exist_ok=True)
    path = os.path.join(run, "msprof_20260101000001.db")
    try:
        if not os.path.exists(path):
            t0 = time.perf_counter()
            generate(path, a.tasks, a.indexed)
            print(f"generated {a.tasks} tasks in {time.perf_counter() - t0:.1f} s, "
                  f"{os.path.getsize(path) / 2**20:.0f} MiB, "
                  f"{'indexed' if a.indexed else 'no index (as msprof writes it)'}")
        listed, summarised, kernels, metrics = python_reference(path)
        print(f"python sqlite3   list  {listed:6.2f} s ({kernels} kernels)   "
              f"target+pmu {summarised:6.2f} s ({metrics} metrics)")
        s, rss, rc, err = timed([a.npuperf, "list-op-names", root])
        print(f"npuperf list-op-names {s:6.2f} s  max RSS {rss / 1024:6.1f} MiB  exit {rc}  "
              f"(goal <= 1 s)")
        if rc:
            print(err, file=sys.stderr)
        ops = tempfile.mkdtemp(prefix="npuperf_db_bench_ops_")
        s, rss, rc, err = timed([a.npuperf, "summarize", root, ops, "--op-name", "add_custom",
                                 "--soc", "Ascend910B2", "--format", "json"])
        shutil.rmtree(ops, ignore_errors=True)
        print(f"npuperf summarize     {s:6.2f} s  max RSS {rss / 1024:6.1f} MiB  exit {rc}  "
              f"(goal <= 2 s)")
        if rc:
            print(err, file=sys.stderr)
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
