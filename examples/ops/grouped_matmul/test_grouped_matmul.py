#!/usr/bin/env python3
"""Stage-4 runner for grouped_matmul: y[g] = x[g] @ w[g] for G expert groups.

AI_CORE (cube-only) kernel, cube-bound: 256x256 base tiles, weights streamed
once per 256-row tile. Uneven tokens per group give blocks different work.

Usage: python3 test_grouped_matmul.py [--case-id <id>]   (cases: PERFORMANCE_CASES.json)
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
KERNEL = "_Z21grouped_matmul_kernelPDhS_S_Piiii"
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


def group_rows(shape, seed=42):
    """Uneven tokens per group (MoE-like), summing to G * M."""
    g, m, k, n = shape
    rng = random.Random(seed)
    w = [rng.uniform(0.4, 1.6) for _ in range(g)]
    rows = [max(16, int(m * g * x / sum(w))) for x in w]
    return rows


def input_sizes(shape):
    g, m, k, n = shape
    return [g * m * k, g * k * n]


def output_size(shape):
    g, m, k, n = shape
    return g * m * n


def reference_check(shape, seed=42):
    """A tiny matmul in plain Python equals its transpose identity (A B)^T = B^T A^T."""
    rng = random.Random(seed)
    a = [[rng.gauss(0, 1) for _ in range(4)] for _ in range(3)]
    b = [[rng.gauss(0, 1) for _ in range(5)] for _ in range(4)]
    ab = [[sum(a[i][t] * b[t][j] for t in range(4)) for j in range(5)] for i in range(3)]
    bt_at = [[sum(b[t][j] * a[i][t] for t in range(4)) for i in range(3)] for j in range(5)]
    return all(abs(ab[i][j] - bt_at[j][i]) < 1e-12 for i in range(3) for j in range(5))


def run_kernel(shape, dtype):
    """The target: one launch over all groups, 256x256 output tiles."""
    g, m, k, n = shape
    es = SIZE[dtype]
    rows = group_rows(shape)
    tiles = sum(math.ceil(r / 256) for r in rows) * math.ceil(n / 256)
    blocks = min(tiles, cube_cores())
    launch(KERNEL, "AI_CORE", blocks, op_type=KERNEL,
           inputs=[((sum(rows), k), DT[dtype], "ND"), ((g, k, n), DT[dtype], "ND"), ((g,), "DT_INT64", "ND")],
           outputs=[((sum(rows), n), DT[dtype], "ND")], cube_fp16=sum(rows) * k * n,
           gm_to_l1=es * (sum(rows) * k * math.ceil(n / 1024) + sum(math.ceil(r / 512) for r in rows) * k * n),
           l0c_to_gm=es * sum(rows) * n, scalar=tiles * 900, skew=0.3, l2_hit=0.65)


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
