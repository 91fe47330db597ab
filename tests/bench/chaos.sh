#!/usr/bin/env bash
# The chaos soak of issue #18 (docs/chaos.md): two npuperf-server replicas on a throwaway
# PostgreSQL, four agents on msprof-sim, >= 500 jobs of three teams (quick and standard mode,
# priorities -5/0/5), and faults at seeded random moments for 10 minutes (kill -9 of agents and
# replicas, pg_ctl restart -m immediate, SIGSTOP past the lease TTL, msprof-sim crash/hang/
# truncation, a full work dir); then the invariant checker and the report.
#   tests/bench/chaos.sh [--minutes M] [--seed S] [--jobs N] [--agents N] [--dir D] [build dir]
#   tests/bench/chaos.sh --quick      the 2-minute variant that `make test` runs (ctest chaos_test)
# Exit 0: every invariant held; 1: a violation (facts printed); 2: the soak could not run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${NPUPERF_BUILD_DIR:-$ROOT/build}
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    # The drain outlasts a hang armed near the end of the faults: the agent's next msprof run
    # hangs until the 60 s job timeout, then the job is retried (0.9 minutes was too short).
    --quick) ARGS+=(--minutes 1.2 --jobs 32 --drain-minutes 1.5); shift ;;
    --minutes|--seed|--jobs|--agents|--dir|--lease-ttl-ms|--drain-minutes) ARGS+=("$1" "$2"); shift 2 ;;
    -*) echo "chaos.sh: unknown flag $1" >&2; exit 2 ;;
    *) BUILD=$(cd "$1" && pwd); shift ;;
  esac
done
export NPUPERF_BUILD_DIR=$BUILD NPUPERF_SOURCE_DIR=$ROOT
if [ ! -x "$BUILD/bin/npuperf-chaos" ]; then
  echo "chaos.sh: $BUILD/bin/npuperf-chaos is missing (cmake --build $BUILD --target npuperf-chaos)" >&2
  exit 2
fi
exec "$BUILD/bin/npuperf-chaos" "${ARGS[@]}"
