"""Collections: a submitted batch of jobs, and how to follow it.

A :class:`Collection` is one snapshot (``GetCollection`` or a watch event) plus
the client it came from, so that ``watch()``, ``wait()``, ``refresh()`` and
``cancel()`` work on it. ``watch()`` yields :class:`WatchEvent` objects until the
collection is terminal; when the stream breaks because the server restarted or
went away (UNAVAILABLE), it reconnects with backoff and goes on from the current
snapshot, for at most ``resume_for`` seconds of consecutive unavailability.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional, Tuple

import grpc

from npuperf import _proto
from npuperf._calls import Backoff, error_from
from npuperf.errors import CollectionFailedError, WaitTimeoutError
from npuperf.results import JobCounts, Job, _dataframe, collection_state_name, timestamp

if TYPE_CHECKING:  # pragma: no cover
    from npuperf.client import Client

TERMINAL_STATES = ("succeeded", "failed", "cancelled")


class Collection:
    """One snapshot of a collection. ``state`` is queued, running, succeeded, failed or
    cancelled; ``jobs`` are :class:`~npuperf.results.Job`; ``proto`` is the generated
    ``npuperf.v1.Collection``."""

    def __init__(self, client: "Client", message):
        self._client = client
        self.proto = message
        self.id: str = message.id
        self.state: str = collection_state_name(message.state)
        self.counts = JobCounts.of(message.counts)
        self.jobs: Tuple[Job, ...] = tuple(Job.of(j) for j in message.jobs)
        self.labels: Dict[str, str] = dict(message.spec.labels)
        self.created_at = timestamp(message.created_at)
        self.finished_at = timestamp(message.finished_at)
        self.cancel_reason: str = message.cancel_reason
        self.created: Optional[bool] = None  # submit(): False when the idempotency key matched

    def __repr__(self) -> str:
        n = self.counts
        return f"<Collection {self.id} {self.state} {n.succeeded}/{n.total} succeeded>"

    @property
    def done(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def succeeded(self) -> bool:
        return self.state == "succeeded"

    @property
    def exit_code(self) -> int:
        """The CLI's exit code for this collection: 0 succeeded, else 1."""
        return 0 if self.succeeded else 1

    def refresh(self) -> "Collection":
        """The current snapshot (GetCollection)."""
        return self._client.get(self.id)

    def cancel(self, reason: str = "") -> "Collection":
        return self._client.cancel(self.id, reason)

    def watch(self, timeout: Optional[float] = None) -> Iterator["WatchEvent"]:
        """Events until the collection is terminal (the first is the current snapshot).
        Raises WaitTimeoutError after ``timeout`` seconds (None: no limit)."""
        return _watch(self._client, self.id, timeout)

    def wait(self, timeout: Optional[float] = None, check: bool = True) -> "Collection":
        """Watches until the collection is terminal and returns the final snapshot.
        Raises WaitTimeoutError after ``timeout`` seconds and, with ``check``,
        CollectionFailedError when it did not succeed (the CLI exits 1)."""
        last = self
        for event in self.watch(timeout):
            last = event.collection
        if check and not last.succeeded:
            failed = [j for j in last.jobs if j.state != "succeeded"]
            reasons = "; ".join(f"{j.label}: {j.state} {j.reason}".rstrip() for j in failed[:5])
            raise CollectionFailedError(
                f"collection {last.id} {last.state}: {reasons or last.cancel_reason}", last
            )
        return last

    def to_dataframe(self):
        """One row per job (needs pandas)."""
        return _dataframe([j.row() for j in self.jobs])


@dataclasses.dataclass(frozen=True)
class WatchEvent:
    """A watch event: the snapshot, the job whose change caused it (None on the first
    snapshot of a stream), and the stream's sequence number (it restarts from 1 when
    the watch reconnects)."""

    collection: Collection
    changed_job: Optional[Job]
    sequence: int
    resumed: bool  # the first event after a reconnection
    proto: Any = dataclasses.field(repr=False, compare=False)


def _watch(client: "Client", collection_id: str, timeout: Optional[float]) -> Iterator[WatchEvent]:
    caller = client._caller
    clock: Callable[[], float] = caller.clock
    deadline = None if timeout is None else clock() + timeout
    request = _proto.collection_service_pb2.WatchCollectionRequest(collection_id=collection_id)
    backoff = Backoff()
    unavailable_since: Optional[float] = None
    resumed = False
    last: Optional[Collection] = None
    while True:
        remaining = None if deadline is None else deadline - clock()
        if remaining is not None and remaining <= 0:
            raise WaitTimeoutError(f"collection {collection_id}: not finished after {timeout} s", last)
        stream = None
        try:
            stream = client._collections.WatchCollection(
                request, timeout=remaining or client.watch_deadline, metadata=caller.metadata
            )
            for message in stream:
                unavailable_since = None
                backoff.reset()
                last = Collection(client, message.collection)
                changed = Job.of(message.changed_job) if message.HasField("changed_job") else None
                yield WatchEvent(last, changed, message.sequence, resumed, message)
                resumed = False
            if last is not None and last.done:
                return
            # The stream ended cleanly before the end (a server going away): go on.
        except grpc.RpcError as e:
            code = e.code() if hasattr(e, "code") else None
            if code == grpc.StatusCode.DEADLINE_EXCEEDED and deadline is not None:
                raise WaitTimeoutError(
                    f"collection {collection_id}: not finished after {timeout} s", last
                ) from None
            if code != grpc.StatusCode.UNAVAILABLE:
                raise error_from(e) from None
            now = clock()
            unavailable_since = now if unavailable_since is None else unavailable_since
            if now - unavailable_since >= client.resume_for:
                raise error_from(e) from None
        finally:
            if stream is not None:
                stream.cancel()
        resumed = True
        caller.sleep(backoff.next_delay())
