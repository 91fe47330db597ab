#!/usr/bin/env python3
"""Golden (torch_npu) implementation of inplace_add_rmsnorm: two aclnn kernels.

x = torch.add(x, residual); y = torch_npu.npu_rms_norm(x, gamma)[0]
Under msprof-sim each aclnn kernel is reported through msprof_sim.launch.
`python3 inplace_add_rmsnorm_golden.py --case-id <id>` runs one case.
"""
import argparse
import json
import os
import sys

try:
    import msprof_sim
except ImportError:
    msprof_sim = None

SIZE = {"fp16": 2, "bf16": 2, "fp32": 4}
DT = {"fp16": "DT_FLOAT16", "bf16": "DT_BF16", "fp32": "DT_FLOAT"}


def _cases():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "PERFORMANCE_CASES.json")
    with open(path, encoding="utf-8") as f:
        return {c["id"]: c for c in json.load(f)["cases"]}


def inplace_add_rmsnorm_golden(rows, hidden, dtype):
    if msprof_sim is None:
        return
    n, es = rows * hidden, SIZE[dtype]
    blocks = max(1, min(msprof_sim.vector_cores(), rows))
    t = ((rows, hidden), DT[dtype], "ND")
    msprof_sim.launch("aclnnAdd_AddAiCore_Add", "AI_VECTOR_CORE", blocks, op_type="Add",
                      inputs=[t, t], outputs=[t], gm_to_ub=2 * es * n, ub_to_gm=es * n,
                      vec_fp16=n, scalar=100 + rows * 8)
    msprof_sim.launch("aclnnRmsNorm_RmsNorm_RmsNorm", "AI_VECTOR_CORE", blocks, op_type="RmsNorm",
                      inputs=[t, ((hidden,), DT[dtype], "ND")], outputs=[t, ((rows, 1), "DT_FLOAT", "ND")],
                      gm_to_ub=es * n + es * hidden * blocks, ub_to_gm=es * n + 4 * rows,
                      vec_fp32=6 * n, vec_fp16=2 * n, scalar=rows * 90)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--case-id", required=True)
    case = _cases().get(p.parse_args(argv).case_id)
    if case is None:
        print("unknown case id", file=sys.stderr)
        return 2
    rows, hidden = json.loads(case["shape"])
    inplace_add_rmsnorm_golden(rows, hidden, case["dtype"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
