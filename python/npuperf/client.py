"""npuperf.Client: the CollectionService and QueryService of one server.

Settings come as the CLI reads them (npuperf.config): the arguments, then
NPUPERF_SERVER / NPUPERF_TOKEN / NPUPERF_TLS_CA / NPUPERF_TIMEOUT, then the config
file. Every unary call has a deadline (``timeout``, default the settings' 30 s);
UNAVAILABLE is retried with backoff for the calls that are safe to repeat
(everything but CancelCollection, whose second attempt would fail on a cancelled
collection, and submits without an idempotency key: submit always sends one).
Failed calls raise npuperf.errors.NpuperfError subclasses. docs/python.md.
"""

from __future__ import annotations

import datetime
import os
import time
import uuid
from typing import Iterable, List, Mapping, Optional, Sequence, Union

import grpc

from npuperf import _proto, _submit, config
from npuperf._calls import Caller
from npuperf.bundle import MAX_BUNDLE_BYTES, Bundle, PathLike, pack_bundle
from npuperf.collection import Collection
from npuperf.errors import InvalidArgumentError, NotFoundError
from npuperf.results import (
    Baseline,
    RoundList,
    Verdict,
    verdict_of_collections,
    verdict_of_regressions,
    verdict_of_rounds,
)

CHUNK_BYTES = 1 << 20  # as the CLI (client/commands.cc kChunkBytes)
UPLOAD_TIMEOUT_SECONDS = 300
_KEEPALIVE_OPTIONS = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.max_receive_message_length", 64 << 20),
]
_STATES = {
    name: getattr(_proto.collection_pb2, "COLLECTION_STATE_" + name.upper())
    for name in ("queued", "running", "succeeded", "failed", "cancelled")
}

Labels = Union[None, str, Mapping[str, str]]


def _label_text(label: Labels) -> str:
    """"branch=main" from a string or a one-entry dict."""
    if label is None:
        return ""
    if isinstance(label, str):
        return label
    if len(label) != 1:
        raise InvalidArgumentError(f"baseline label {dict(label)!r}: want one key=value")
    ((key, value),) = label.items()
    return f"{key}={value}"


def _is_round_id(target) -> bool:
    if isinstance(target, int) and not isinstance(target, bool):
        return target > 0
    return isinstance(target, str) and target.isascii() and target.isdigit() and int(target) > 0


def _timestamp(when, message) -> None:
    """Sets a Timestamp from a datetime (naive ones are UTC) or an RFC 3339 string."""
    if isinstance(when, str):
        message.FromJsonString(when)
        return
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    message.FromDatetime(when.astimezone(datetime.timezone.utc).replace(tzinfo=None))


class Client:
    """A connection to one npuperf server. ``timeout`` is each call's deadline in
    seconds (default the settings' timeout); ``retries`` the UNAVAILABLE retries of
    idempotent calls; ``resume_for`` how long a watch keeps reconnecting while the
    server is unavailable. Use as a context manager or call close()."""

    def __init__(
        self,
        server: Optional[str] = None,
        token: Optional[str] = None,
        tls_ca: Optional[str] = None,
        *,
        config_file: Optional[str] = None,
        timeout: Optional[float] = None,
        retries: int = 5,
        resume_for: float = 120.0,
        environ: Optional[Mapping[str, str]] = None,
    ):
        self.settings = config.load(
            server, token, tls_ca, config_file, os.environ if environ is None else environ
        )
        s = self.settings
        if s.tls_ca:
            try:
                with open(s.tls_ca, "rb") as f:
                    roots = f.read()
            except OSError as e:
                raise config.ConfigError(f"tls_ca {s.tls_ca}: {e.strerror}") from None
            creds = grpc.ssl_channel_credentials(root_certificates=roots)
            self._channel = grpc.secure_channel(s.server, creds, options=_KEEPALIVE_OPTIONS)
        else:
            self._channel = grpc.insecure_channel(s.server, options=_KEEPALIVE_OPTIONS)
        self._collections = _proto.collection_service_pb2_grpc.CollectionServiceStub(self._channel)
        self._queries = _proto.query_service_pb2_grpc.QueryServiceStub(self._channel)
        self._devices = _proto.device_service_pb2_grpc.DeviceServiceStub(self._channel)
        metadata = [("authorization", "Bearer " + s.token)] if s.token else []
        self._caller = Caller(metadata, timeout or s.timeout_seconds, retries)
        self.resume_for = resume_for
        self.watch_deadline = 7 * 24 * 3600.0  # the CLI's watch deadline

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- bundles and submissions -------------------------------------------

    def upload(self, bundle: Union[Bundle, PathLike]):
        """Uploads a bundle (or packs the directory first) in 1 MiB chunks; returns
        the UploadBundleResponse (sha256, size_bytes, already_present)."""
        if not isinstance(bundle, Bundle):
            bundle = pack_bundle(bundle)
        pb = _proto.collection_service_pb2

        def messages():
            header = pb.BundleHeader(name=bundle.name, size_bytes=bundle.size, sha256=bundle.sha256)
            yield pb.UploadBundleRequest(header=header)
            for offset in range(0, bundle.size, CHUNK_BYTES):
                yield pb.UploadBundleRequest(chunk=bundle.data[offset : offset + CHUNK_BYTES])

        return self._caller.stream_unary(
            self._collections.UploadBundle, messages, timeout=UPLOAD_TIMEOUT_SECONDS
        )

    def submit(
        self,
        *operator_dirs: PathLike,
        batch: Optional[PathLike] = None,
        manifest: bool = False,
        mode: str = "standard",
        op_name: Optional[str] = None,
        op_name_map: Union[None, PathLike, Mapping[str, str]] = None,
        launch: str = "",
        cases: Iterable[str] = (),
        case_arg: Optional[str] = None,
        case_env: Optional[str] = None,
        runner: str = "",
        warm_up: Optional[int] = None,
        repeats: int = 0,
        seed: int = 0,
        retry: int = 0,
        max_jobs: int = 0,
        priority: int = 0,
        job_timeout: int = 0,
        keep_raw: bool = False,
        labels: Optional[Mapping[str, str]] = None,
        socs: Iterable[str] = (),
        device_range: str = "",
        idempotency_key: Optional[str] = None,
        description: str = "",
        max_bundle_bytes: int = MAX_BUNDLE_BYTES,
    ) -> Collection:
        """Packs the operators, uploads the bundles the server does not have yet and
        submits, as ``npuperf submit --no-wait``; the options are the CLI's flags
        (docs/python.md). Without ``idempotency_key`` a random one is sent, so that a
        retried submit never makes two collections."""
        dirs = _submit.operator_dirs(operator_dirs, batch)
        bundles = _submit.pack_all(dirs, max_bundle_bytes)
        req = _submit.build_request(
            dirs, bundles, batch=batch is not None, manifest=manifest, mode=mode,
            op_name=op_name, op_name_map=_submit.read_op_name_map(op_name_map), launch=launch,
            cases=cases,
            case_arg=case_arg, case_env=case_env, runner=runner, warm_up=warm_up,
            repeats=repeats, seed=seed, retry=retry, max_jobs=max_jobs, priority=priority,
            job_timeout=job_timeout, keep_raw=keep_raw, labels=labels, socs=socs,
            device_range=device_range, idempotency_key=idempotency_key or uuid.uuid4().hex,
            description=description,
        )  # fmt: skip
        # Uploads only what the server asks for: a NOT_FOUND names one bundle
        # at a time, so at most one retry per operator.
        uploaded = set()
        for _ in range(len(dirs) + 1):
            try:
                resp = self._submit_call(req)
                break
            except (InvalidArgumentError, NotFoundError) as e:
                missing = set(_submit.missing_bundles(e, req)) - uploaded
                if not missing:
                    raise
                for i in sorted(missing):
                    self.upload(bundles[i])
                uploaded |= missing
        c = Collection(self, resp.collection)
        c.created = resp.created
        return c

    def _submit_call(self, req):
        return self._caller.unary(self._collections.SubmitCollection, req, idempotent=True)

    # ---- collections -------------------------------------------------------

    def get(self, collection_id: str) -> Collection:
        pb = _proto.collection_service_pb2
        resp = self._caller.unary(
            self._collections.GetCollection,
            pb.GetCollectionRequest(collection_id=collection_id),
            idempotent=True,
        )
        return Collection(self, resp.collection)

    def collection(self, collection_id: str) -> Collection:
        """The same as get()."""
        return self.get(collection_id)

    def cancel(self, collection_id: str, reason: str = "") -> Collection:
        pb = _proto.collection_service_pb2
        resp = self._caller.unary(
            self._collections.CancelCollection,
            pb.CancelCollectionRequest(collection_id=collection_id, reason=reason),
            idempotent=False,
        )
        return Collection(self, resp.collection)

    def timeline(
        self,
        round_ids: Iterable[int] = (),
        collection_id: str = "",
        cases: Iterable[str] = (),
        tile_dag_attestation: str = "",
    ) -> list:
        """Queues the instruction timeline of formal rounds on their devices
        (``npuperf timeline``; docs/evidence.md "Timeline"): give round ids, or
        a collection id with optional case ids. Returns the generated
        ``TimelineRun`` list, one per round (its one-job collection, ``created``
        false when a timeline of that round was already queued or running);
        follow each with ``client.get(run.collection_id).wait()``.
        ``tile_dag_attestation`` is the text of your Tile-DAG attestation JSON:
        the stored timeline then says whether the formal round may be closed
        (``evidence.timeline.completion_eligible`` and its blockers)."""
        pb = _proto.collection_service_pb2
        req = pb.SubmitTimelineRequest(
            round_ids=[int(r) for r in round_ids],
            collection_id=collection_id,
            case_ids=list(cases),
            tile_dag_attestation=tile_dag_attestation,
        )
        # Idempotent per round: asking again returns the queued timeline.
        resp = self._caller.unary(self._collections.SubmitTimeline, req, idempotent=True)
        return list(resp.runs)

    def list(
        self,
        labels: Optional[Mapping[str, str]] = None,
        states: Sequence[str] = (),
        limit: Optional[int] = None,
    ) -> List[Collection]:
        """Collections, newest first, filtered by labels and states (every page, up to
        ``limit``)."""
        pb = _proto.collection_service_pb2
        unknown = [s for s in states if s not in _STATES]
        if unknown:
            raise InvalidArgumentError(f"states {unknown}: want some of {sorted(_STATES)}")
        out: List[Collection] = []
        token = ""
        while True:
            req = pb.ListCollectionsRequest(labels=dict(labels or {}), page_token=token)
            req.states.extend(_STATES[s] for s in states)
            resp = self._caller.unary(self._collections.ListCollections, req, idempotent=True)
            out += [Collection(self, c) for c in resp.collections]
            token = resp.next_page_token
            if not token or (limit is not None and len(out) >= limit):
                return out[:limit] if limit is not None else out

    # ---- rounds and reports ------------------------------------------------

    def round(self, round_id: int):
        """One round with its evidence (the generated ``Round``)."""
        pb = _proto.query_service_pb2
        resp = self._caller.unary(
            self._queries.GetRound, pb.GetRoundRequest(round_id=int(round_id)), idempotent=True
        )
        return resp.round

    def rounds(
        self,
        operator: Optional[str] = None,
        *,
        case_id: str = "",
        collection: Optional[str] = None,
        metric: str = "",
        labels: Optional[Mapping[str, str]] = None,
        since=None,
        until=None,
    ) -> RoundList:
        """Rounds of an operator (optionally one case, labels, a time window) or of a
        collection, every page; with ``metric`` also its time series."""
        if (operator is None) == (collection is None):
            raise InvalidArgumentError("give an operator or collection")
        pb = _proto.query_service_pb2
        rounds, series, token = [], [], ""
        while True:
            req = pb.ListRoundsRequest(
                operator_name=operator or "", case_id=case_id, collection_id=collection or "",
                metric=metric, labels=dict(labels or {}), page_token=token,
            )  # fmt: skip
            if since is not None:
                _timestamp(since, req.since)
            if until is not None:
                _timestamp(until, req.until)
            resp = self._caller.unary(self._queries.ListRounds, req, idempotent=True)
            rounds += list(resp.rounds)
            series += [(p.round_id, p.at.ToDatetime(), p.value) for p in resp.series]
            token = resp.next_page_token
            if not token:
                return RoundList(rounds, series)

    def report(self, target: Union[int, str]):
        """A round's evidence (``Evidence``) for a round id, or a collection's golden
        report (``GetGoldenReportResponse``: cases, geomean_ratio, label)."""
        if _is_round_id(target):
            return self.round(int(target)).evidence
        pb = _proto.query_service_pb2
        return self._caller.unary(
            self._queries.GetGoldenReport,
            pb.GetGoldenReportRequest(collection_id=str(target)),
            idempotent=True,
        )

    # ---- verdicts ----------------------------------------------------------

    def _options(self, alpha: float, threshold_pct: float, ratio_threshold_pp: float):
        return _proto.comparison_pb2.CompareOptions(
            alpha=alpha,
            duration_threshold_pct=threshold_pct,
            ratio_threshold_pp=ratio_threshold_pp,
        )

    def compare(
        self,
        baseline: Union[int, str],
        candidate: Union[int, str],
        *,
        alpha: float = 0,
        threshold_pct: float = 0,
        ratio_threshold_pp: float = 0,
    ) -> Verdict:
        """Two round ids or two collection ids, as ``npuperf compare``; ``exit_code``
        is the CLI's (0 / 3 regressed / 4 no verdict)."""
        pb = _proto.query_service_pb2
        options = self._options(alpha, threshold_pct, ratio_threshold_pp)
        if _is_round_id(baseline) != _is_round_id(candidate):
            raise InvalidArgumentError("give two round ids or two collection ids")
        if _is_round_id(baseline):
            req = pb.CompareRoundsRequest(
                baseline_round_id=int(baseline), candidate_round_id=int(candidate), options=options
            )
            return verdict_of_rounds(
                self._caller.unary(self._queries.CompareRounds, req, idempotent=True)
            )
        req = pb.CompareCollectionsRequest(
            baseline_collection_id=str(baseline),
            candidate_collection_id=str(candidate),
            options=options,
        )
        resp = self._caller.unary(self._queries.CompareCollections, req, idempotent=True)
        return verdict_of_collections(resp)

    def compare_many(
        self,
        baseline: str,
        candidates: Sequence[str],
        *,
        alpha: float = 0,
        threshold_pct: float = 0,
        ratio_threshold_pp: float = 0,
    ) -> List[Verdict]:
        """One baseline collection against up to 16 candidate collections in one call
        (CompareMany), as ``npuperf compare BASE C1 C2 ...``: one ``Verdict`` per
        candidate, in order, each as ``compare(baseline, candidate)`` would give."""
        pb = _proto.query_service_pb2
        if isinstance(candidates, (str, bytes)):
            raise InvalidArgumentError("candidates: give a list of collection ids")
        req = pb.CompareManyRequest(
            baseline_collection_id=str(baseline),
            candidate_collection_ids=[str(c) for c in candidates],
            options=self._options(alpha, threshold_pct, ratio_threshold_pp),
        )
        resp = self._caller.unary(self._queries.CompareMany, req, idempotent=True)
        return [verdict_of_collections(c.comparison) for c in resp.candidates]

    def compare_implementations(
        self,
        base: str,
        candidate: str,
        pairs: Optional[Mapping[str, str]] = None,
        *,
        pair_map: str = "",
        alpha: float = 0,
        threshold_pct: float = 0,
    ):
        """Two implementations of the same operators, as ``npuperf compare-impl BASE CAND``
        (docs/comparisons.md "Implementations"): ``pairs`` maps candidate operators to base
        operators, ``pair_map`` is the text of a pair map (``CAND_OP=BASE_OP`` lines). Returns the
        CompareImplementationsResponse: ``operators`` (scenarios, ``core_ratio``,
        ``task_duration_ratio``), ``cases``, ``unpaired``, ``arithmetic_mean``, ``geometric_mean``
        and ``counts``."""
        pb = _proto.query_service_pb2
        if pairs is not None and not hasattr(pairs, "items"):
            raise InvalidArgumentError("pairs: give a dict {candidate operator: base operator}")
        req = pb.CompareImplementationsRequest(
            base_collection_id=str(base),
            candidate_collection_id=str(candidate),
            pairs=[
                pb.OperatorPair(candidate_operator=c, base_operator=b)
                for c, b in (pairs or {}).items()
            ],
            pair_map=pair_map,
            options=self._options(alpha, threshold_pct, 0),
        )
        return self._caller.unary(self._queries.CompareImplementations, req, idempotent=True)

    def regressions(
        self,
        baseline: Labels = None,
        *,
        since=None,
        collection: str = "",
        operator: str = "",
        alpha: float = 0,
        threshold_pct: float = 0,
        ratio_threshold_pp: float = 0,
        include_closed: bool = False,
        confirm: bool = False,
        confirm_timeout: float = 7200,
    ) -> Verdict:
        """Regressions against a pinned baseline label ("branch=main" or
        {"branch": "main"}) or since a time, as ``npuperf regressions``
        (``include_closed``: ``--all``). ``proto.tracked`` holds each listed case's
        tracked regression; ``exit_code`` counts only new ones. ``confirm``
        (``--confirm``): also rerun each regression on another device and wait
        up to ``confirm_timeout`` seconds; ``proto.confirmations`` holds the
        outcomes, and a NOT_CONFIRMED regression is not counted."""
        if baseline is None and since is None:
            raise InvalidArgumentError("give --baseline LABEL or --since TIME")
        pb = _proto.query_service_pb2
        req = pb.ListRegressionsRequest(
            baseline_label=_label_text(baseline),
            candidate_collection_id=collection,
            operator_name=operator,
            options=self._options(alpha, threshold_pct, ratio_threshold_pp),
            include_closed=include_closed,
            confirm=confirm,
        )
        if since is not None:
            _timestamp(since, req.since)
        resp = self._caller.unary(self._queries.ListRegressions, req, idempotent=True)
        if confirm:
            for c in resp.confirmations:
                if c.id and c.state == pb.CONFIRMATION_STATE_PENDING:
                    c.CopyFrom(self.wait_confirmation(c.id, timeout=confirm_timeout))
        return verdict_of_regressions(resp)

    def request_confirmation(
        self,
        baseline_round: int,
        candidate_round: int,
        *,
        pairs: int = 0,
        alpha: float = 0,
        threshold_pct: float = 0,
        ratio_threshold_pp: float = 0,
    ):
        """Reruns a REGRESSED or IMPROVED comparison of two rounds interleaved
        (A B A B) on another device, as ``npuperf confirm --no-wait``: the
        generated ``Confirmation`` (PENDING, or UNCONFIRMED when no device can
        rerun it). Asking again for the same pair returns the same one."""
        pb = _proto.query_service_pb2
        req = pb.RequestConfirmationRequest(
            baseline_round_id=int(baseline_round),
            candidate_round_id=int(candidate_round),
            pairs=int(pairs),
            options=self._options(alpha, threshold_pct, ratio_threshold_pp),
        )
        # Idempotent per pair of rounds: a resend returns the confirmation made.
        resp = self._caller.unary(self._queries.RequestConfirmation, req, idempotent=True)
        return resp.confirmation

    def confirmation(self, confirmation_id: int):
        """One confirmation (generated ``Confirmation``), as ``npuperf confirmation ID``."""
        pb = _proto.query_service_pb2
        req = pb.GetConfirmationRequest(confirmation_id=int(confirmation_id))
        return self._caller.unary(self._queries.GetConfirmation, req, idempotent=True).confirmation

    def wait_confirmation(self, confirmation_id: int, *, timeout: float = 7200, poll: float = 2):
        """Reads a confirmation until it is no longer PENDING or ``timeout``
        seconds passed; returns it as last read."""
        pb = _proto.query_service_pb2
        deadline = time.monotonic() + timeout
        while True:
            c = self.confirmation(confirmation_id)
            if c.state != pb.CONFIRMATION_STATE_PENDING or time.monotonic() >= deadline:
                return c
            time.sleep(poll)

    def bisection(self, bisection_id: int):
        """One bisection of the team, advanced to its current state (generated
        ``Bisection``: state, reason, revisions, steps, culprits), as ``npuperf
        bisection ID`` (docs/comparisons.md, "Bisection")."""
        pb = _proto.query_service_pb2
        req = pb.GetBisectionRequest(bisection_id=int(bisection_id))
        return self._caller.unary(self._queries.GetBisection, req, idempotent=True).bisection

    def wait_bisection(self, bisection_id: int, *, timeout: float = 86400, poll: float = 2):
        """Reads a bisection until it ends (DONE, REFUSED, FAILED or CANCELLED)
        or ``timeout`` seconds passed; returns it as last read."""
        pb = _proto.query_service_pb2
        ended = {
            pb.BISECTION_STATE_DONE,
            pb.BISECTION_STATE_REFUSED,
            pb.BISECTION_STATE_FAILED,
            pb.BISECTION_STATE_CANCELLED,
        }
        deadline = time.monotonic() + timeout
        while True:
            b = self.bisection(bisection_id)
            if b.state in ended or time.monotonic() >= deadline:
                return b
            time.sleep(poll)

    def list_bisections(self, include_finished: bool = False, limit: int = 0) -> list:
        """The team's bisections, newest first, without their steps (``npuperf
        bisections [--all]``)."""
        pb = _proto.query_service_pb2
        req = pb.ListBisectionsRequest(include_finished=bool(include_finished), limit=int(limit))
        return list(self._caller.unary(self._queries.ListBisections, req, idempotent=True).bisections)

    def cancel_bisection(self, bisection_id: int, note: str = ""):
        """Cancels a bisection and every run of it not finished (``npuperf
        bisection ID --cancel --note``); cancelling an ended one changes nothing."""
        pb = _proto.query_service_pb2
        req = pb.CancelBisectionRequest(bisection_id=int(bisection_id), note=note)
        return self._caller.unary(self._queries.CancelBisection, req, idempotent=True).bisection

    def regression(self, regression_id: int):
        """One tracked regression with its transitions (generated
        ``GetRegressionResponse``), as ``npuperf triage ID``."""
        pb = _proto.query_service_pb2
        req = pb.GetRegressionRequest(id=int(regression_id))
        return self._caller.unary(self._queries.GetRegression, req, idempotent=True)

    def triage(self, regression_id: int, state: str, note: str = ""):
        """Moves a regression to ``state`` ("ACKNOWLEDGED", "FIXED", "WONT_FIX" or
        "FALSE_POSITIVE"), as ``npuperf triage ID --ack ...``: reads its state
        first and sends it as the expected one (a concurrent change raises
        FAILED_PRECONDITION). Returns the generated ``Regression``."""
        pb = _proto.query_service_pb2
        current = self.regression(regression_id).regression
        req = pb.TriageRegressionRequest(
            id=int(regression_id),
            expected_state=current.state,
            new_state=pb.RegressionState.Value("REGRESSION_STATE_" + state.upper()),
            note=note,
        )
        # Not retried: a resend after an unseen success would fail its compare-and-set.
        return self._caller.unary(self._queries.TriageRegression, req, idempotent=False).regression

    def start_calibration(self, collection_id: str, runs: int = 0):
        """Reruns a finished standard or quick collection ``runs`` times (3..20;
        0: the server's 5) as it was and, when they finish, stores each case's
        measured noise (docs/comparisons.md, "Measured noise"), as ``npuperf
        calibrate``. Returns the generated ``Calibration`` (RUNNING)."""
        pb = _proto.query_service_pb2
        req = pb.StartCalibrationRequest(collection_id=str(collection_id), runs=int(runs))
        # Not retried: a resend after an unseen success would start a second one.
        return self._caller.unary(self._queries.StartCalibration, req, idempotent=False).calibration

    def get_calibration(self, calibration_id: int):
        """One calibration of the team, advanced to its current state (generated
        ``Calibration``: state, reason, collection_ids, spreads)."""
        pb = _proto.query_service_pb2
        req = pb.GetCalibrationRequest(calibration_id=int(calibration_id))
        return self._caller.unary(self._queries.GetCalibration, req, idempotent=True).calibration

    def list_noise(self, operator: str = "") -> list:
        """The measured spreads verdicts use now (generated ``NoiseSpread``: soc,
        mode, operator_name, case_id, family, spread, rounds, threshold,
        expected_false_alarm_rate, calibration_id), as ``npuperf noise``."""
        pb = _proto.query_service_pb2
        req = pb.ListNoiseRequest(operator_name=operator)
        return list(self._caller.unary(self._queries.ListNoise, req, idempotent=True).spreads)

    def pin_baseline(self, label: Labels, target: Union[int, str]) -> Baseline:
        """Pins a round id or collection id as the baseline of ``label``."""
        pb = _proto.query_service_pb2
        req = pb.PinBaselineRequest(label=_label_text(label))
        if _is_round_id(target):
            req.round_id = int(target)
        else:
            req.collection_id = str(target)
        resp = self._caller.unary(self._queries.PinBaseline, req, idempotent=True)
        return Baseline(resp.label, resp.round_id, resp.collection_id)

    def agents(self) -> list:
        """The registered agents (generated ``AgentStatus``: agent_id, host, state,
        devices, labels, last_seen)."""
        resp = self._caller.unary(
            self._queries.ListAgents, _proto.query_service_pb2.ListAgentsRequest(), idempotent=True
        )
        return list(resp.agents)

    def quarantines(self, include_released: bool = False, limit: int = 0) -> list:
        """The quarantined devices, newest first (generated ``DeviceQuarantine``;
        ``npuperf devices list [--all]``): with ``include_released`` the released
        ones too, with who released them and why. Hosts are shown to the server's
        ``--device-admin`` teams only."""
        pb = _proto.device_service_pb2
        req = pb.ListQuarantinesRequest(include_released=bool(include_released), limit=int(limit))
        return list(self._caller.unary(self._devices.ListQuarantines, req, idempotent=True).quarantines)

    def canaries(self, device: Optional[str] = None, soc: str = "", limit: int = 0) -> list:
        """The canaries the server ran on idle devices, newest first (generated
        ``Canary``; ``npuperf devices canaries``): state, kernel time, what it was
        judged against and why. ``device`` is "HOST:DEV" (device admins) or "DEV"."""
        pb = _proto.device_service_pb2
        req = pb.ListCanariesRequest(soc=soc, limit=int(limit))
        if device is not None:
            host, _, dev = str(device).rpartition(":")
            if not dev.isdigit():
                raise ValueError(f"device {device!r}: want HOST:DEV or DEV")
            req.host = host
            req.device_id = int(dev)
        return list(self._caller.unary(self._devices.ListCanaries, req, idempotent=True).canaries)

    def release_device(self, device: str, note: str):
        """Puts a quarantined device ("HOST:DEV") back in service with a note kept
        beside its quarantine (``npuperf devices release``; a --device-admin team
        only). Returns the released ``DeviceQuarantine``."""
        host, _, dev = str(device).rpartition(":")
        if not host or not dev.isdigit():
            raise ValueError(f"device {device!r}: want HOST:DEV")
        pb = _proto.device_service_pb2
        req = pb.ReleaseDeviceRequest(host=host, device_id=int(dev), note=note)
        return self._caller.unary(self._devices.ReleaseDevice, req, idempotent=True).quarantine
