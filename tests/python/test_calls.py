"""Retries, deadlines, typed errors and watch resumption, with fake stubs, a fake
clock and a fake sleep (no real time passes)."""

from __future__ import annotations

import unittest

import grpc

import npuperf
from npuperf import _proto
from npuperf._calls import Backoff, Caller
from npuperf.collection import _watch
from npuperf.results import ComparisonCounts, counts_of_one, verdict_of_regressions

pb = _proto.collection_service_pb2


class FakeRpcError(grpc.RpcError):
    def __init__(self, code, details="", trailing=()):
        self._code, self._details, self._trailing = code, details, tuple(trailing)

    def code(self):
        return self._code

    def details(self):
        return self._details

    def trailing_metadata(self):
        return self._trailing


def bad_request(*violations):
    """The trailing metadata of an INVALID_ARGUMENT with BadRequest details, as the
    server's InvalidArgumentWithFields sends it."""
    bad = _proto._BadRequest()
    for field, description in violations:
        v = bad.field_violations.add()
        v.field, v.description = field, description
    status = _proto._Status(code=3, message="bad request")
    detail = status.details.add()
    detail.type_url = "type.googleapis.com/google.rpc.BadRequest"
    detail.value = bad.SerializeToString()
    return [("grpc-status-details-bin", status.SerializeToString())]


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def flaky(failures, result="ok", code=grpc.StatusCode.UNAVAILABLE):
    calls = []

    def method(request, timeout=None, metadata=None):
        calls.append((request, timeout, metadata))
        if len(calls) <= failures:
            raise FakeRpcError(code, "server restarting")
        return result

    return method, calls


class CallerTest(unittest.TestCase):
    def setUp(self):
        self.time = FakeTime()
        self.caller = Caller([("authorization", "Bearer t")], 30, 3, self.time.sleep, self.time.clock)

    def test_idempotent_calls_are_retried_on_unavailable_with_backoff(self):
        method, calls = flaky(2)
        self.assertEqual(self.caller.unary(method, "req", idempotent=True), "ok")
        self.assertEqual(len(calls), 3)
        self.assertEqual(calls[0], ("req", 30, (("authorization", "Bearer t"),)))
        self.assertEqual(len(self.time.sleeps), 2)
        self.assertLess(self.time.sleeps[0], self.time.sleeps[1])

    def test_retries_give_up_with_unavailable_error(self):
        method, calls = flaky(10)
        with self.assertRaises(npuperf.UnavailableError) as e:
            self.caller.unary(method, "req", idempotent=True)
        self.assertEqual(len(calls), 4)  # 1 + 3 retries
        self.assertEqual(e.exception.exit_code, 5)

    def test_non_idempotent_calls_are_not_retried(self):
        method, calls = flaky(1)
        with self.assertRaises(npuperf.UnavailableError):
            self.caller.unary(method, "req", idempotent=False)
        self.assertEqual(len(calls), 1)

    def test_deadline_exceeded_is_not_retried(self):
        method, calls = flaky(1, code=grpc.StatusCode.DEADLINE_EXCEEDED)
        with self.assertRaises(npuperf.DeadlineExceededError) as e:
            self.caller.unary(method, "req", idempotent=True, timeout=2.5)
        self.assertEqual((len(calls), calls[0][1]), (1, 2.5))
        self.assertIsInstance(e.exception, TimeoutError)
        self.assertEqual(e.exception.exit_code, 5)

    def test_field_violations_are_on_the_exception(self):
        trailing = bad_request(("spec.priority", "must be in -10..10, got 99"), ("spec.x", "why"))

        def method(request, timeout=None, metadata=None):
            raise FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT, "bad request", trailing)

        with self.assertRaises(npuperf.InvalidArgumentError) as e:
            self.caller.unary(method, "req", idempotent=True)
        err = e.exception
        self.assertEqual(err.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(err.code_name, "INVALID_ARGUMENT")
        self.assertEqual(
            err.field_violations,
            [npuperf.FieldViolation("spec.priority", "must be in -10..10, got 99"),
             npuperf.FieldViolation("spec.x", "why")],
        )  # fmt: skip
        self.assertIn("spec.priority: must be in -10..10, got 99", str(err))
        self.assertEqual(err.exit_code, 1)

    def test_not_found_maps_to_exit_6(self):
        err = npuperf.errors.error_for(grpc.StatusCode.NOT_FOUND, "no collection c-1")
        self.assertIsInstance(err, npuperf.NotFoundError)
        self.assertEqual(err.exit_code, 6)

    def test_backoff_is_capped_and_jittered(self):
        b = Backoff(initial=1, cap=4, rng=lambda: 0.5)
        self.assertEqual([b.next_delay() for _ in range(5)], [1, 2, 4, 4, 4])
        b = Backoff(initial=1, cap=4, rng=lambda: 0.0)
        self.assertAlmostEqual(b.next_delay(), 0.8)


def snapshot(state, n=1, cid="c-1"):
    c = _proto.collection_pb2.Collection(id=cid, state=state)
    c.counts.total = n
    return pb.WatchCollectionResponse(collection=c)


class FakeStream:
    def __init__(self, events, error=None):
        self.events, self.error, self.cancelled = events, error, False

    def __iter__(self):
        yield from self.events
        if self.error is not None:
            raise self.error

    def cancel(self):
        self.cancelled = True


class FakeClient:
    """What _watch uses of a Client: _caller, _collections, resume_for, watch_deadline."""

    def __init__(self, streams, time):
        self._caller = Caller([], 30, 3, time.sleep, time.clock)
        self.streams = list(streams)
        self.requests = []
        self._collections = self
        self.resume_for = 10
        self.watch_deadline = 1000

    def WatchCollection(self, request, timeout=None, metadata=None):
        self.requests.append((request.collection_id, timeout))
        s = self.streams.pop(0)
        if isinstance(s, Exception):
            raise s
        return s


RUNNING = _proto.collection_pb2.COLLECTION_STATE_RUNNING
SUCCEEDED = _proto.collection_pb2.COLLECTION_STATE_SUCCEEDED
UNAVAILABLE = FakeRpcError(grpc.StatusCode.UNAVAILABLE, "socket closed")


class WatchTest(unittest.TestCase):
    def setUp(self):
        self.time = FakeTime()

    def test_resumes_after_the_server_went_away(self):
        client = FakeClient(
            [FakeStream([snapshot(RUNNING)], UNAVAILABLE), UNAVAILABLE,
             FakeStream([snapshot(RUNNING), snapshot(SUCCEEDED)])],
            self.time,
        )  # fmt: skip
        events = list(_watch(client, "c-1", None))
        self.assertEqual([e.collection.state for e in events], ["running", "running", "succeeded"])
        self.assertEqual([e.resumed for e in events], [False, True, False])
        self.assertEqual(len(client.requests), 3)
        self.assertEqual(len(self.time.sleeps), 2)

    def test_deltas_fold_their_changed_jobs_into_the_snapshot(self):
        first = snapshot(RUNNING, n=2)
        first.full_snapshot = True
        for i in (1, 2):
            first.collection.jobs.add(id=i, state=_proto.collection_pb2.JOB_STATE_QUEUED)
        delta = snapshot(SUCCEEDED, n=2)
        for i in (2, 1):
            delta.changed_jobs.add(id=i, state=_proto.collection_pb2.JOB_STATE_SUCCEEDED)
        delta.changed_job.CopyFrom(delta.changed_jobs[0])
        client = FakeClient([FakeStream([first, delta])], self.time)
        events = list(_watch(client, "c-1", None))
        self.assertEqual([j.state for j in events[0].collection.jobs], ["queued", "queued"])
        final = events[1].collection
        self.assertEqual([(j.id, j.state) for j in final.jobs], [(1, "succeeded"), (2, "succeeded")])
        self.assertEqual(events[1].changed_job.id, 2)
        self.assertTrue(final.succeeded)

    def test_gives_up_after_resume_for_seconds_unavailable(self):
        client = FakeClient([UNAVAILABLE] * 50, self.time)
        with self.assertRaises(npuperf.UnavailableError):
            list(_watch(client, "c-1", None))
        self.assertGreaterEqual(self.time.now, client.resume_for)

    def test_other_errors_are_raised(self):
        client = FakeClient([FakeRpcError(grpc.StatusCode.NOT_FOUND, "no such collection")], self.time)
        with self.assertRaises(npuperf.NotFoundError):
            list(_watch(client, "c-1", None))

    def test_timeout_raises_wait_timeout_with_the_last_snapshot(self):
        client = FakeClient(
            [FakeStream([snapshot(RUNNING)], FakeRpcError(grpc.StatusCode.DEADLINE_EXCEEDED))],
            self.time,
        )
        with self.assertRaises(npuperf.WaitTimeoutError) as e:
            list(_watch(client, "c-1", 60))
        self.assertEqual(client.requests[0], ("c-1", 60))
        self.assertEqual(e.exception.collection.state, "running")


class VerdictCountsTest(unittest.TestCase):
    def counts(self, **kw):
        fields = dict.fromkeys(
            ("matched", "comparable", "improved", "regressed", "stable", "insufficient",
             "not_comparable", "errored", "unmatched"), 0)  # fmt: skip
        fields.update(kw)
        return ComparisonCounts(**fields)

    def test_exit_codes_under_fail_on(self):
        regressed = self.counts(matched=2, comparable=2, regressed=1, stable=1)
        partial = self.counts(matched=2, comparable=1, stable=1, insufficient=1)
        clean = self.counts(matched=1, comparable=1, stable=1)
        self.assertEqual([regressed.exit_code(), partial.exit_code(), clean.exit_code()], [3, 4, 0])
        self.assertEqual([regressed.exit_code("regressed"), partial.exit_code("regressed")], [3, 0])
        self.assertEqual([regressed.exit_code("never"), partial.exit_code("never")], [0, 0])
        self.assertEqual(self.counts().exit_code(), 4)  # nothing comparable
        with self.assertRaises(ValueError):
            clean.exit_code("sometimes")

    def test_summary_is_the_clis(self):
        self.assertEqual(
            self.counts(matched=3, comparable=2, regressed=1, stable=1, insufficient=1).summary,
            "1 regressed, 0 improved, 1 stable / 2 comparable of 3 matched (1 insufficient, "
            "0 not comparable, 0 errored, 0 unmatched)",
        )

    def test_to_dataframe_without_pandas_says_so(self):
        from npuperf.results import verdict_of_collections

        resp = _proto.query_service_pb2.CompareCollectionsResponse()
        c = resp.comparisons.add(operator_name="add", case_id="p1", verdict=3)
        c.duration.ratio = 1.1
        v = verdict_of_collections(resp)
        self.assertEqual(v.comparisons[0].row()["ratio"], 1.1)
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "python3-pandas"):
                v.to_dataframe()
        else:
            self.assertEqual(list(v.to_dataframe()["operator"]), ["add"])

    def test_counts_of_one_round_comparison(self):
        c = counts_of_one(_proto.comparison_pb2.VERDICT_REGRESSED)
        self.assertEqual((c.matched, c.comparable, c.regressed), (1, 1, 1))
        c = counts_of_one(_proto.comparison_pb2.VERDICT_INSUFFICIENT)
        self.assertEqual((c.comparable, c.insufficient, c.exit_code()), (0, 1, 4))

    def test_regressions_fail_only_on_new_ones(self):
        q = _proto.query_service_pb2
        resp = q.ListRegressionsResponse(compared=1)
        resp.counts.matched = resp.counts.comparable = resp.counts.regressed = 1
        resp.regressions.add(operator_name="add", case_id="p1")
        tracked = resp.tracked.add(id=12, state=q.REGRESSION_STATE_ACKNOWLEDGED)
        v = verdict_of_regressions(resp)
        self.assertEqual((v.counts.regressed, v.exit_code), (1, 0))
        self.assertTrue(v.summary.endswith("; 0 new, 1 already triaged"), v.summary)
        tracked.state = q.REGRESSION_STATE_DETECTED
        self.assertEqual(verdict_of_regressions(resp).exit_code, 3)
        tracked.id = 0  # the candidate round lacks the baseline's label: untracked, new
        tracked.state = q.REGRESSION_STATE_WONT_FIX
        self.assertEqual(verdict_of_regressions(resp).exit_code, 3)
        del resp.tracked[:]  # a --since listing tracks nothing
        self.assertEqual(verdict_of_regressions(resp).exit_code_for("regressed"), 3)

if __name__ == "__main__":
    unittest.main()
