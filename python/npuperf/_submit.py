"""The SubmitCollectionRequest of ``Client.submit``, built as ``npuperf submit`` builds
it (client/commands.cc BuildRequest): the same operator directories, names, cases,
kinds and parameters, so that the server sees the same collection from both."""

from __future__ import annotations

import json
import os
import re
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from npuperf import _proto
from npuperf._manifest import parse_case_manifest
from npuperf.bundle import Bundle, PathLike, pack_bundle
from npuperf.errors import InvalidArgumentError, NotFoundError

_MODES = {
    "standard": _proto.collection_pb2.PROFILE_MODE_STANDARD,
    "quick": _proto.collection_pb2.PROFILE_MODE_QUICK,
    "compare": _proto.collection_pb2.PROFILE_MODE_COMPARE,
}


def is_operator_dir(path: str) -> bool:
    """A directory with PERFORMANCE_CASES.json or a test_*.py (IsOperatorDir)."""
    if os.path.exists(os.path.join(path, "PERFORMANCE_CASES.json")):
        return True
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return any(n.startswith("test_") and n.endswith(".py") for n in names)


def _path_key(path: str) -> Tuple[bytes, ...]:
    """std::filesystem::path ordering: component by component, bytewise."""
    return tuple(os.fsencode(path).split(b"/"))


def operator_dirs(positional: Sequence[PathLike], batch: Optional[PathLike]) -> List[str]:
    """The positional directories plus every operator directory under ``batch``
    (then all sorted together), as OperatorDirs."""
    dirs = [os.fsdecode(p) for p in positional]
    if batch is not None:
        base = os.fsdecode(batch)
        try:
            entries = os.scandir(base)
        except OSError as e:
            raise NotFoundError(f"--batch {base}: {e.strerror}") from None
        with entries:
            for e in entries:
                if e.is_dir() and is_operator_dir(e.path):
                    dirs.append(e.path)
        dirs.sort(key=_path_key)
    if not dirs:
        raise InvalidArgumentError("no operator directory given (positional or --batch)")
    return dirs


def read_op_name_map(op_name_map: Union[None, PathLike, Mapping[str, str]]) -> Dict[str, str]:
    """``{operator: op name}`` from a dict or a JSON file (ReadOpNameMap); only string
    values count, as in the CLI."""
    if op_name_map is None:
        return {}
    if isinstance(op_name_map, Mapping):
        mapping: object = dict(op_name_map)
    else:
        path = os.fsdecode(op_name_map)
        try:
            with open(path, "rb") as f:
                mapping = json.loads(f.read())
        except (OSError, ValueError):
            mapping = None
        if not isinstance(mapping, dict):
            raise InvalidArgumentError(
                f"--op-name-map {path}: want a JSON object {{operator: op name}}"
            )
    return {k: v for k, v in mapping.items() if isinstance(v, str)}  # type: ignore[union-attr]


def manifest_case_ids(directory: str) -> List[str]:
    """The case ids of ``directory``/PERFORMANCE_CASES.json (ManifestCaseIds): the
    manifest must pass the one manifest rule (``_manifest``, evidence/cases.h)."""
    path = os.path.join(directory, "PERFORMANCE_CASES.json")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        raise NotFoundError(f"{directory}: no PERFORMANCE_CASES.json") from None
    try:
        return parse_case_manifest(raw)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"{path}: {e.message}") from None


def operator_name(directory: str) -> str:
    """The last component of the absolute, normalised path ("dir/" form too)."""
    return os.path.basename(os.path.normpath(os.path.abspath(directory)))


def _labels(labels: Optional[Mapping[str, str]]) -> Dict[str, str]:
    out = {}
    for key, value in (labels or {}).items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise InvalidArgumentError(f"--label '{key}={value}': want key=value")
        out[key] = value
    return out


def build_request(
    dirs: Sequence[str],
    bundles: Sequence[Bundle],
    *,
    batch: bool,
    manifest: bool,
    mode: str,
    op_name: Optional[str],
    op_name_map: Mapping[str, str],
    launch: str,
    cases: Iterable[str],
    case_arg: Optional[str],
    case_env: Optional[str],
    runner: str,
    warm_up: Optional[int],
    repeats: int,
    seed: int,
    retry: int,
    max_jobs: int,
    priority: int,
    job_timeout: int,
    keep_raw: bool,
    labels: Optional[Mapping[str, str]],
    socs: Iterable[str],
    device_range: str,
    idempotency_key: str,
    description: str,
):
    """The request for operators ``dirs`` already packed into ``bundles``."""
    pb = _proto.collection_pb2
    if mode not in _MODES:
        raise InvalidArgumentError(f"mode {mode!r}: want standard, quick or compare")
    req = _proto.collection_service_pb2.SubmitCollectionRequest(idempotency_key=idempotency_key)
    spec = req.spec
    spec.kind = (
        pb.COLLECTION_KIND_MANIFEST
        if manifest
        else pb.COLLECTION_KIND_BATCH
        if batch
        else pb.COLLECTION_KIND_UNSPECIFIED
    )
    p = spec.params
    p.mode = _MODES[mode]
    if warm_up == 0:
        p.skip_warm_up = True
    elif warm_up is not None:
        p.warm_up = warm_up
    p.repeats, p.seed, p.retry, p.timeout_seconds = repeats, seed, retry, job_timeout
    p.keep_raw_output = keep_raw
    if case_arg:
        spec.case_selector.case_arg = case_arg
    if case_env:
        spec.case_selector.case_env = case_env
    spec.max_concurrent_jobs, spec.priority, spec.description = max_jobs, priority, description
    spec.labels.update(_labels(labels))
    spec.constraints.socs.extend(socs)
    spec.constraints.device_range = device_range
    cases = list(cases)
    for directory, bundle in zip(dirs, bundles):
        op = spec.operators.add(name=operator_name(directory), runner=runner)
        op.op_name = op_name_map.get(op.name, op_name or "")
        op.launch = launch
        op_cases = cases
        if not op_cases and manifest:
            op_cases = manifest_case_ids(directory)
            op.manifest_path = "PERFORMANCE_CASES.json"
        op.case_ids.extend(op_cases)
        op.bundle_sha256 = bundle.sha256
    return req


def pack_all(dirs: Sequence[str], max_bytes: int) -> List[Bundle]:
    return [pack_bundle(d, max_bytes) for d in dirs]


_MISSING_BUNDLE = re.compile(r"bundle ([0-9a-f]{64}) not found")


def missing_bundles(error, request) -> List[int]:
    """The operator indexes whose bundle the server does not have (or does not
    have for this team), from a refused submit: a NOT_FOUND naming one bundle,
    or (older servers) INVALID_ARGUMENT violations on bundle_sha256. Its other
    violations, if any, come back from the submit after the upload."""
    if isinstance(error, NotFoundError):
        named = _MISSING_BUNDLE.search(str(error))
        if not named:
            return []
        return [i for i, op in enumerate(request.spec.operators) if op.bundle_sha256 == named.group(1)]
    prefix, suffix = "spec.operators[", "].bundle_sha256"
    indexes = []
    for v in error.field_violations:
        index = v.field[len(prefix) : -len(suffix)]
        if (
            v.field.startswith(prefix)
            and v.field.endswith(suffix)
            and index.isdigit()
            and "no such bundle" in v.description
        ):
            indexes.append(int(index))
    return [i for i in indexes if 0 <= i < len(request.spec.operators)]
