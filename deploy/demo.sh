#!/usr/bin/env bash
# The main job, end to end on one machine: npuperf-server (embedded SQLite
# under ./var/), one npuperf-agent serving 8 simulated devices of two SoCs
# through msprof-sim, a real batch over every example operator, its report,
# then a clean stop. Run by `make demo` after the build.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BIN=$BUILD/bin
VAR=$ROOT/var
rm -rf "$VAR"
mkdir -p "$VAR/locks" "$VAR/work"

PIDS=()
stop_all() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_all EXIT

# Waits for the first log line of a process and prints the address it names.
address_from_log() {
  local log=$1 pattern=$2
  for _ in $(seq 1 100); do
    if grep -q "$pattern" "$log" 2>/dev/null; then
      grep -m1 "$pattern" "$log" | sed "s/.*$pattern \([^ ,]*\).*/\1/"
      return 0
    fi
    sleep 0.1
  done
  echo "demo: no '$pattern' in $log" >&2
  cat "$log" >&2
  return 1
}

"$BIN/npuperf-server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  --db "sqlite:$VAR/npuperf.db" --insecure-no-auth --canary-interval 1m >"$VAR/server.log" 2>&1 &
PIDS+=($!)
SERVER=$(address_from_log "$VAR/server.log" "listening on")
echo "demo: npuperf-server on $SERVER (log var/server.log)"

MSPROF_SIM_SOC_MAP="0-3=Ascend910B2,4-7=Ascend950PR_9589" MSPROF_SIM_STATE_DIR="$VAR/sim-state" \
MSPROF_SIM_CONFLICT_LOG="$VAR/sim-conflicts.log" \
  "$BIN/npuperf-agent" --server "$SERVER" --devices 0-7 \
  --soc-map 0-3=Ascend910B2,4-7=Ascend950PR_9589 --msprof "$BUILD/sim-bin/msprof" \
  --npu-smi "$BUILD/sim-bin/npu-smi" \
  --lock-dir "$VAR/locks" --work-dir "$VAR/work" --metrics-listen 127.0.0.1:0 \
  --run-as-self \
  >"$VAR/agent.log" 2>&1 &
PIDS+=($!)
METRICS=$(address_from_log "$VAR/agent.log" "metrics on")
echo "demo: npuperf-agent serving devices 0-7 (metrics $METRICS, log var/agent.log)"

export NPUPERF_SERVER=$SERVER
START=$(date +%s.%N)
echo "demo: standard-mode batch (7 metric runs + sample run per job) over every example operator"
set +e
"$BIN/npuperf" --format json submit --batch "$ROOT/examples/ops" \
  --op-name-map "$ROOT/deploy/demo-op-names.json" --label demo=standard >"$VAR/batch.json"
rc=$?
set -e
END=$(date +%s.%N)
COLLECTION=$(grep -m1 '"id"' "$VAR/batch.json" | sed 's/.*"id": "\([^"]*\)".*/\1/')
"$BIN/npuperf" get "$COLLECTION"
echo
echo "demo: evidence per operator (bound from pipe ratios, per-core balance from the sample run)"
"$BIN/npuperf" rounds --collection "$COLLECTION"
if [ $rc -ne 0 ]; then echo "demo: the batch did not fully succeed (exit $rc)" >&2; exit $rc; fi
printf 'demo: batch took %.1f s\n' "$(echo "$END - $START" | bc -l 2>/dev/null || python3 -c "print($END-$START)")"
# Where the batch time went, from measured numbers only: the jobs' lease and
# finish times (server) and the agent's per-phase job timings (its /metrics).
python3 "$ROOT/deploy/overhead.py" --batch-json "$VAR/batch.json" --metrics "http://$METRICS/metrics" \
  --start "$START" --end "$END" --devices 8 || echo "demo: no overhead breakdown" >&2

# Before/after an optimisation: a baseline batch of the base operators and a
# candidate batch where the _v2 runners replaced their base operator's code
# (as a developer's edit would), quick mode, 7 repeats each, one SoC so the
# rounds are comparable. Then the verdict table, the bot's JSON, a pinned
# baseline and the regression listing.
BASE_OPS=$VAR/ops-baseline CAND_OPS=$VAR/ops-candidate
mkdir -p "$BASE_OPS" "$CAND_OPS"
for dir in "$ROOT"/examples/ops/*/; do
  op=$(basename "$dir")
  case $op in *_v2 | *_ascendc) continue ;; esac
  cp -r "$dir" "$BASE_OPS/$op"
  cp -r "$dir" "$CAND_OPS/$op"
  if [ -d "$ROOT/examples/ops/${op}_v2" ]; then
    cp "$ROOT/examples/ops/${op}_v2/test_${op}_v2.py" "$CAND_OPS/$op/test_${op}.py"
  fi
done
comparison_batch() {  # name dir → prints the collection id
  "$BIN/npuperf" --format json submit --batch "$2" --quick --repeats 7 --soc Ascend910B2 \
    --op-name-map "$ROOT/deploy/demo-op-names.json" --label demo="$1" >"$VAR/$1.json" || {
    echo "demo: the $1 batch failed" >&2; cat "$VAR/$1.json" >&2; exit 1; }
  grep -m1 '"id"' "$VAR/$1.json" | sed 's/.*"id": "\([^"]*\)".*/\1/'
}
echo
echo "demo: baseline and candidate batches (quick mode, 7 repeats, Ascend910B2)"
CMP_START=$(date +%s)
BASE_COLLECTION=$(comparison_batch baseline "$BASE_OPS")
CAND_COLLECTION=$(comparison_batch candidate "$CAND_OPS")
echo "demo: both batches took $(( $(date +%s) - CMP_START )) s"
echo "demo: npuperf compare $BASE_COLLECTION $CAND_COLLECTION"
set +e
"$BIN/npuperf" compare "$BASE_COLLECTION" "$CAND_COLLECTION"
rc=$?
"$BIN/npuperf" --format json compare "$BASE_COLLECTION" "$CAND_COLLECTION" >"$VAR/compare.json"
set -e
echo "demo: compare exited $rc (0 nothing regressed, 3 regressed, 4 no verdict); JSON in var/compare.json"
"$BIN/npuperf" baseline pin demo=main "$BASE_COLLECTION"
set +e
"$BIN/npuperf" regressions --baseline demo=main --collection "$CAND_COLLECTION"
echo "demo: regressions exited $?"
set -e
# The same from Python (docs/python.md): the package pip-installed into a venv
# under var/, then the five lines of the README against this server (one
# operator, its _v2 code as the candidate, Ascend910B2 for comparable rounds).
if /usr/bin/python3 -c "import grpc, grpc_tools.protoc, google.protobuf, venv" 2>/dev/null; then
  echo
  echo "demo: the README's five Python lines (pip install ./python into var/venv)"
  mkdir -p "$VAR/pysrc" "$VAR/py-ops"
  cp -r "$ROOT/python" "$ROOT/proto" "$VAR/pysrc/"
  cp -r "$BASE_OPS/interleave_rope" "$VAR/py-ops/"
  /usr/bin/python3 -m venv --system-site-packages "$VAR/venv"
  "$VAR/venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation --no-index \
    "$VAR/pysrc/python"
  set +e
  (cd "$VAR" && NPUPERF_SERVER=$SERVER "$VAR/venv/bin/python" - <<'PY'
import npuperf
c = npuperf.Client()                                   # NPUPERF_SERVER / NPUPERF_TOKEN / config file
base = c.submit(batch="py-ops/", op_name_map="../deploy/demo-op-names.json", mode="quick", repeats=7, labels={"branch": "main"}, socs=["Ascend910B2"]).wait()
cand = c.submit("ops-candidate/interleave_rope", op_name="_Z22interleave_rope_kernelPDhS_S_S_iiii", mode="quick", repeats=7, socs=["Ascend910B2"]).wait(timeout=600)
v = c.compare(base.id, cand.id); print(v.summary); raise SystemExit(v.exit_code)   # 0 / 3 / 4 as the CLI
PY
  )
  echo "demo: the Python verdict exited $? (0 nothing regressed, 3 regressed, 4 no verdict)"
  set -e
fi
# PyPTO against Ascend C (docs/comparisons.md "Implementations", docs/reports.md "Release
# report"): four operators in their PyPTO form (examples/ops/<op>) and their Ascend C form
# (examples/ops/<op>_ascendc: another directory and kernel, the same cases), standard mode so
# that both scopes are measured (the core time of the swimlane, Task Duration of profiling), 5
# repeats, one SoC. Then the release report's table: scenarios and the PyPTO / Ascend C ratio in
# both scopes per operator, with the arithmetic and the geometric mean.
IMPL_OPS=(inplace_add_rmsnorm interleave_rope flash_attention_mha apply_adam)
impl_batch() {  # name dir... -> prints the collection id
  local name=$1
  shift
  "$BIN/npuperf" --format json submit "$@" --repeats 5 --soc Ascend910B2 \
    --op-name-map "$ROOT/deploy/demo-op-names.json" --label demo="$name" >"$VAR/$name.json" || {
    echo "demo: the $name batch failed" >&2; cat "$VAR/$name.json" >&2; exit 1; }
  grep -m1 '"id"' "$VAR/$name.json" | sed 's/.*"id": "\([^"]*\)".*/\1/'
}
PAIRS=$VAR/pairs.txt
echo "# PyPTO operator = its Ascend C implementation" >"$PAIRS"
ASC_DIRS=() PTO_DIRS=()
for op in "${IMPL_OPS[@]}"; do
  echo "$op=${op}_ascendc" >>"$PAIRS"
  ASC_DIRS+=("$ROOT/examples/ops/${op}_ascendc")
  PTO_DIRS+=("$ROOT/examples/ops/$op")
done
echo
echo "demo: Ascend C and PyPTO batches of ${IMPL_OPS[*]} (standard mode, 5 repeats, Ascend910B2)"
ASC_COLLECTION=$(impl_batch ascendc "${ASC_DIRS[@]}")
PTO_COLLECTION=$(impl_batch pypto "${PTO_DIRS[@]}")
echo "demo: npuperf compare-impl $ASC_COLLECTION $PTO_COLLECTION --pair-map var/pairs.txt"
set +e
"$BIN/npuperf" compare-impl "$ASC_COLLECTION" "$PTO_COLLECTION" --pair-map "$PAIRS"
echo "demo: compare-impl exited $? (0 ok, 3 a PyPTO case slower, 4 no verdict)"
"$BIN/npuperf" compare-impl "$ASC_COLLECTION" "$PTO_COLLECTION" --pair-map "$PAIRS" \
  --format html >"$VAR/compare-impl.html"
echo
echo "demo: npuperf release-report $PTO_COLLECTION --groups deploy/demo-model-groups.txt --baseline $ASC_COLLECTION"
"$BIN/npuperf" release-report "$PTO_COLLECTION" --groups "$ROOT/deploy/demo-model-groups.txt" \
  --baseline "$ASC_COLLECTION" --pair-map "$PAIRS" --format markdown
"$BIN/npuperf" release-report "$PTO_COLLECTION" --groups "$ROOT/deploy/demo-model-groups.txt" \
  --baseline "$ASC_COLLECTION" --pair-map "$PAIRS" --format html >"$VAR/release-report.html"
rc=$?
set -e
if [ $rc -ne 0 ]; then echo "demo: release-report failed (exit $rc)" >&2; exit $rc; fi
echo "demo: pages in var/compare-impl.html and var/release-report.html (ratio bar charts)"
if [ -s "$VAR/sim-conflicts.log" ]; then
  echo "demo: msprof-sim saw a double-booked device:" >&2
  cat "$VAR/sim-conflicts.log" >&2
  exit 1
fi
echo "demo: the canaries the idle devices ran (npuperf devices canaries; the server's --canary-interval 1m)"
"$BIN/npuperf" devices canaries --limit 16 || true
echo "demo: no device was double-booked; stopping"
