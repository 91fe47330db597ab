"""Calls with deadlines, the bearer token, typed errors and retries.

Every unary call carries a deadline (``Client(timeout=...)``, default the
settings' 30 s). UNAVAILABLE (a server restarting or draining, a dropped
connection) is retried with capped, jittered exponential backoff, but only for
calls that are safe to repeat: reads, comparisons, pins, cancels, content-addressed
uploads and submits (which always carry an idempotency key). DEADLINE_EXCEEDED is
never retried: the deadline is the caller's limit.
"""

from __future__ import annotations

import random
import time
from typing import Callable, Optional, Sequence, Tuple

import grpc

from npuperf import _proto
from npuperf.errors import NpuperfError, error_for

Metadata = Sequence[Tuple[str, str]]


class Backoff:
    """Capped exponential backoff with jitter: 0.25 s, 0.5 s, 1 s ... up to ``cap``,
    each delay scaled by a random factor in [0.8, 1.2]."""

    def __init__(self, initial: float = 0.25, cap: float = 4.0, rng: Callable[[], float] = random.random):
        self.initial, self.cap, self._rng = initial, cap, rng
        self._next = initial

    def next_delay(self) -> float:
        delay = min(self._next, self.cap) * (0.8 + 0.4 * self._rng())
        self._next = min(self._next * 2, self.cap)
        return delay

    def reset(self) -> None:
        self._next = self.initial


def error_from(e: grpc.RpcError) -> NpuperfError:
    code, message, violations = _proto.status_of(e)
    return error_for(code, message, violations)


class Caller:
    """Runs calls for a Client. ``sleep`` and ``clock`` (monotonic seconds) are injectable
    for tests."""

    def __init__(
        self,
        metadata: Metadata,
        timeout: float,
        retries: int,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.metadata = tuple(metadata)
        self.timeout = timeout
        self.retries = retries
        self.sleep = sleep
        self.clock = clock

    def unary(self, method, request, *, idempotent: bool, timeout: Optional[float] = None):
        """method(request) with the deadline and token; retried on UNAVAILABLE when
        idempotent. Raises NpuperfError subclasses."""
        return self.retrying(
            lambda: method(request, timeout=timeout or self.timeout, metadata=self.metadata),
            idempotent=idempotent,
        )

    def stream_unary(self, method, messages: Callable[[], object], *, timeout: float):
        """A client-streaming call (UploadBundle); ``messages()`` makes a fresh iterator
        per attempt. Retried on UNAVAILABLE (uploads are content-addressed)."""
        return self.retrying(
            lambda: method(messages(), timeout=timeout, metadata=self.metadata), idempotent=True
        )

    def retrying(self, call: Callable[[], object], *, idempotent: bool):
        backoff = Backoff()
        for attempt in range(self.retries + 1):
            try:
                return call()
            except grpc.RpcError as e:
                code = e.code() if hasattr(e, "code") else None
                if not (idempotent and code == grpc.StatusCode.UNAVAILABLE and attempt < self.retries):
                    raise error_from(e) from None
            self.sleep(backoff.next_delay())
        raise AssertionError("unreachable")  # pragma: no cover
