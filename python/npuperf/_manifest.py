"""The case manifest rule (``PERFORMANCE_CASES.json``, schema 1), as
``evidence::ParseCaseManifest`` (evidence/cases.cc) applies it for the CLI, the
server and the agent: the same manifests are accepted and refused, and the error
names the same field ("case manifest cases[1].dtype must be a non-empty string").
tests/fixtures/manifests holds the cases both are tested against."""

from __future__ import annotations

import json
import re
from typing import AbstractSet, Any, List, Set

from npuperf.errors import InvalidArgumentError

# C's isspace() in the "C" locale: what evidence/cases.cc Strip removes.
_SPACE = " \t\n\v\f\r"
_TEST_FUNCTION = re.compile(r"test_[A-Za-z_][A-Za-z0-9_]*")
_SELECTION_MODES = ("user_selected", "single_p0", "all_p0_no_questions")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _non_empty(case: dict, key: str, where: str) -> str:
    value = case.get(key)
    if not isinstance(value, str) or not value.strip(_SPACE):
        raise InvalidArgumentError(f"{where}.{key} must be a non-empty string")
    return value.strip(_SPACE)


def _case_id(case: Any, i: int) -> str:
    where = f"case manifest cases[{i}]"
    if not isinstance(case, dict):
        raise InvalidArgumentError(f"{where} must be an object")
    values = [_non_empty(case, key, where) for key in ("id", "shape", "dtype")]
    if "test_function" in case and case["test_function"] is not None:
        fn = case["test_function"]
        fn = fn.strip(_SPACE) if isinstance(fn, str) else ""
        if not _TEST_FUNCTION.fullmatch(fn):
            raise InvalidArgumentError(
                f"{where}.test_function must name a no-argument test_* function"
            )
    return values[0]


def _check_target(doc: dict, ids: AbstractSet[str]) -> None:
    if "optimization_target" not in doc:
        return
    target = doc["optimization_target"]

    def bad(why: str) -> InvalidArgumentError:
        return InvalidArgumentError(f"case manifest optimization_target {why}")

    if not isinstance(target, dict):
        raise bad("must be an object")
    chosen = target.get("case_ids")
    if not isinstance(chosen, list) or not chosen:
        raise bad("case_ids must be a non-empty list")
    seen = set()
    for cid in chosen:
        if not isinstance(cid, str):
            raise bad("case_ids must be strings")
        cid = cid.strip(_SPACE)
        if cid not in ids:
            raise bad("case_ids must be manifest case ids")
        if cid in seen:
            raise bad("case_ids must be unique")
        seen.add(cid)
    mode = target.get("selection_mode")
    if not isinstance(mode, str) or mode not in _SELECTION_MODES:
        raise bad("selection_mode must be user_selected, single_p0 or all_p0_no_questions")


def parse_case_manifest(raw: bytes) -> List[str]:
    """The case ids of manifest bytes, in order (stripped), or InvalidArgumentError
    naming the bad field, as ParseCaseManifest."""
    try:
        # UTF-8 only, a leading BOM skipped, no NaN or Infinity, no lone surrogate
        # escape (re-encoding finds them): what nlohmann::json accepts.
        doc = json.loads(raw.decode("utf-8-sig"), parse_constant=_reject_constant)
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):
        raise InvalidArgumentError("case manifest is not valid JSON") from None
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if type(version) is not int or version != 1:
        raise InvalidArgumentError("case manifest must be an object with schema_version=1")
    cases = doc.get("cases")
    if not isinstance(cases, list) or not cases:
        raise InvalidArgumentError("case manifest cases must be a non-empty list")
    ids: List[str] = []
    seen: Set[str] = set()
    for i, case in enumerate(cases):
        cid = _case_id(case, i)
        if cid in seen:
            raise InvalidArgumentError(f"case manifest contains duplicate case id '{cid}'")
        seen.add(cid)
        ids.append(cid)
    _check_target(doc, seen)
    return ids
