#!/usr/bin/env bash
# What a quick batch costs end to end (issue 36), with the real binaries: npuperf-server on SQLite,
# one npuperf-agent with 8 msprof-sim devices, and `npuperf submit --batch examples/ops --quick`
# (every example operator, 3 repeats, 1 warm-up) run ROUNDS times one after another. Prints the
# CLI's wall time per batch (start to exit, waiting), jobs/s, and per job the agent RPCs the server
# answered (ReportProgress, ReportResult, LeaseJob) and its CPU (server + agent, from /proc).
# BACKLOG=N first queues a manifest of N cases for a SoC the agent does not have, so every batch
# runs beside N queued jobs that no claim can take (a team's big manifest waiting for other
# hardware; issue 36: each lease on SQLite read every queued job).
# Usage: [AGENT=other/npuperf-agent] [BACKLOG=N] tests/bench/quick_batch_bench.sh [build dir] [rounds]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
ROUNDS=${2:-3}
BIN=$BUILD/bin
AGENT=${AGENT:-$BIN/npuperf-agent}  # another build's agent, to compare
BACKLOG=${BACKLOG:-0}
VAR=$(mktemp -d /tmp/npuperf-quick-batch.XXXXXX)
. "$ROOT/tests/bench/processes.sh"  # PIDS, cleanup on exit, first_line
. "$ROOT/tests/bench/manifests.sh"  # make_ops, EXAMPLE_OP_NAME
cpu_seconds() {  # pid → user + system CPU seconds so far
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}
counter() {  # metric text, method → the request count of that method (every status)
  awk -v m="method=\"$2\"" '$1 ~ /^npuperf_server_grpc_requests_total/ && index($1, m) { s += $2 } END { print s + 0 }' "$1"
}

"$BIN/npuperf-server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --db "sqlite:$VAR/db" \
  --insecure-no-auth --max-jobs-per-collection $(( BACKLOG > 100000 ? BACKLOG : 100000 )) \
  --max-queued-jobs-per-team $(( BACKLOG + 100000 )) >"$VAR/server.log" 2>&1 &
SERVER_PID=$!
PIDS+=($SERVER_PID)
export NPUPERF_SERVER=$(first_line "$VAR/server.log" "listening on")
METRICS=$(first_line "$VAR/server.log" "metrics")
mkdir -p "$VAR/locks" "$VAR/work"
MSPROF_SIM_SOC_MAP="0-7=Ascend910B2" MSPROF_SIM_STATE_DIR="$VAR/sim-state" \
  "$AGENT" --server "$NPUPERF_SERVER" --devices 0-7 --soc-map 0-7=Ascend910B2 \
  --msprof "$BUILD/sim-bin/msprof" --lock-dir "$VAR/locks" --work-dir "$VAR/work" --run-as-self \
  >"$VAR/agent.log" 2>&1 &
AGENT_PID=$!
PIDS+=($AGENT_PID)
for _ in $(seq 1 100); do
  "$BIN/npuperf" agents 2>/dev/null | grep -q "0-7\|8 devices\|idle" && break
  sleep 0.1
done

if [ "$BACKLOG" -gt 0 ]; then
  mapfile -t OPS < <(make_ops "$BACKLOG")
  "$BIN/npuperf" submit --manifest --case-arg --case-id --no-wait --quick --label bench=backlog \
    --soc Ascend310P3 --op-name "$EXAMPLE_OP_NAME" "${OPS[@]}" >/dev/null
  echo "quick batch: beside $BACKLOG queued jobs for another SoC"
fi

fetch() { python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://$METRICS/metrics').read().decode())" >"$1"; }
fetch "$VAR/m0"
CPU0_S=$(cpu_seconds $SERVER_PID)
CPU0_A=$(cpu_seconds $AGENT_PID)
JOBS=0
WALL=0
for r in $(seq 1 "$ROUNDS"); do
  START=$(date +%s.%N)
  "$BIN/npuperf" --format json submit --batch "$ROOT/examples/ops" --quick --repeats 3 --warm-up 1 \
    --op-name-map "$ROOT/deploy/demo-op-names.json" --label bench=quick-batch >"$VAR/batch.json" \
    2>"$VAR/cli.err" || { cat "$VAR/cli.err" >&2; exit 1; }
  END=$(date +%s.%N)
  N=$(python3 -c "import json; print(len(json.load(open('$VAR/batch.json'))['jobs']))")
  T=$(python3 -c "print($END - $START)")
  printf 'quick batch: round %d: %d jobs on 8 devices in %.2f s at the CLI\n' "$r" "$N" "$T"
  JOBS=$((JOBS + N))
  WALL=$(python3 -c "print($WALL + $T)")
done
fetch "$VAR/m1"
CPU1_S=$(cpu_seconds $SERVER_PID)
CPU1_A=$(cpu_seconds $AGENT_PID)
per_job() { python3 -c "print('%.2f' % (($2 - $1) / $JOBS))"; }
PROGRESS=$(per_job "$(counter "$VAR/m0" ReportProgress)" "$(counter "$VAR/m1" ReportProgress)")
RESULTS=$(per_job "$(counter "$VAR/m0" ReportResult)" "$(counter "$VAR/m1" ReportResult)")
LEASES=$(per_job "$(counter "$VAR/m0" LeaseJob)" "$(counter "$VAR/m1" LeaseJob)")
printf 'quick batch: %d jobs in %.2f s: %.2f jobs/s\n' "$JOBS" "$WALL" "$(python3 -c "print($JOBS / $WALL)")"
echo "quick batch: per job ReportProgress $PROGRESS, ReportResult $RESULTS, LeaseJob $LEASES calls"
python3 -c "print('quick batch: CPU per job: server %.1f ms, agent %.1f ms' % (1e3 * ($CPU1_S - $CPU0_S) / $JOBS, 1e3 * ($CPU1_A - $CPU0_A) / $JOBS))"
