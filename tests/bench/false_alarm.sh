#!/usr/bin/env bash
# A/A false-alarm rate of the verdict engine at its defaults, end to end:
# npuperf-server + npuperf-agent + msprof-sim, the same six base operators
# profiled in N quick batches (7 repeats each), every consecutive pair of
# batches compared. Any verdict but STABLE is a false alarm.
#   tests/bench/false_alarm.sh [build dir] [batches, default 6]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
BATCHES=${2:-6}
BIN=$BUILD/bin
VAR=$(mktemp -d /tmp/npuperf-false-alarm.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$VAR"
}
trap cleanup EXIT
first_line() {  # log pattern → the address after pattern
  for _ in $(seq 1 100); do
    if grep -q "$2" "$1" 2>/dev/null; then grep -m1 "$2" "$1" | sed "s/.*$2 \([^ ,]*\).*/\1/"; return 0; fi
    sleep 0.1
  done
  cat "$1" >&2; return 1
}
"$BIN/npuperf-server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --db "sqlite:$VAR/db" --insecure-no-auth >"$VAR/server.log" 2>&1 &
PIDS+=($!)
export NPUPERF_SERVER=$(first_line "$VAR/server.log" "listening on")
mkdir -p "$VAR/locks" "$VAR/work" "$VAR/ops"
MSPROF_SIM_SOC_MAP="0-7=Ascend910B2" "$BIN/npuperf-agent" --server "$NPUPERF_SERVER" --devices 0-7 \
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
total=0 alarms=0
for ((i = 1; i < ${#ids[@]}; i++)); do
  "$BIN/npuperf" --format json compare "${ids[i-1]}" "${ids[i]}" >"$VAR/cmp$i.json" || true
  read -r n a < <(python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))['result']
cs=r.get('comparisons',[])
print(len(cs), sum(c['verdict']!='VERDICT_STABLE' for c in cs))
for c in cs:
    if c['verdict']!='VERDICT_STABLE': print(c['operator_name'], c['verdict'], c['rule'], file=sys.stderr)
" "$VAR/cmp$i.json")
  total=$((total + n)); alarms=$((alarms + a))
done
echo "false alarms at the defaults (alpha 0.01, 2%): $alarms of $total A/A comparisons" \
  "($BATCHES batches of 6 operators, 7 repeats each)"
