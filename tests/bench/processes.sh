# Sourced by the benchmarks that start the real binaries (false_alarm.sh, quick_batch_bench.sh):
# PIDS and VAR (set by the caller) are stopped and removed on exit, and first_line reads the
# address a binary logs at start.
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$VAR"
}
trap cleanup EXIT
first_line() {  # log pattern → the word after pattern
  for _ in $(seq 1 100); do
    if grep -q "$2" "$1" 2>/dev/null; then grep -m1 "$2" "$1" | sed "s/.*$2 \([^ ,]*\).*/\1/"; return 0; fi
    sleep 0.1
  done
  cat "$1" >&2; return 1
}
