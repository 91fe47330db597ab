"""npuperf: the Python client of npuperf, NPU operator profiling as a service.

    import npuperf
    c = npuperf.Client()                 # NPUPERF_SERVER / NPUPERF_TOKEN / config file
    base = c.submit(batch="ops/", op_name_map="names.json", mode="quick", repeats=7).wait()
    cand = c.submit("ops/rmsnorm", op_name="_Z...", mode="quick", repeats=7).wait(timeout=600)
    v = c.compare(base.id, cand.id); print(v.summary); raise SystemExit(v.exit_code)

docs/python.md describes every call, result and error.
"""

from npuperf.bundle import MAX_BUNDLE_BYTES, Bundle, pack_bundle
from npuperf.client import Client
from npuperf.collection import Collection, WatchEvent
from npuperf.config import Settings
from npuperf.errors import (
    CollectionFailedError,
    ConfigError,
    DeadlineExceededError,
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
    NpuperfError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    WaitTimeoutError,
)
from npuperf.results import (
    Baseline,
    Comparison,
    ComparisonCounts,
    Job,
    JobCounts,
    RoundList,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "Baseline", "Bundle", "Client", "Collection", "CollectionFailedError", "Comparison",
    "ComparisonCounts", "ConfigError", "DeadlineExceededError", "FailedPreconditionError",
    "FieldViolation", "InvalidArgumentError", "Job", "JobCounts", "MAX_BUNDLE_BYTES",
    "NotFoundError", "NpuperfError", "PermissionDeniedError", "ResourceExhaustedError",
    "RoundList", "Settings", "UnauthenticatedError", "UnavailableError", "Verdict",
    "WaitTimeoutError", "WatchEvent", "pack_bundle",
]  # fmt: skip
