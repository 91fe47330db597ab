#!/usr/bin/env python3
"""Ascend C runner for interleave_rope: rotary embedding on interleaved pairs.

The Ascend C implementation of the operator (the base of `npuperf compare-impl`
against the PyPTO one in ../interleave_rope): same cases, another directory
and kernel name. Pairs are gathered with per-element address computation
(scalar-heavy) and two shuffles, and cos/sin are reloaded per 64 rows.

Usage: python3 test_interleave_rope_ascendc.py [--case-id <id>]   (cases: PERFORMANCE_CASES.json)
Prints exactly one PYPTO_PERF_SELECTED_CASE=<id> line; an unknown id exits 2.
Kernel launches are reported to msprof-sim when it runs this script (the
msprof_sim helper is a no-op otherwise, and optional).
"""
import argparse
import importlib
import json
import math
import os
import random
import sys

try:
    import msprof_sim
except ImportError:
    msprof_sim = None

HERE = os.path.dirname(os.path.abspath(__file__))
OP_DIR = os.path.basename(HERE)
DEFAULT_CASE = "p0"
KERNEL = "InterleaveRope_5c0de2b19a7f3e41_1"
DT = {"fp16": "DT_FLOAT16", "bf16": "DT_BF16", "fp32": "DT_FLOAT", "int32": "DT_INT32"}
SIZE = {"fp16": 2, "bf16": 2, "fp32": 4, "int32": 4}


def launch(*args, **kwargs):
    if msprof_sim is not None:
        msprof_sim.launch(*args, **kwargs)


def cube_cores():
    return msprof_sim.cube_cores() if msprof_sim is not None else 24


def vector_cores():
    return msprof_sim.vector_cores() if msprof_sim is not None else 48


def load_cases():
    with open(os.path.join(HERE, "PERFORMANCE_CASES.json"), encoding="utf-8") as f:
        return {c["id"]: c for c in json.load(f)["cases"]}


def generate_inputs(sizes, dtype):
    """torch.randn per input tensor: StatelessNormal (fp32) then Cast to the case dtype."""
    for n in sizes:
        blocks = max(1, min(vector_cores(), n // 4096))
        launch("StatelessNormal", "AI_VECTOR_CORE", blocks, inputs=[((n,), "DT_FLOAT", "ND")],
               outputs=[((n,), "DT_FLOAT", "ND")], ub_to_gm=4 * n, vec_fp32=12 * n, vec_int32=6 * n,
               scalar=200 + n / 64)
        if dtype != "fp32":
            launch("Cast", "AI_VECTOR_CORE", blocks, inputs=[((n,), "DT_FLOAT", "ND")],
                   outputs=[((n,), DT[dtype], "ND")], gm_to_ub=4 * n, ub_to_gm=SIZE[dtype] * n,
                   vec_fp16=n, scalar=120 + n / 256)


def compare_outputs(n, dtype):
    """Golden comparison kernels (torch.isclose + all)."""
    blocks = max(1, min(vector_cores(), n // 8192))
    for name, typ in (("aclnnIsClose_IsClose_IsClose", "IsClose"), ("aclnnAll_ReduceAll_ReduceAll", "ReduceAll")):
        launch(name, "AI_VECTOR_CORE", blocks, op_type=typ, inputs=[((n,), DT[dtype], "ND")] * 2,
               outputs=[((n,), "DT_BOOL", "ND")], gm_to_ub=2 * SIZE[dtype] * n, ub_to_gm=n,
               vec_fp16=3 * n, scalar=80 + n / 512)


def input_sizes(shape):
    b, n, s, d = shape
    return [b * n * s * d, s * d, s * d]


def output_size(shape):
    b, n, s, d = shape
    return b * n * s * d


def reference_check(shape, seed=42):
    """Rotating interleaved pairs preserves each pair's norm."""
    rng = random.Random(seed)
    for _ in range(64):
        x0, x1, a = rng.gauss(0, 1), rng.gauss(0, 1), rng.uniform(0, 6.283)
        y0, y1 = x0 * math.cos(a) - x1 * math.sin(a), x1 * math.cos(a) + x0 * math.sin(a)
        if abs((y0 * y0 + y1 * y1) - (x0 * x0 + x1 * x1)) > 1e-9:
            return False
    return True


def run_kernel(shape, dtype):
    """The target: per-element pair gather, cos/sin reloaded per 64 rows."""
    b, n, s, d = shape
    total, es = b * n * s * d, SIZE[dtype]
    blocks = min(b * n, vector_cores())
    t = ((b, n, s, d), DT[dtype], "ND")
    c = ((s, d), DT[dtype], "ND")
    launch(KERNEL, "AI_VECTOR_CORE", blocks, op_type=KERNEL, inputs=[t, c, c], outputs=[t],
           gm_to_ub=es * total + b * n * math.ceil(s / 64) * 2 * es * 64 * d, ub_to_gm=es * total,
           vec_misc=5 * total, vec_fp32=4 * total, vec_fp16=3 * total, bank_conflict=0.7,
           scalar=b * n * math.ceil(s / 64) * 90, l2_hit=0.45, skew=0.2)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case-id", default=DEFAULT_CASE)
    args = parser.parse_args(argv)
    cases = load_cases()
    case = cases.get(args.case_id)
    if case is None:
        print("unknown case id %r (known: %s)" % (args.case_id, ", ".join(cases)), file=sys.stderr)
        return 2
    print("PYPTO_PERF_SELECTED_CASE=%s" % args.case_id, flush=True)
    shape, dtype = json.loads(case["shape"]), case["dtype"]
    generate_inputs(input_sizes(shape), dtype)
    run_kernel(shape, dtype)
    golden = importlib.import_module(OP_DIR + "_golden")
    golden.golden(shape, dtype)
    compare_outputs(output_size(shape), dtype)
    if not reference_check(shape):
        print("%s: reference check FAILED" % OP_DIR, file=sys.stderr)
        return 1
    print("%s case %s %s %s: PASS" % (OP_DIR, args.case_id, case["shape"], dtype))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
