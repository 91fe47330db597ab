#!/usr/bin/env python3
"""Ascend C runner for inplace_add_rmsnorm: x += residual; y = rmsnorm(x) * gamma.

The Ascend C implementation of the operator (the base of `npuperf compare-impl`
against the PyPTO one in ../inplace_add_rmsnorm): same cases, another
directory and kernel name. Two passes per row block: the first sums squares
of x + residual, the second reads x and residual again to normalise, with
separate fp16<->fp32 casts; whole rows are dealt to the blocks by a fixed
tiling, so uneven row counts leave some cores with more work.

Usage: python3 test_inplace_add_rmsnorm_ascendc.py [--case-id <id>]   (cases: PERFORMANCE_CASES.json)
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
KERNEL = "InplaceAddRmsNorm_9f3c1a7e0b2d4c65_high_performance_10000001"
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
    rows, hidden = shape
    return [rows * hidden, rows * hidden, hidden]


def output_size(shape):
    return shape[0] * shape[1]


def reference_check(shape, seed=42):
    """One row of the op in plain Python: rmsnorm output has unit mean square / gamma."""
    rng = random.Random(seed)
    width = min(shape[1], 256)
    s = [rng.gauss(0, 1) + rng.gauss(0, 1) for _ in range(width)]
    g = [rng.gauss(1, 0.1) for _ in range(width)]
    inv = 1.0 / math.sqrt(sum(v * v for v in s) / width + 1e-6)
    y = [v * inv * w for v, w in zip(s, g)]
    return abs(sum((v / w) ** 2 for v, w in zip(y, g)) / width - 1.0) < 1e-3


def run_kernel(shape, dtype):
    """The target: two passes per row block, whole rows per block."""
    rows, hidden = shape
    es = SIZE[dtype]
    blocks = min(rows, vector_cores())
    t = ((rows, hidden), DT[dtype], "ND")
    g = ((hidden,), DT[dtype], "ND")
    launch(KERNEL, "AI_VECTOR_CORE", blocks, op_type=KERNEL, inputs=[t, t, g], outputs=[t, t],
           gm_to_ub=4 * es * rows * hidden + blocks * es * hidden, ub_to_gm=2 * es * rows * hidden,
           vec_fp32=7 * rows * hidden, vec_fp16=6 * rows * hidden,
           scalar=rows * 90 + rows * math.ceil(hidden / 2048) * 60, l2_hit=0.3, skew=0.3)


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
