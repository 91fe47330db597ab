#include "server/compare/canary_operator.h"

#include "common/bundle_tar.h"

namespace npuperf::server {
namespace {

// The runner, shaped like the example operators' (examples/ops/README.md):
// --case-id, one PYPTO_PERF_SELECTED_CASE line, exit 2 on an unknown case.
constexpr char kRunner[] = R"py(#!/usr/bin/env python3
"""npuperf's canary: one fp16 add of 8 Mi elements, the same job on every device of a SoC.

The server runs it in quick mode on idle devices and compares its kernel time
with the same SoC's other devices and with the device's own history
(docs/operations.md, "Canaries"). On an NPU host it runs torch.add through
torch_npu (kernel aclnnAdd_AddAiCore_Add); under msprof-sim it reports the same
kernel to the simulator.

Usage: python3 test_npuperf_canary.py [--case-id p0]
"""
import argparse
import json
import os
import sys

try:
    import msprof_sim
except ImportError:
    msprof_sim = None

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = "aclnnAdd_AddAiCore_Add"


def run_simulated(n):
    blocks = msprof_sim.vector_cores()
    t = ((n,), "DT_FLOAT16", "ND")
    msprof_sim.launch(KERNEL, "AI_VECTOR_CORE", blocks, op_type="Add", inputs=[t, t], outputs=[t],
                      gm_to_ub=4 * n, ub_to_gm=2 * n, vec_fp16=n, scalar=blocks * 200 + n / 512,
                      l2_hit=0.05)
    return True


def run_on_npu(n):
    try:
        import torch
        import torch_npu  # noqa: F401 (registers the npu device)
    except ImportError as e:
        # The agent's case preflight runs this outside msprof (and msprof-sim)
        # too; without torch_npu there is nothing to launch, and a profile of
        # this run finds no canary kernel and fails saying so.
        print("npuperf_canary: %s: no kernel launched" % e, file=sys.stderr)
        return True
    x = torch.ones(n, dtype=torch.float16, device="npu")
    y = torch.add(x, x)
    torch.npu.synchronize()
    return float(y[0].item()) == 2.0 and float(y[-1].item()) == 2.0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case-id", default="p0")
    args = parser.parse_args(argv)
    with open(os.path.join(HERE, "PERFORMANCE_CASES.json"), encoding="utf-8") as f:
        cases = {c["id"]: c for c in json.load(f)["cases"]}
    case = cases.get(args.case_id)
    if case is None:
        print("unknown case id %r (known: %s)" % (args.case_id, ", ".join(cases)), file=sys.stderr)
        return 2
    print("PYPTO_PERF_SELECTED_CASE=%s" % args.case_id, flush=True)
    (n,) = json.loads(case["shape"])
    ok = run_simulated(n) if msprof_sim is not None else run_on_npu(n)
    if not ok:
        print("npuperf_canary: the add gave a wrong result", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
)py";

constexpr char kCases[] = R"json({
  "schema_version": 1,
  "cases": [
    {"id": "p0", "shape": "[8388608]", "dtype": "fp16"}
  ]
}
)json";

}  // namespace

std::vector<std::pair<std::string, std::string>> CanaryOperatorFiles() {
  return {{kCanaryRunner, kRunner}, {"PERFORMANCE_CASES.json", kCases}};
}

absl::StatusOr<std::string> CanaryBundle() { return PackBundleFiles(CanaryOperatorFiles()); }

}  // namespace npuperf::server
