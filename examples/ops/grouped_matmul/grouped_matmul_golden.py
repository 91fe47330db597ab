#!/usr/bin/env python3
"""Golden (torch_npu) implementation of grouped_matmul: one aclnnMatmul per group.

Under msprof-sim each aclnn kernel is reported through msprof_sim.launch.
`python3 grouped_matmul_golden.py --case-id <id>` runs one case of PERFORMANCE_CASES.json.
"""
import argparse
import json
import math
import os
import sys

try:
    import msprof_sim
except ImportError:
    msprof_sim = None

DT = {"fp16": "DT_FLOAT16", "bf16": "DT_BF16", "fp32": "DT_FLOAT", "int32": "DT_INT32"}
SIZE = {"fp16": 2, "bf16": 2, "fp32": 4, "int32": 4}


def launch(*args, **kwargs):
    if msprof_sim is not None:
        msprof_sim.launch(*args, **kwargs)


def cube_cores():
    return msprof_sim.cube_cores() if msprof_sim is not None else 24


def vector_cores():
    return msprof_sim.vector_cores() if msprof_sim is not None else 48


def elementwise(name, typ, n, dtype, reads=2, writes=1, ops=1, fp32=False):
    """One aclnn elementwise kernel over n elements."""
    es = SIZE[dtype]
    blocks = max(1, min(vector_cores(), n // 8192))
    launch(name, "AI_VECTOR_CORE", blocks, op_type=typ, inputs=[((n,), DT[dtype], "ND")] * reads,
           outputs=[((n,), DT[dtype], "ND")] * writes, gm_to_ub=reads * es * n, ub_to_gm=writes * es * n,
           scalar=100 + n / 1024, **({"vec_fp32": ops * n} if fp32 else {"vec_fp16": ops * n}))


def golden(shape, dtype):
    """for g in groups: y[g] = x[g] @ w[g] (one aclnnMatmul per group)."""
    g, m, k, n = shape
    es = SIZE[dtype]
    for _ in range(g):
        blocks = min(math.ceil(m / 128) * math.ceil(n / 256), cube_cores())
        launch("aclnnMatmul_MatMulV2_MatMulV2", "AI_CORE", blocks, op_type="MatMulV2",
               inputs=[((m, k), DT[dtype], "ND"), ((k, n), DT[dtype], "ND")], outputs=[((m, n), DT[dtype], "ND")],
               gm_to_l1=es * (m * k * math.ceil(n / 256) + k * n * math.ceil(m / 128)), l0c_to_gm=es * m * n,
               cube_fp16=m * k * n, scalar=blocks * 600, l2_hit=0.6)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--case-id", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "PERFORMANCE_CASES.json"), encoding="utf-8") as f:
        cases = {c["id"]: c for c in json.load(f)["cases"]}
    case = cases.get(p.parse_args(argv).case_id)
    if case is None:
        print("unknown case id", file=sys.stderr)
        return 2
    golden(json.loads(case["shape"]), case["dtype"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
