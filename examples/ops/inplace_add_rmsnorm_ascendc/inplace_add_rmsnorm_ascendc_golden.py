#!/usr/bin/env python3
"""Golden (torch_npu) implementation of inplace_add_rmsnorm: aclnn Add + RmsNorm (two kernels).

Under msprof-sim each aclnn kernel is reported through msprof_sim.launch.
`python3 inplace_add_rmsnorm_ascendc_golden.py --case-id <id>` runs one case of PERFORMANCE_CASES.json.
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
    """x = torch.add(x, residual); y = torch_npu.npu_rms_norm(x, gamma)[0]."""
    rows, hidden = shape
    n, es = rows * hidden, SIZE[dtype]
    blocks = max(1, min(vector_cores(), rows))
    t = ((rows, hidden), DT[dtype], "ND")
    launch("aclnnAdd_AddAiCore_Add", "AI_VECTOR_CORE", blocks, op_type="Add", inputs=[t, t],
           outputs=[t], gm_to_ub=2 * es * n, ub_to_gm=es * n, vec_fp16=n, scalar=100 + rows * 8)
    launch("aclnnRmsNorm_RmsNorm_RmsNorm", "AI_VECTOR_CORE", blocks, op_type="RmsNorm",
           inputs=[t, ((hidden,), DT[dtype], "ND")], outputs=[t, ((rows, 1), "DT_FLOAT", "ND")],
           gm_to_ub=es * n + es * hidden * blocks, ub_to_gm=es * n + 4 * rows,
           vec_fp32=6 * n, vec_fp16=2 * n, scalar=rows * 90)


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
