#!/usr/bin/env bash
# Builds a git repository to bisect (issue 34, docs/comparisons.md "Bisection"): the example
# operator apply_adam over COMMITS first-parent commits, each changing its operator directory:
#   CULPRIT  the runner's kernel re-reads a tensor (gm_to_ub 16n -> 20n bytes): under msprof-sim
#            the memory-bound kernel gets slower from this commit on
#   NOISY    comments only: nothing that runs changes
#   BROKEN   the runner exits 3 before it launches anything (a revision that does not build);
#            the next commit repairs it
#   others   a line appended to the operator's CHANGES.txt
# Usage: examples/bisect/make_repo.sh OUT_DIR [COMMITS=16] [CULPRIT=11] [NOISY=5] [BROKEN=8]
# Prints "good=<hash>", "bad=<hash>", "culprit=<hash>" (and noisy=, broken=).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: make_repo.sh OUT_DIR [COMMITS] [CULPRIT] [NOISY] [BROKEN]}
COMMITS=${2:-16}
CULPRIT=${3:-11}
NOISY=${4:-5}
BROKEN=${5:-8}
for v in COMMITS CULPRIT NOISY BROKEN; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "make_repo.sh: $v must be a number" >&2; exit 2; }
done
if ((COMMITS < 4 || COMMITS > 1024)); then echo "make_repo.sh: COMMITS must be 4..1024" >&2; exit 2; fi
for v in CULPRIT NOISY BROKEN; do
  if ((${!v} < 1 || ${!v} > COMMITS)); then echo "make_repo.sh: $v must be 1..$COMMITS" >&2; exit 2; fi
done
if ((CULPRIT == NOISY || CULPRIT == BROKEN || NOISY == BROKEN || BROKEN == COMMITS)); then
  echo "make_repo.sh: CULPRIT, NOISY and BROKEN must differ, and BROKEN < COMMITS" >&2
  exit 2
fi
if [ -e "$OUT" ]; then echo "make_repo.sh: $OUT exists" >&2; exit 2; fi

OP=ops/apply_adam
RUNNER=$OP/test_apply_adam.py
mkdir -p "$OUT/ops"
cp -r "$ROOT/examples/ops/apply_adam" "$OUT/$OP"
cd "$OUT"
git init -q -b main
git config user.name "npuperf example"
git config user.email "example@npuperf.invalid"
commit() { git add -A && git commit -q -m "$1" && git rev-parse HEAD; }
echo "good=$(commit "apply_adam: the example operator")"
for ((k = 1; k <= COMMITS; k++)); do
  if ((k == CULPRIT)); then
    grep -q "gm_to_ub=16 \* n" "$RUNNER"
    sed -i "s/gm_to_ub=16 \* n/gm_to_ub=20 * n/" "$RUNNER"
    h=$(commit "apply_adam: re-read m in the update (step $k)")
    echo "culprit=$h"
  elif ((k == NOISY)); then
    sed -i "s/^def run_kernel(shape, dtype):/# The fused update: one pass over param, grad, m and v.\ndef run_kernel(shape, dtype):/" "$RUNNER"
    h=$(commit "apply_adam: comments only (step $k)")
    echo "noisy=$h"
  elif ((k == BROKEN)); then
    sed -i "s/^def main(argv):/def main(argv):\n    sys.exit(3)  # work in progress: does not build/" "$RUNNER"
    h=$(commit "apply_adam: work in progress (step $k)")
    echo "broken=$h"
  elif ((k == BROKEN + 1)); then
    sed -i "/sys.exit(3)  # work in progress/d" "$RUNNER"
    commit "apply_adam: repair the runner (step $k)" >/dev/null
  else
    echo "step $k" >>"$OP/CHANGES.txt"
    commit "apply_adam: step $k" >/dev/null
  fi
done
echo "bad=$(git rev-parse HEAD)"
