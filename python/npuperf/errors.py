"""Exceptions of the npuperf client.

Every failed call raises an :class:`NpuperfError` (or a subclass named after its
gRPC code) carrying the gRPC status code, the server's message and every
``google.rpc.BadRequest`` field violation. Mistakes the client finds itself
(a bad ``labels`` entry, a missing operator directory) raise the same classes, so
one ``except npuperf.InvalidArgumentError`` covers both sides.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Type

import grpc


@dataclasses.dataclass(frozen=True)
class FieldViolation:
    """One bad field of a request, e.g. ``spec.operators[1].op_name`` and why."""

    field: str
    description: str


class NpuperfError(Exception):
    """A failed call. ``code`` is a grpc.StatusCode, ``message`` the server's text,
    ``field_violations`` the BadRequest details (empty when none). ``exit_code`` is
    what ``npuperf`` exits with for the same error (docs/api.md)."""

    default_code = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        code: Optional[grpc.StatusCode] = None,
        field_violations: Sequence[FieldViolation] = (),
    ):
        self.code: grpc.StatusCode = code or self.default_code
        self.message = message
        self.field_violations: List[FieldViolation] = list(field_violations)
        super().__init__(str(self))

    @property
    def code_name(self) -> str:
        """"NOT_FOUND", "INVALID_ARGUMENT", ... as the CLI prints it."""
        return self.code.name

    @property
    def exit_code(self) -> int:
        if self.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return 5
        if self.code == grpc.StatusCode.NOT_FOUND:
            return 6
        return 1

    def __str__(self) -> str:
        text = f"{self.code.name}: {self.message}"
        for v in self.field_violations:
            text += f"\n  {v.field}: {v.description}"
        return text


class InvalidArgumentError(NpuperfError, ValueError):
    default_code = grpc.StatusCode.INVALID_ARGUMENT


class NotFoundError(NpuperfError, LookupError):
    default_code = grpc.StatusCode.NOT_FOUND


class FailedPreconditionError(NpuperfError):
    default_code = grpc.StatusCode.FAILED_PRECONDITION


class ResourceExhaustedError(NpuperfError):
    default_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class UnauthenticatedError(NpuperfError):
    default_code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDeniedError(NpuperfError):
    default_code = grpc.StatusCode.PERMISSION_DENIED


class UnavailableError(NpuperfError, ConnectionError):
    """The server is down, draining or unreachable (retried for idempotent calls)."""

    default_code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceededError(NpuperfError, TimeoutError):
    """A call's deadline passed (``Client(timeout=...)``)."""

    default_code = grpc.StatusCode.DEADLINE_EXCEEDED


class WaitTimeoutError(NpuperfError, TimeoutError):
    """``Collection.wait(timeout=...)`` returned before the collection finished.
    ``collection`` is the last snapshot seen."""

    default_code = grpc.StatusCode.DEADLINE_EXCEEDED

    def __init__(self, message: str, collection=None):
        super().__init__(message)
        self.collection = collection


class CollectionFailedError(NpuperfError):
    """``wait()`` saw the collection end failed or cancelled (the CLI exits 1).
    ``collection`` is the final snapshot, with each job's reason."""

    default_code = grpc.StatusCode.ABORTED

    def __init__(self, message: str, collection=None):
        super().__init__(message)
        self.collection = collection

    @property
    def exit_code(self) -> int:
        return 1


class ConfigError(InvalidArgumentError):
    """A config file, environment variable or argument the settings refuse (the CLI
    exits 2 with the same message)."""

    @property
    def exit_code(self) -> int:
        return 2


_BY_CODE: Dict[grpc.StatusCode, Type[NpuperfError]] = {
    c.default_code: c
    for c in (
        InvalidArgumentError,
        NotFoundError,
        FailedPreconditionError,
        ResourceExhaustedError,
        UnauthenticatedError,
        PermissionDeniedError,
        UnavailableError,
        DeadlineExceededError,
    )
}


def error_for(
    code: grpc.StatusCode, message: str, violations: Sequence[FieldViolation] = ()
) -> NpuperfError:
    """The exception class for ``code`` (NpuperfError for the rest)."""
    return _BY_CODE.get(code, NpuperfError)(message, code, violations)
