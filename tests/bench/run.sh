#!/usr/bin/env bash
# Runs every benchmark and prints its figures (never part of `make test`):
#   evidence_bench      summarize on 10 / 10,000 / 200,000-row groups vs the Python reference logic
#   timeline_bench      the streaming timeline reader on a generated 1 GB trace vs Python's json.load
#   store_bench         claims/s, rounds/s ingested, submit-to-lease p50/p99 with an idle agent waiting
#                       (one replica; on PostgreSQL also across two replicas), SQLite and a throwaway PostgreSQL
#   placement_bench     a skewed batch's makespan before/after history-aware placement, against the lower bound
#   canary_bench        the canary rule on seeded fleets: rounds to quarantine a 15 % slow chip, false
#                       quarantines over a simulated week, canary device time; then the same through the
#                       service (Canaries, Scheduler, SQLite, fake clock) and its server time per round
#   bisect_bench        the bisection rules on seeded 64-commit ranges: culprit found, wall and device runs
#                       with 1, 4 and 8 devices against binary bisections with the same verdicts
#   compare_bench       CompareRounds p50/p99 with 100,000 rounds stored, SQLite and PostgreSQL
#   false_alarm         A/A verdicts end to end (server + agent + msprof-sim), share not STABLE
#   sim_100k_kernels    msprof-sim on a process launching 100,000 kernels (7 metric runs + sample run)
#   upload_rss          the server's peak RSS beside 8 concurrent 60 MiB bundle uploads
#   quick_batch_bench   quick batches of every example operator through server + agent + msprof-sim: CLI wall,
#                       jobs/s, agent RPCs and CPU per job
#   submit_bench        `npuperf submit --manifest --no-wait` of 10,000 and 100,000 cases, CLI start to exit,
#                       and the first `npuperf get` page, SQLite and PostgreSQL
#   fleet_bench         a virtual fleet of 100-1,000 devices on two replicas over one PostgreSQL: jobs/s,
#                       utilisation, idle gaps, lease latency, CPU per 1,000 jobs, and per job the server
#                       methods and PostgreSQL statements (FLEET_BENCH_FLAGS, e.g. --quick)
# Then figures.py prints every tracked figure against tests/bench/baseline.json (the last accepted
# run): the ratio, and WORSE where one fell beyond its tolerance. BENCH_ACCEPT=1 writes this run's
# figures into baseline.json (commit it with the change that moved them).
# Usage: tests/bench/run.sh [build dir]   (the output is also kept in $BENCH_OUT, default a temp file)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
OUT=${BENCH_OUT:-$(mktemp /tmp/npuperf-bench.XXXXXX)}

benches() {

echo "== evidence_bench"
"$BUILD/bin/evidence_bench" --python="$ROOT/tests/bench/evidence_bench_reference.py"
echo
echo "== timeline_bench (1 GB generated trace, then json.load on it)"
bash "$ROOT/tests/bench/timeline_bench.sh" "$BUILD"
echo
echo "== store_bench (SQLite, then PostgreSQL)"
bash "$ROOT/deploy/with-postgres.sh" "$BUILD/bin/store_bench"
echo
echo "== placement_bench (64 jobs of 1-60 s on 8 devices, two seeds)"
"$BUILD/bin/placement_bench" --seed=18
"$BUILD/bin/placement_bench" --seed=7
echo
echo "== canary_bench (16 devices, 20 seeded trials, msprof-sim's noise)"
"$BUILD/bin/canary_bench"
echo
echo "== bisect_bench (64 commits, 10 seeded trials, msprof-sim's noise)"
"$BUILD/bin/bisect_bench"
echo
echo "== compare_bench (SQLite, then PostgreSQL; 100,000 rounds each)"
bash "$ROOT/deploy/with-postgres.sh" "$BUILD/bin/compare_bench"
echo
echo "== false_alarm (6 quick batches of the 6 base operators, consecutive pairs compared)"
bash "$ROOT/tests/bench/false_alarm.sh" "$BUILD" 6
echo
echo "== msprof-sim, 100,000 kernels"
sh "$ROOT/tests/bench/sim_100k_kernels.sh" "$BUILD" 100000
echo
echo "== upload_rss (8 concurrent 60 MiB uploads from 4 teams)"
bash "$ROOT/tests/bench/upload_rss.sh" "$BUILD" 8 60
echo
echo "== quick_batch_bench (3 quick batches of every example operator, server + agent + msprof-sim)"
bash "$ROOT/tests/bench/quick_batch_bench.sh" "$BUILD" 3
echo
echo "== submit_bench (npuperf submit of 10,000 and 100,000 cases, CLI start to exit)"
bash "$ROOT/deploy/with-postgres.sh" bash "$ROOT/tests/bench/submit_bench.sh" "$BUILD"
echo
echo "== fleet_bench (virtual fleet, 2 replicas, one PostgreSQL; 10 s and 1 s jobs)"
NPUPERF_BUILD_DIR="$BUILD" NPUPERF_SOURCE_DIR="$ROOT" \
  NPUPERF_PG_STATEMENTS=1 bash "$ROOT/deploy/with-postgres.sh" "$BUILD/bin/fleet_bench" ${FLEET_BENCH_FLAGS:-}
}

benches 2>&1 | tee "$OUT"
echo
echo "== figures against tests/bench/baseline.json (output kept in $OUT)"
python3 "$ROOT/tests/bench/figures.py" ${BENCH_ACCEPT:+--accept} "$OUT"
