"""Typed results of the npuperf client.

Verdicts, jobs, counts and watch events are frozen dataclasses with the fields a
bot reads; each keeps the generated message it came from in ``proto`` for
everything else (docs/api.md names every field). Rounds and agents are the
generated messages themselves (``npuperf.v1.comparison_pb2.Round``,
``query_service_pb2.AgentStatus``).
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any, List, Optional, Sequence, Tuple

from npuperf._proto import collection_pb2, comparison_pb2, query_service_pb2

EXIT_OK, EXIT_REGRESSED, EXIT_NO_VERDICT = 0, 3, 4


def _strip(name: str, prefix: str) -> str:
    return (name[len(prefix) :] if name.startswith(prefix) else name).lower()


def job_state_name(value: int) -> str:
    """"succeeded" for JOB_STATE_SUCCEEDED, as the CLI prints states."""
    return _strip(collection_pb2.JobState.Name(value), "JOB_STATE_")


def collection_state_name(value: int) -> str:
    return _strip(collection_pb2.CollectionState.Name(value), "COLLECTION_STATE_")


def verdict_name(value: int) -> str:
    """"REGRESSED" for VERDICT_REGRESSED, as the CLI prints verdicts."""
    name = comparison_pb2.Verdict.Name(value)
    return name[len("VERDICT_") :] if name.startswith("VERDICT_") else name


def timestamp(ts) -> Optional[datetime.datetime]:
    """A google.protobuf.Timestamp as an aware UTC datetime; None when unset."""
    if ts.seconds == 0 and ts.nanos == 0:
        return None
    return datetime.datetime.fromtimestamp(ts.seconds + ts.nanos / 1e9, tz=datetime.timezone.utc)


def _dataframe(rows: List[dict]):
    try:
        import pandas
    except ImportError as e:
        raise ImportError("to_dataframe() needs pandas (Debian: apt-get install python3-pandas)") from e
    return pandas.DataFrame(rows)


@dataclasses.dataclass(frozen=True)
class JobCounts:
    total: int
    queued: int
    leased: int
    running: int
    succeeded: int
    failed: int
    cancelled: int

    @classmethod
    def of(cls, m) -> "JobCounts":
        return cls(m.total, m.queued, m.leased, m.running, m.succeeded, m.failed, m.cancelled)

    @property
    def done(self) -> int:
        return self.succeeded + self.failed + self.cancelled


@dataclasses.dataclass(frozen=True)
class Job:
    """One operator x case of a collection."""

    id: int
    operator: str
    case_id: str
    op_name: str
    state: str  # queued, leased, running, succeeded, failed, cancelled
    attempt: int
    max_attempts: int
    host: str
    device_id: int
    soc: str
    phase: str  # preparing, warm_up, metric_run, ... while running
    reason: str
    round_id: int  # 0 until it succeeded
    kernel_time_us: float
    bound: str
    proto: Any = dataclasses.field(repr=False, compare=False)

    @classmethod
    def of(cls, j) -> "Job":
        return cls(
            id=j.id,
            operator=j.operator_name,
            case_id=j.case_id,
            op_name=j.op_name,
            state=job_state_name(j.state),
            attempt=j.attempt,
            max_attempts=j.max_attempts,
            host=j.placement.host,
            device_id=j.placement.device_id,
            soc=j.placement.soc,
            phase=_strip(collection_pb2.JobPhase.Name(j.progress.phase), "JOB_PHASE_"),
            reason=j.reason,
            round_id=j.round_id,
            kernel_time_us=j.kernel_time_us,
            bound=j.bound_label,
            proto=j,
        )

    @property
    def label(self) -> str:
        return f"{self.operator}/{self.case_id}" if self.case_id else self.operator

    def row(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "proto"}


@dataclasses.dataclass(frozen=True)
class ComparisonCounts:
    """The denominators of a set of verdicts."""

    matched: int
    comparable: int
    improved: int
    regressed: int
    stable: int
    insufficient: int
    not_comparable: int
    errored: int
    unmatched: int

    @classmethod
    def of(cls, n) -> "ComparisonCounts":
        return cls(
            n.matched, n.comparable, n.improved, n.regressed, n.stable,
            n.insufficient, n.not_comparable, n.errored, n.unmatched,
        )  # fmt: skip

    @property
    def summary(self) -> str:
        """The CLI's summary line (client/format.cc CountsSummary), word for word."""
        return (
            f"{self.regressed} regressed, {self.improved} improved, {self.stable} stable / "
            f"{self.comparable} comparable of {self.matched} matched ({self.insufficient} "
            f"insufficient, {self.not_comparable} not comparable, {self.errored} errored, "
            f"{self.unmatched} unmatched)"
        )

    def exit_code(self, fail_on: str = "no-verdict") -> int:
        """The CLI's exit code for these verdicts under ``--fail-on`` (docs/api.md):
        3 regressed; else 4 when nothing was comparable or a case had no verdict; else 0."""
        if fail_on == "never":
            return EXIT_OK
        if self.regressed > 0:
            return EXIT_REGRESSED
        if fail_on == "regressed":
            return EXIT_OK
        if fail_on != "no-verdict":
            raise ValueError(f"fail_on {fail_on!r}: want no-verdict, regressed or never")
        if self.comparable == 0 or self.insufficient or self.not_comparable or self.errored:
            return EXIT_NO_VERDICT
        return EXIT_OK


def counts_of_one(verdict: int) -> ComparisonCounts:
    """The counts of a single round comparison (as the CLI's compare ROUND ROUND)."""
    names = {
        comparison_pb2.VERDICT_IMPROVED: "improved",
        comparison_pb2.VERDICT_REGRESSED: "regressed",
        comparison_pb2.VERDICT_STABLE: "stable",
        comparison_pb2.VERDICT_INSUFFICIENT: "insufficient",
        comparison_pb2.VERDICT_NOT_COMPARABLE: "not_comparable",
    }
    fields = dict.fromkeys(
        ("matched", "comparable", "improved", "regressed", "stable", "insufficient",
         "not_comparable", "errored", "unmatched"), 0,
    )  # fmt: skip
    fields["matched"] = 1
    name = names.get(verdict, "errored")
    fields[name] = 1
    if name in ("improved", "regressed", "stable"):
        fields["comparable"] = 1
    return ComparisonCounts(**fields)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Two rounds of one operator and case compared (RoundComparison)."""

    operator: str
    case_id: str
    verdict: str  # IMPROVED, REGRESSED, STABLE, INSUFFICIENT, NOT_COMPARABLE, ERRORED
    rule: str
    baseline_round_id: int
    candidate_round_id: int
    baseline_us: float
    candidate_us: float
    ratio: float  # candidate / baseline; below 1 is faster; 0 when not computable
    ratio_ci: Optional[Tuple[float, float]]
    p_value: float
    flags: Tuple[str, ...]
    proto: Any = dataclasses.field(repr=False, compare=False)

    @classmethod
    def of(cls, c) -> "Comparison":
        d = c.duration
        ci = (d.ratio_ci_low, d.ratio_ci_high) if d.ratio_ci_low > 0 else None
        return cls(
            operator=c.operator_name,
            case_id=c.case_id,
            verdict=verdict_name(c.verdict),
            rule=c.rule,
            baseline_round_id=c.baseline_round_id,
            candidate_round_id=c.candidate_round_id,
            baseline_us=d.baseline_us,
            candidate_us=d.candidate_us,
            ratio=d.ratio,
            ratio_ci=ci,
            p_value=d.p_value,
            flags=tuple(c.flags),
            proto=c,
        )

    @property
    def label(self) -> str:
        return f"{self.operator}/{self.case_id}" if self.case_id else self.operator

    def row(self) -> dict:
        row = {k: getattr(self, k) for k in (
            "operator", "case_id", "verdict", "rule", "baseline_round_id", "candidate_round_id",
            "baseline_us", "candidate_us", "ratio", "p_value")}  # fmt: skip
        row["ratio_ci_low"], row["ratio_ci_high"] = self.ratio_ci or (None, None)
        row["flags"] = ",".join(self.flags)
        return row


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What compare or regressions found. ``exit_code`` and ``summary`` are the CLI's
    (0 ok, 3 regressed, 4 no verdict; the same summary line); ``kind`` is "rounds",
    "collections" or "regressions". For regressions, ``comparisons`` holds the
    regressed cases only and ``compared``/``baseline_description`` are set."""

    kind: str
    summary: str
    counts: ComparisonCounts
    comparisons: Tuple[Comparison, ...]
    unmatched: Tuple[str, ...]
    geomean_ratio: float  # over the comparable cases; 0 when none
    compared: int
    baseline_description: str
    proto: Any = dataclasses.field(repr=False, compare=False)
    # regressions: the counts with only the new (untracked or DETECTED)
    # regressions and the drifts that began in the window as regressed, which
    # the exit code is decided on (docs/comparisons.md, "Triage", "Drifts");
    # None: ``counts``.
    exit_counts: Optional[ComparisonCounts] = dataclasses.field(
        default=None, repr=False, compare=False
    )
    # regressions --since: drifts that began in the window (in exit_counts);
    # the drifts themselves are proto.drifts.
    new_drifts: int = 0

    @property
    def exit_code(self) -> int:
        return self.exit_code_for("no-verdict")

    def exit_code_for(self, fail_on: str) -> int:
        """The exit code under ``--fail-on regressed|no-verdict|never``."""
        return (self.exit_counts or self.counts).exit_code(fail_on)

    @property
    def regressed(self) -> Tuple[Comparison, ...]:
        return tuple(c for c in self.comparisons if c.verdict == "REGRESSED")

    def to_dataframe(self):
        """One row per comparison (needs pandas)."""
        return _dataframe([c.row() for c in self.comparisons])


def verdict_of_rounds(resp: "query_service_pb2.CompareRoundsResponse") -> Verdict:
    counts = counts_of_one(resp.comparison.verdict)
    return Verdict("rounds", counts.summary, counts, (Comparison.of(resp.comparison),), (), 0.0,
                   counts.comparable, "", resp)  # fmt: skip


def verdict_of_collections(resp) -> Verdict:
    counts = ComparisonCounts.of(resp.counts)
    return Verdict(
        "collections", counts.summary, counts,
        tuple(Comparison.of(c) for c in resp.comparisons), tuple(resp.unmatched),
        resp.geomean_ratio, counts.comparable, "", resp,
    )  # fmt: skip


def new_regressions(resp) -> int:
    """The listed regressions that fail a bot (client/triage_commands.cc
    NewRegressions): all of an untracked listing, else those without a tracked
    regression (id 0) and the DETECTED ones; with confirmations (``confirm``),
    not those whose confirmation is NOT_CONFIRMED."""
    tracked = len(resp.tracked) == len(resp.regressions)
    confirmed = len(resp.confirmations) == len(resp.regressions)
    detected = query_service_pb2.REGRESSION_STATE_DETECTED
    not_confirmed = query_service_pb2.CONFIRMATION_STATE_NOT_CONFIRMED
    n = 0
    for i in range(len(resp.regressions)):
        if tracked and resp.tracked[i].id != 0 and resp.tracked[i].state != detected:
            continue
        if confirmed and resp.confirmations[i].state == not_confirmed:
            continue
        n += 1
    return n


def verdict_of_regressions(resp) -> Verdict:
    counts = ComparisonCounts.of(resp.counts)
    summary = (
        f"{len(resp.regressions)} regressed / {resp.compared} comparable against "
        f"{resp.baseline_description} ({counts.summary})"
    )
    fresh = new_regressions(resp)
    if fresh != len(resp.regressions):
        summary += f"; {fresh} new, {len(resp.regressions) - fresh} already triaged"
    new_drifts = sum(1 for d in resp.drifts if d.began_in_window)
    if resp.drifts:
        summary += f"; {len(resp.drifts)} drifted ({new_drifts} new)"
    return Verdict(
        "regressions", summary, counts, tuple(Comparison.of(c) for c in resp.regressions), (),
        0.0, resp.compared, resp.baseline_description, resp,
        exit_counts=dataclasses.replace(counts, regressed=fresh + new_drifts),
        new_drifts=new_drifts,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Baseline:
    """A pinned baseline (PinBaselineResponse): a round id or a collection id."""

    label: str
    round_id: int
    collection_id: str


class RoundList(list):
    """Rounds (generated ``Round`` messages, without evidence_json) with the metric
    series of ListRounds when one was asked for: ``series`` holds
    ``(round_id, datetime, value)``, oldest first."""

    def __init__(self, rounds: Sequence = (), series: Sequence[Tuple[int, Any, float]] = ()):
        super().__init__(rounds)
        self.series = list(series)

    def to_dataframe(self):
        """One row per round: ids, operator, case, soc, kernel time, samples, bound,
        per-core balance, DVFS (needs pandas)."""
        rows = []
        for r in self:
            e = r.evidence
            rows.append({
                "round_id": r.id, "collection_id": r.collection_id, "operator": r.operator_name,
                "case_id": r.case_id, "created_at": timestamp(r.created_at),
                "soc": e.fingerprint.soc, "kernel_us": e.duration.aggregate_us,
                "samples": len(e.duration.samples_us), "bound": e.bound.label,
                "per_core": e.per_core.verdict, "dvfs": e.dvfs.status,
            })  # fmt: skip
        return _dataframe(rows)
