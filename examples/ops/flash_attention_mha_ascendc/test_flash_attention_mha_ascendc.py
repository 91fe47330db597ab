#!/usr/bin/env python3
"""Ascend C runner for flash_attention_mha: softmax(Q K^T / sqrt(D)) V, fused.

The Ascend C implementation of the operator (the base of `npuperf compare-impl`
against the PyPTO one in ../flash_attention_mha): same cases, another
directory and kernel name. MIX_AIC with 128-row query tiles: the scores go
through GM between the cube and vector cores (FIXPIPE to GM, MTE2 back into
UB), K and V are re-streamed twice as often, and the tiles of the last wave
leave cores idle.

Usage: python3 test_flash_attention_mha_ascendc.py [--case-id <id>]   (cases: PERFORMANCE_CASES.json)
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
KERNEL = "FlashAttentionScore_3e1f9b2d7c6a5048_10"
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
    return [b * n * s * d] * 3


def output_size(shape):
    b, n, s, d = shape
    return b * n * s * d


def reference_check(shape, seed=42):
    """Softmax rows sum to one after the max-shift used by the online softmax."""
    rng = random.Random(seed)
    row = [rng.gauss(0, 3) for _ in range(min(shape[2], 512))]
    m = max(row)
    e = [math.exp(v - m) for v in row]
    return abs(sum(v / sum(e) for v in e) - 1.0) < 1e-9


def run_kernel(shape, dtype):
    """The target: 128-row query tiles, scores through GM."""
    b, n, s, d = shape
    es = SIZE[dtype]
    heads, tiles = b * n, b * n * math.ceil(s / 128)
    blocks = min(tiles, cube_cores())
    q = ((b, n, s, d), DT[dtype], "ND")
    launch(KERNEL, "MIX_AIC", blocks, 2 * blocks, op_type=KERNEL, inputs=[q, q, q], outputs=[q],
           gm_to_l1=es * heads * s * d + tiles * 2 * es * s * d, cube_fp16=2 * heads * s * s * d,
           l0c_to_gm=4 * heads * s * s + 4 * heads * s * d, gm_to_ub=4 * heads * s * s,
           ub_to_gm=es * heads * s * s + es * heads * s * d, vec_fp32=7 * heads * s * s,
           vec_fp16=heads * s * s, scalar=tiles * 3000, l2_hit=0.8, overlap=0.6, skew=0.25)


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
