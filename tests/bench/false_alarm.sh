#!/usr/bin/env bash
# A/A false-alarm rate of the verdict engine at its defaults, end to end:
# npuperf-server + npuperf-agent + msprof-sim, the same six base operators
# profiled in N quick batches (7 repeats each), every consecutive pair of
# batches compared. Any verdict but STABLE is a false alarm.
#   tests/bench/false_alarm.sh [build dir] [batches, default 6]
# Measured noise (docs/comparisons.md, "Measured noise"), by environment:
#   NOISE=0.05          msprof-sim's MSPROF_SIM_NOISE (relative sd per launch; default 0.01)
#   CALIBRATE_RUNS=5    then `npuperf calibrate` batch 1 with that many A/A runs, compare the same
#                       pairs again and print both rates (default 0: no calibration)
#   PAIRS=all           compare every pair of batches, not only consecutive ones
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
BATCHES=${2:-6}
BIN=$BUILD/bin
VAR=$(mktemp -d /tmp/npuperf-false-alarm.XXXXXX)
. "$ROOT/tests/bench/processes.sh"  # PIDS, cleanup on exit, first_line
"$BIN/npuperf-server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --db "sqlite:$VAR/db" --insecure-no-auth >"$VAR/server.log" 2>&1 &
PIDS+=($!)
export NPUPERF_SERVER=$(first_line "$VAR/server.log" "listening on")
mkdir -p "$VAR/locks" "$VAR/work" "$VAR/ops"
NOISE=${NOISE:-0.01}
CALIBRATE_RUNS=${CALIBRATE_RUNS:-0}
PAIRS=${PAIRS:-consecutive}
MSPROF_SIM_NOISE="$NOISE" MSPROF_SIM_SOC_MAP="0-7=Ascend910B2" "$BIN/npuperf-agent" --server "$NPUPERF_SERVER" --devices 0-7 \
  --soc-map 0-7=Ascend910B2 --msprof "$BUILD/sim-bin/msprof" --lock-dir "$VAR/locks" \
  --work-dir "$VAR/work" --metrics-listen 127.0.0.1:0 --run-as-self >"$VAR/agent.log" 2>&1 &
PIDS+=($!)
first_line "$VAR/agent.log" "metrics on" >/dev/null
for dir in "$ROOT"/examples/ops/*/; do
  case $(basename "$dir") in *_v2) ;; *) cp -r "$dir" "$VAR/ops/" ;; esac
done
ids=()
for i in $(seq 1 "$BATCHES"); do
  "$BIN/npuperf" --format json submit --batch "$VAR/ops" --quick --repeats 7 --warm-up 0 \
    --op-name-map "$ROOT/deploy/demo-op-names.json" --label aa="$i" 2>/dev/null >"$VAR/batch$i.json"
  ids+=("$(grep -m1 '"id"' "$VAR/batch$i.json" | sed 's/.*"id": "\([^"]*\)".*/\1/')")
done
pairs=()
for ((i = 1; i < ${#ids[@]}; i++)); do
  if [ "$PAIRS" = all ]; then
    for ((j = 0; j < i; j++)); do pairs+=("$j $i"); done
  else
    pairs+=("$((i - 1)) $i")
  fi
done
count_alarms() {  # label → "false alarms ..." line; every pair compared at the server's thresholds
  local total=0 alarms=0 n a far k=0
  local fars=()
  for p in "${pairs[@]}"; do
    read -r i j <<<"$p"
    k=$((k + 1))
    "$BIN/npuperf" --format json compare "${ids[i]}" "${ids[j]}" >"$VAR/cmp-$1-$k.json" || true
    read -r n a far < <(python3 -c "
import json,math,sys
r=json.load(open(sys.argv[1]))['result']
cs=r.get('comparisons',[])
fars=[float(c['duration'].get('expected_false_alarm_rate','nan')) for c in cs]
fars=[f for f in fars if not math.isnan(f)]
print(len(cs), sum(c['verdict']!='VERDICT_STABLE' for c in cs), sum(fars)/len(fars) if fars else 'nan')
for c in cs:
    if c['verdict']!='VERDICT_STABLE': print(c['operator_name'], c['verdict'], c['rule'], file=sys.stderr)
" "$VAR/cmp-$1-$k.json")
    total=$((total + n)); alarms=$((alarms + a)); fars+=("$far")
  done
  local expected
  expected=$(python3 -c "
import math,sys
v=[float(x) for x in sys.argv[1:] if x!='nan']
print('n/a' if not v else '%.2f %%' % (100*sum(v)/len(v)))" "${fars[@]}")
  echo "false alarms $1: $alarms of $total A/A comparisons" \
    "($(python3 -c "print('%.1f %%' % (100*$alarms/max($total,1)))")); expected by the rule: $expected" \
    "($BATCHES batches of 6 operators, 7 repeats each, MSPROF_SIM_NOISE=$NOISE, ${#pairs[@]} $PAIRS pairs)"
}
count_alarms "at the defaults (alpha 0.01, 2%)"
if [ "$CALIBRATE_RUNS" -gt 0 ]; then
  "$BIN/npuperf" --timeout 120 calibrate "${ids[0]}" --runs "$CALIBRATE_RUNS" --wait >"$VAR/calibration.txt"
  sed 's/^/  /' "$VAR/calibration.txt"
  count_alarms "calibrated (max(2%, 3 x spread))"
fi
