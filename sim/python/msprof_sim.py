"""Kernel-launch channel of msprof-sim (npuperf's msprof simulator).

A runner calls ``launch(...)`` once per kernel it (conceptually) starts on the
NPU. Under msprof-sim the environment variable MSPROF_SIM_LAUNCH_FILE names a
file and each call appends one line to it::

    launch op=<name> task=AI_VECTOR_CORE blocks=48 mix=0 gm_to_ub=<bytes> ... t=<unix ns>

Outside msprof-sim (warm-up runs, plain ``python3 test_x.py``) every function
is a cheap no-op, so runners need no special casing. Runners that may run
where this module is absent should import it with::

    try:
        import msprof_sim
    except ImportError:
        msprof_sim = None
"""

import os
import time

__all__ = ["active", "launch", "soc", "cube_cores", "vector_cores", "LAUNCH_FILE_ENV"]

LAUNCH_FILE_ENV = "MSPROF_SIM_LAUNCH_FILE"

# Core counts per SoC, used only outside msprof-sim (under it the simulator
# exports MSPROF_SIM_CUBE_CORES / MSPROF_SIM_VECTOR_CORES from sim/soc.cc).
_CORES = {
    "Ascend910B1": (24, 48), "Ascend910B2": (24, 48), "Ascend910B3": (20, 40),
    "Ascend910B4": (20, 40), "Ascend910_9392": (24, 48), "Ascend910_9382": (24, 48),
    "Ascend950PR_9589": (32, 64), "Ascend950PR_9579": (28, 56),
}

_WORK_KEYS = (
    "gm_to_ub", "gm_to_l1", "ub_to_gm", "l0c_to_gm", "cube_fp16", "cube_int8",
    "vec_fp32", "vec_fp16", "vec_int32", "vec_misc", "scalar", "l2_hit",
    "bank_conflict", "skew", "icache_miss", "overlap",
)
_TASK_TYPES = ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU")
_fd = None


def active():
    """True when running under msprof-sim (launches are recorded)."""
    return bool(os.environ.get(LAUNCH_FILE_ENV))


def soc():
    """Simulated SoC name (e.g. 'Ascend910B2'); 'Ascend910B2' outside msprof-sim."""
    return os.environ.get("MSPROF_SIM_SOC", "Ascend910B2")


def cube_cores():
    """Cube (AIC) cores of the simulated SoC."""
    return int(os.environ.get("MSPROF_SIM_CUBE_CORES") or _CORES.get(soc(), (24, 48))[0])


def vector_cores():
    """Vector (AIV) cores of the simulated SoC."""
    return int(os.environ.get("MSPROF_SIM_VECTOR_CORES") or _CORES.get(soc(), (24, 48))[1])


def _word(value):
    text = str(value)
    if not text or any(c.isspace() for c in text):
        raise ValueError("launch field values must be non-empty and contain no whitespace: %r" % text)
    return text


def _tensors(tensors):
    """[(shape, dtype, format), ...] -> ('1,32;1,32', 'DT_FLOAT16;DT_FLOAT16', 'ND;ND')."""
    shapes = ";".join(",".join(str(int(d)) for d in t[0]) for t in tensors)
    dtypes = ";".join(str(t[1]) for t in tensors)
    formats = ";".join(str(t[2]) if len(t) > 2 else "ND" for t in tensors)
    return shapes, dtypes, formats


def _line(op_name, op_type, task_type, block_num, mix_block_num, inputs, outputs, count, pypto,
          work):
    if task_type not in _TASK_TYPES:
        raise ValueError("task_type must be one of %s" % (_TASK_TYPES,))
    fields = ["launch", "op=" + _word(op_name), "task=" + task_type,
              "blocks=%d" % int(block_num), "mix=%d" % int(mix_block_num), "count=%d" % int(count)]
    if op_type:
        fields.append("type=" + _word(op_type))
    if pypto is not None:
        if task_type != "MIX_AIC" or int(pypto) < 0:
            raise ValueError("pypto=<n> (n >= 0) needs task_type='MIX_AIC'")
        fields.append("pypto=%d" % int(pypto))
    for prefix, tensors in (("in", inputs), ("out", outputs)):
        if tensors:
            shapes, dtypes, formats = _tensors(tensors)
            if shapes.strip(";"):
                fields.append("%s_shapes=%s" % (prefix, shapes))
            fields.append("%s_dtypes=%s" % (prefix, _word(dtypes)))
            fields.append("%s_formats=%s" % (prefix, _word(formats)))
    for key in _WORK_KEYS:
        value = work.pop(key, None)
        if value is not None:
            fields.append("%s=%r" % (key, float(value)))
    if work:
        raise TypeError("unknown workload fields: %s" % sorted(work))
    fields.append("t=%d" % time.time_ns())
    return " ".join(fields) + "\n"


def launch(op_name, task_type="AI_VECTOR_CORE", block_num=1, mix_block_num=0, op_type=None,
           inputs=(), outputs=(), count=1, pypto=None, **work):
    """Reports one kernel launch (or `count` identical back-to-back launches).

    inputs/outputs: sequences of (shape, dtype, format), e.g. ((1, 32), 'DT_FLOAT16', 'ND').
    pypto: n for PyPTO's kernel (MIX_AIC only): op_summary names it PYPTO_<op_name> (3 rows
    per launch, PMU cells N/A), task_time and the msprof db tilefwk_<n>_mix_aic.
    work (all totals over every block, all optional): gm_to_ub, gm_to_l1, ub_to_gm, l0c_to_gm
    (bytes); cube_fp16, cube_int8 (MACs); vec_fp32, vec_fp16, vec_int32, vec_misc (element ops);
    scalar (instructions); l2_hit, bank_conflict, skew, icache_miss, overlap (0..1).
    No-op outside msprof-sim.
    """
    global _fd
    path = os.environ.get(LAUNCH_FILE_ENV)
    if not path:
        return False
    text = _line(op_name, op_type, task_type, block_num, mix_block_num, inputs, outputs, count,
                 pypto, dict(work))
    if _fd is None:
        _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    os.write(_fd, text.encode())
    return True
