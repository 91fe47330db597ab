#!/usr/bin/env bash
# The streaming timeline reader against Python's json module on the same
# generated trace (issue 32: 1 GB in <= 10 s, memory flat in the file size).
# Generates a trace of SIZE bytes (default 1e9) with timeline_bench --generate,
# then prints timeline_bench's figures (time, MB/s, peak RSS) and those of
# `json.load` on the same file (time, peak RSS). Never part of ctest.
#   tests/bench/timeline_bench.sh [build dir] [SIZE bytes, default 1000000000]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
SIZE=${2:-1000000000}
VAR=$(mktemp -d /tmp/npuperf-timeline-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$VAR"' EXIT
TRACE=$VAR/msprof_20260101000000.json

"$BUILD/bin/timeline_bench" --generate "$TRACE" --bytes "$SIZE"
echo "trace: $(stat -c %s "$TRACE") bytes"
# A smaller file first: the peak RSS must not grow with the size.
"$BUILD/bin/timeline_bench" --generate "$VAR/small.json" --bytes $((SIZE / 10))
"$BUILD/bin/timeline_bench" "$VAR/small.json"
"$BUILD/bin/timeline_bench" "$TRACE"
python3 - "$TRACE" <<'PY'
import json, resource, sys, time
start = time.monotonic()
with open(sys.argv[1]) as f:
    events = json.load(f)
s = time.monotonic() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"python json.load: {len(events)} events in {s:.2f} s, peak RSS {rss:.1f} MB")
PY
