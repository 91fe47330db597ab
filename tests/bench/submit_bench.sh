#!/usr/bin/env bash
# What a user waits for at the CLI (issue 36): `npuperf submit --manifest --no-wait` of an operator
# directories whose PERFORMANCE_CASES.json hold N cases in all (10,000 per operator at most), from the CLI's start to its exit, on the embedded
# SQLite and (with NPUPERF_TEST_PG_URL, as under deploy/with-postgres.sh) on PostgreSQL. Then the
# whole `npuperf get` of that collection (every GetCollection page). Each figure is the median of
# RUNS runs on a fresh collection (a new idempotency key each time).
#   tests/bench/submit_bench.sh [build dir] [N,... default 10000,100000] [RUNS, default 3]
# Prints one line per backend and size:
#   submit_bench <backend> <N> cases: cli <median s> s (min .. max) | status page <median s> s
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
SIZES=${2:-10000,100000}
RUNS=${3:-3}
BIN=$BUILD/bin
VAR=$(mktemp -d /tmp/npuperf-submit-bench.XXXXXX)
SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  SERVER_PID=""
}
cleanup() {
  stop_server
  [ -n "${KEEP:-}" ] || rm -rf "$VAR"
}
trap cleanup EXIT

. "$ROOT/tests/bench/manifests.sh"  # make_ops, EXAMPLE_OP_NAME
start_server() {  # db url
  "$BIN/npuperf-server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --db "$1" \
    --insecure-no-auth --upload-dir "$VAR/uploads" --max-jobs-per-collection 200000 \
    >"$VAR/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 300); do grep -q "listening on" "$VAR/server.log" && break; sleep 0.1; done
  grep -m1 "listening on" "$VAR/server.log" | sed 's/.*listening on \([^ ]*\).*/\1/'
}

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)], v[1], v[NR]}'; }

bench() {  # backend db
  local addr
  addr=$(start_server "$2")
  if [ -z "$addr" ]; then echo "submit_bench $1: the server did not start"; cat "$VAR/server.log"; return 1; fi
  for n in ${SIZES//,/ }; do
    local ops times status_times id
    mapfile -t ops < <(make_ops "$n")
    times="" status_times=""
    for r in $(seq 1 "$RUNS"); do
      local t0 t1
      # The CLI's output goes to a file: the figure is the CLI's, not a reader's parse of it.
      t0=$(date +%s.%N)
      "$BIN/npuperf" --server "$addr" --format json submit --manifest --case-arg --case-id --no-wait --quick \
        --op-name "$EXAMPLE_OP_NAME" --idempotency-key "bench-$1-$n-$r-$$" "${ops[@]}" \
        >"$VAR/submit.json" 2>/dev/null
      t1=$(date +%s.%N)
      id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$VAR/submit.json")
      times+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"$'\n'
      t0=$(date +%s.%N)
      "$BIN/npuperf" --server "$addr" get "$id" >/dev/null
      t1=$(date +%s.%N)
      status_times+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"$'\n'
      "$BIN/npuperf" --server "$addr" cancel "$id" >/dev/null 2>&1 || true
    done
    read -r med lo hi < <(printf '%s' "$times" | median)
    read -r smed _ _ < <(printf '%s' "$status_times" | median)
    printf 'submit_bench %-8s %6d cases: cli %6.3f s (%.3f .. %.3f, %d runs) | status page %6.3f s\n' \
      "$1" "$n" "$med" "$lo" "$hi" "$RUNS" "$smed"
  done
  stop_server
}

bench sqlite "sqlite:$VAR/npuperf.db"
if [ -n "${NPUPERF_TEST_PG_URL:-}" ]; then
  bench postgres "$NPUPERF_TEST_PG_URL"
else
  echo "submit_bench postgres skipped: NPUPERF_TEST_PG_URL is not set"
fi
