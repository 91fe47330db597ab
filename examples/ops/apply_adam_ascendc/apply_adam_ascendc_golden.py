#!/usr/bin/env python3
"""Golden (torch_npu) implementation of apply_adam: the torch.optim.Adam foreach sequence (8 elementwise kernels).

Under msprof-sim each aclnn kernel is reported through msprof_sim.launch.
`python3 apply_adam_ascendc_golden.py --case-id <id>` runs one case of PERFORMANCE_CASES.json.
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
    """m.mul_(b1).add_(g, 1-b1); v.mul_(b2).addcmul_(g, g, 1-b2); p.addcdiv_(m, v.sqrt().add_(eps), -lr)."""
    (n,) = shape
    for name, typ, reads in (("aclnnInplaceMul_Muls_Muls", "Muls", 1), ("aclnnInplaceAdd_Axpy_Axpy", "Axpy", 2),
                             ("aclnnInplaceMul_Muls_Muls", "Muls", 1), ("aclnnInplaceAddcmul_Addcmul_Addcmul", "Addcmul", 3),
                             ("aclnnSqrt_Sqrt_Sqrt", "Sqrt", 1), ("aclnnInplaceAdds_Adds_Adds", "Adds", 1),
                             ("aclnnInplaceAddcdiv_Addcdiv_Addcdiv", "Addcdiv", 3)):
        elementwise(name, typ, n, dtype, reads=reads, ops=2, fp32=True)


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
