#!/usr/bin/env bash
# Writes the seed corpora of the server fuzz targets (serialized protos) from the text protos
# below: bash tests/server/fuzz/make_corpus.sh (from the repository root; needs protoc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
encode() {  # message type, output file; text proto on stdin
  protoc -I"$root/proto" -I/usr/include --encode="$1" "$root/proto/npuperf/v1/collection_service.proto" \
    "$root/proto/npuperf/v1/evidence.proto" > "$2"
}
mkdir -p "$here/corpus/submission" "$here/corpus/evidence"
sha=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
encode npuperf.v1.SubmitCollectionRequest "$here/corpus/submission/single" <<EOT
spec { operators { name: "op" bundle_sha256: "$sha" op_name: "kernel" } }
EOT
encode npuperf.v1.SubmitCollectionRequest "$here/corpus/submission/cases" <<EOT
idempotency_key: "ci-7"
spec {
  kind: COLLECTION_KIND_MANIFEST description: "nightly"
  params { mode: PROFILE_MODE_QUICK repeats: 3 retry: 1 timeout_seconds: 60 }
  case_selector { case_env: "OP_CASE_ID" }
  labels { key: "branch" value: "main" }
  constraints { socs: "Ascend910B2" device_range: "0-3" host_labels { key: "rack" value: "r1" } }
  operators {
    name: "op" bundle_sha256: "$sha" runner: "tests/test_op.py" manifest_path: "cases/PERFORMANCE_CASES.json"
    case_ids: "p0" case_ids: "p1" op_name_map { key: "p0" value: "k0" } op_name_map { key: "p1" value: "k1" }
    launch: "all" launch_map { key: "p1" value: "task:48/7" }
  }
}
EOT
encode npuperf.v1.SubmitCollectionRequest "$here/corpus/submission/hostile" <<EOT
spec {
  case_selector { case_env: "LD_PRELOAD" }
  operators { name: "op" bundle_sha256: "$sha" op_name: "k" manifest_path: "../../../etc/shadow" }
}
EOT
encode npuperf.v1.Evidence "$here/corpus/evidence/honest" <<EOT
op_name: "main_kernel" operator_name: "op" case_id: "p0" block_num: 48
duration { samples_us: 12.5 samples_us: 12.7 aggregate_us: 12.6 method: AGGREGATION_METHOD_MEDIAN
           source: "op_summary.Task Duration(us)" }
metrics { group: "PipeUtilization" fields { key: "aiv_vec_ratio" value: 0.8 } fields { key: "aiv_time_us" value: 10 } }
per_core { status: "process_scope_unattributed" core_type: "AIV" cores { core_id: 0 cycles: 100 time_us: 1.5 }
           spread_pct: 3 verdict: "PASS" }
bound { label: "VEC_BOUND" primary_core: "AIV" routing_label: "compute_candidate" triggered_families: "compute"
        ratios { key: "aiv_vec_ratio" value: 0.8 } }
dvfs { status: "ok" observed_mhz: 1800 rated_mhz: 1800 source: "opprof.current_freq" }
errors { code: "RATIO_OUT_OF_RANGE" message: "pipe ratio aiv_mte2_ratio=1.2 is outside the verified CANN fraction range [0, 1]" }
fingerprint { soc: "Ascend910B2" mode: "quick" clock_state: "rated" argv: "python3" }
warnings: "a warning"
EOT
encode npuperf.v1.Evidence "$here/corpus/evidence/forged" <<EOT
duration { samples_us: inf samples_us: -5 aggregate_us: nan }
bound { label: "<script>" ratios { key: "r" value: 7.5 } }
EOT
