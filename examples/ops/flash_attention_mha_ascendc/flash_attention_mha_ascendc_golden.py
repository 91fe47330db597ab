#!/usr/bin/env python3
"""Golden (torch_npu) implementation of flash_attention_mha: BatchMatMul + Muls + SoftmaxV2 + BatchMatMul (scores in HBM).

Under msprof-sim each aclnn kernel is reported through msprof_sim.launch.
`python3 flash_attention_mha_ascendc_golden.py --case-id <id>` runs one case of PERFORMANCE_CASES.json.
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
    """scores = q @ k.T * scale; p = softmax(scores); out = p @ v (four kernels)."""
    b, n, s, d = shape
    es = SIZE[dtype]
    heads, scores = b * n, b * n * s * s
    blocks = min(heads * math.ceil(s / 128), cube_cores())
    q = ((b, n, s, d), DT[dtype], "ND")
    sc = ((b, n, s, s), DT[dtype], "ND")
    launch("aclnnBatchMatMul_BatchMatMulV2_BatchMatMulV2", "AI_CORE", blocks, op_type="BatchMatMulV2",
           inputs=[q, q], outputs=[sc], gm_to_l1=2 * es * heads * s * d * max(1, s // 256),
           l0c_to_gm=es * scores, cube_fp16=scores * d, scalar=blocks * 800, l2_hit=0.6)
    elementwise("aclnnMuls_Muls_Muls", "Muls", scores, dtype, reads=1)
    vb = min(vector_cores(), heads * s)
    launch("aclnnSoftmax_SoftmaxV2_SoftmaxV2", "AI_VECTOR_CORE", vb, op_type="SoftmaxV2", inputs=[sc],
           outputs=[sc], gm_to_ub=es * scores, ub_to_gm=es * scores, vec_fp32=6 * scores,
           vec_fp16=2 * scores, scalar=heads * s * 12)
    launch("aclnnBatchMatMul_BatchMatMulV2_BatchMatMulV2", "AI_CORE", blocks, op_type="BatchMatMulV2",
           inputs=[sc, q], outputs=[q], gm_to_l1=es * scores + es * heads * s * d * max(1, s // 256),
           l0c_to_gm=es * heads * s * d, cube_fp16=scores * d, scalar=blocks * 800, l2_hit=0.5)


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
