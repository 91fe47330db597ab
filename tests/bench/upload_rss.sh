#!/usr/bin/env bash
# What concurrent bundle uploads cost the server's memory (issue 13: 8 concurrent
# 60 MiB uploads once peaked at 1.17 GB RSS, because uploads were held whole).
# Starts npuperf-server (SQLite, 4 teams), then `npuperf submit` of N operator
# directories at once (2 per team, each holding SIZE MiB of random bytes, so the
# bundle does not compress), and prints the server's RSS before and its peak
# (VmHWM) after, with the ratio of the peak to the bytes in flight.
#   tests/bench/upload_rss.sh [build dir] [N, default 8] [SIZE MiB, default 60]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
N=${2:-8}
SIZE=${3:-60}
BIN=$BUILD/bin
VAR=$(mktemp -d /tmp/npuperf-upload-rss.XXXXXX)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$VAR"
}
trap cleanup EXIT
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

for t in 0 1 2 3; do
  echo "team t$t $(printf 't%s-token' "$t" | sha256sum | cut -d' ' -f1)"
done >"$VAR/tokens"
"$BIN/npuperf-server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --db "sqlite:$VAR/db" \
  --tokens-file "$VAR/tokens" --upload-dir "$VAR/uploads" >"$VAR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do grep -q "listening on" "$VAR/server.log" && break; sleep 0.1; done
ADDR=$(grep -m1 "listening on" "$VAR/server.log" | sed 's/.*listening on \([^ ]*\).*/\1/')

for i in $(seq 1 "$N"); do
  op="$VAR/ops/op$i"
  mkdir -p "$op"
  cp "$ROOT/examples/ops/inplace_add_rmsnorm/"* "$op/"
  head -c "$((SIZE * 1024 * 1024))" /dev/urandom >"$op/weights.bin"
done
before=$(status_kib "$SERVER_PID" VmRSS)
start=$(date +%s.%N)
pids=()
for i in $(seq 1 "$N"); do
  team=$(( (i - 1) % 4 ))
  "$BIN/npuperf" --server "$ADDR" --token "t$team-token" submit --quick --no-wait \
    --op-name _Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii "$VAR/ops/op$i" >"$VAR/submit$i.log" 2>&1 &
  pids+=($!)
done
ok=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || true
  if grep -q '^[0-9a-f-]\{8,\}\|queued\|collection' "$VAR/submit$((i + 1)).log"; then ok=$((ok + 1)); fi
done
secs=$(echo "$(date +%s.%N) - $start" | bc)
peak=$(status_kib "$SERVER_PID" VmHWM)
stored=$(sqlite3 "$VAR/db" "SELECT COUNT(*) FROM bundles" 2>/dev/null || echo "?")
echo "uploads: $N concurrent x $SIZE MiB ($((N * SIZE)) MiB in flight), $ok submitted, $stored bundles stored, ${secs%.*} s"
echo "server RSS before: $((before / 1024)) MiB; peak (VmHWM): $((peak / 1024)) MiB"
echo "peak / bytes in flight: $(echo "scale=2; $peak / 1024 / ($N * $SIZE)" | bc)  (1.17 GB peak for 480 MiB before streaming: 2.44)"
