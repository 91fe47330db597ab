# Sourced by the benchmarks that submit big manifests (submit_bench.sh, quick_batch_bench.sh).
# make_ops n: operator directories under $VAR/ops/n<n>/ (VAR set by the caller) holding n cases in
# all, at most 10,000 per operator (the server's limit): the example operator's files and a
# generated PERFORMANCE_CASES.json each. Prints their paths, one a line.
make_ops() {  # n
  local left=$1 k=0
  while [ "$left" -gt 0 ]; do
    local m=$(( left > 10000 ? 10000 : left )) op="$VAR/ops/n$1/op$k"
    mkdir -p "$op"
    cp "$ROOT/examples/ops/inplace_add_rmsnorm/"*.py "$op/"
    python3 - "$m" "$k" "$op/PERFORMANCE_CASES.json" <<'EOF2'
import json, sys
n, k = int(sys.argv[1]), int(sys.argv[2])
cases = [{"id": f"c{k}-{i}", "shape": f"[{16 + i % 4096}, 4096]", "dtype": "fp16"} for i in range(n)]
json.dump({"schema_version": 1, "cases": cases}, open(sys.argv[3], "w"))
EOF2
    echo "$op"
    left=$(( left - m )) k=$(( k + 1 ))
  done
}
# The kernel name of the example operator's cases (--op-name of a manifest submission).
EXAMPLE_OP_NAME=_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii
