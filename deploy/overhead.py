#!/usr/bin/env python3
"""Splits a finished batch's time into simulated msprof runs and agent/server overhead.

Inputs are measurements only: the collection JSON (`npuperf --format json submit ...`: each job's device,
lease time `started_at` and result time `finished_at`, stamped by the server), the agent's
`npuperf_agent_job_phase_seconds` sums (per-phase wall time of every job attempt, measured by the agent),
and the batch's wall-clock start and end. Used by deploy/demo.sh.

A device's busy span runs from its first lease to its last stored result. Inside the spans, time is
msprof runs, runner warm-up/preflight runs (the operator's own code without msprof), and the rest: agent
work inside jobs (bundle, parse, spool, progress reports, process start-up) and the server/agent round
trips between jobs (result report and ingest, the next lease). That rest is the overhead. Outside the
spans are the submission (pack, upload, queue) and devices left idle while the last jobs finish.
"""
import argparse
import datetime
import json
import re
import sys
import urllib.request


def parse_time(text):
    # RFC 3339 with up to nanoseconds ("2026-01-02T03:04:05.123456789Z").
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z", text)
    if not m:
        raise ValueError(f"unexpected timestamp {text!r}")
    base = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return base.timestamp() + (float(m.group(2)) if m.group(2) else 0.0)


def phase_sums(metrics_text):
    sums = {}
    for m in re.finditer(r'^npuperf_agent_job_phase_seconds_sum\{phase="([a-z_]+)"\} (\S+)$', metrics_text, re.M):
        sums[m.group(1)] = float(m.group(2))
    return sums


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-json", required=True)
    ap.add_argument("--metrics", required=True, help="agent /metrics URL")
    ap.add_argument("--start", type=float, required=True, help="batch start, Unix seconds")
    ap.add_argument("--end", type=float, required=True, help="batch end, Unix seconds")
    ap.add_argument("--devices", type=int, required=True)
    a = ap.parse_args()

    with open(a.batch_json) as f:
        jobs = json.load(f)["jobs"]
    spans = {}
    for j in jobs:
        if not j.get("started_at") or not j.get("finished_at"):
            continue
        dev = j["placement"]["device_id"]
        start, end = parse_time(j["started_at"]), parse_time(j["finished_at"])
        lo, hi = spans.get(dev, (start, end))
        spans[dev] = (min(lo, start), max(hi, end))
    if not spans:
        sys.exit("overhead: no finished jobs")
    with urllib.request.urlopen(a.metrics, timeout=5) as r:
        phases = phase_sums(r.read().decode())

    batch = a.end - a.start
    busy = sum(hi - lo for lo, hi in spans.values())
    msprof = phases.get("msprof", 0.0)
    runner = phases.get("warm_up", 0.0) + phases.get("preflight", 0.0)
    in_job = sum(phases.get(p, 0.0) for p in ("bundle", "parse", "spool", "other"))
    overhead = busy - msprof - runner
    between = overhead - in_job
    first_lease = min(lo for lo, _ in spans.values())
    idle = sum(a.end - hi for _, hi in spans.values()) + (a.devices - len(spans)) * batch
    print(f"demo: batch {batch:.1f} s; msprof runs {msprof:.1f} s summed over devices; "
          f"agent+server overhead {overhead:.1f} s ({100 * overhead / busy:.1f}% of the {busy:.1f} s "
          f"the devices were busy, also summed)")
    print(f"demo:   busy device-s = msprof {msprof:.1f} + runner warm-up/preflight {runner:.1f} + "
          f"agent work in jobs {in_job:.1f} (bundle {phases.get('bundle', 0):.1f}, parse {phases.get('parse', 0):.1f}, "
          f"spool {phases.get('spool', 0):.1f}, other {phases.get('other', 0):.1f}) + "
          f"report/ingest/lease between jobs {between:.1f}")
    print(f"demo:   outside: submit+upload to first lease {first_lease - a.start:.1f} s; "
          f"{len(jobs)} jobs on {len(spans)} of {a.devices} devices; "
          f"devices idle while the last jobs ran {idle:.1f} device-s")


if __name__ == "__main__":
    main()
