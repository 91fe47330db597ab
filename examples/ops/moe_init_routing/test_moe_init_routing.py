#!/usr/bin/env python3
"""Stage-4 runner for moe_init_routing: expert ids -> sorted token permutation.

Vector kernel, scalar-bound: per (token, k) slot the kernel does index
arithmetic, a per-expert counting sort and bounds checks in scalar code;
the data moved is small (int32 indices), so the scalar pipe dominates.

Usage: python3 test_moe_init_routing.py [--case-id <id>]   (cases: PERFORMANCE_CASES.json)
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
KERNEL = "_Z23moe_init_routing_kernelPiS_S_S_iii"
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
    t, k, e = shape
    return [t * k, t * k]


def output_size(shape):
    t, k, e = shape
    return t * k


def reference_check(shape, seed=42):
    """The counting-sort permutation in plain Python is a stable argsort."""
    rng = random.Random(seed)
    ids = [rng.randrange(8) for _ in range(200)]
    counts = [0] * 9
    for x in ids:
        counts[x + 1] += 1
    for i in range(8):
        counts[i + 1] += counts[i]
    order = [0] * len(ids)
    for i, x in enumerate(ids):
        order[counts[x]] = i
        counts[x] += 1
    return order == sorted(range(len(ids)), key=lambda i: ids[i])


def run_kernel(shape, dtype):
    """The target: few blocks (per expert-range histograms), scalar index loops."""
    t, k, e = shape
    n = t * k
    blocks = min(8, vector_cores(), max(1, e // 8))
    ids = ((t, k), "DT_INT32", "ND")
    launch(KERNEL, "AI_VECTOR_CORE", blocks, op_type=KERNEL, inputs=[ids, ids],
           outputs=[((n,), "DT_INT32", "ND"), ((n,), "DT_INT32", "ND"), ((e,), "DT_INT32", "ND")],
           gm_to_ub=8 * n + blocks * 4 * n // blocks, ub_to_gm=8 * n + 4 * e, vec_int32=4 * n,
           scalar=n * 46 + e * 220, icache_miss=0.06, skew=0.2, l2_hit=0.8)


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
