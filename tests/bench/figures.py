#!/usr/bin/env python3
"""The benches' figures against the last accepted ones (issue 36: no figure may fall unnoticed).

tests/bench/baseline.json names each tracked figure: the bench output line it is read from (a
regular expression whose first group is the number), whether higher or lower is better, and the
last accepted value with the date and machine it was taken on. This reads a bench run's output and
prints, for every tracked figure it finds, the new value, the accepted one and their ratio, marking
a figure that got worse by more than its tolerance (default 10 %) with "WORSE".

  tests/bench/figures.py [--baseline FILE] [--accept] OUTPUT...

--accept writes the values found into the baseline (after a run the team accepts: commit the file
with the change that moved them). Exit: 0 (a ratio, not a timed test: a worse figure is printed,
never a failure); 2 on a bad baseline file or an unreadable output.
"""
import argparse
import datetime
import json
import os
import platform
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_baseline(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    figures = doc.get("figures")
    if not isinstance(figures, list):
        raise ValueError(f"{path}: 'figures' must be a list")
    for i, fig in enumerate(figures):
        for key in ("name", "pattern", "better"):
            if not isinstance(fig.get(key), str):
                raise ValueError(f"{path}: figures[{i}].{key} must be a string")
        if fig["better"] not in ("higher", "lower"):
            raise ValueError(f"{path}: figures[{i}].better must be 'higher' or 'lower'")
        re.compile(fig["pattern"])
    return doc


def find(pattern, lines):
    """The first group of the first line matching pattern, as a float; None when absent."""
    rx = re.compile(pattern)
    for line in lines:
        m = rx.search(line)
        if m:
            try:
                return float(m.group(1))
            except (IndexError, ValueError):
                return None
    return None


def verdict(fig, new):
    old = fig.get("value")
    if not isinstance(old, (int, float)):
        return "new", None
    if old == 0:  # no ratio; any rise of a figure accepted at 0 (calls that went away) shows
        if new == 0:
            return "same", None
        return ("WORSE" if fig["better"] == "lower" else "better"), None
    ratio = new / old
    tolerance = float(fig.get("tolerance", 0.10))
    worse = ratio < 1 - tolerance if fig["better"] == "higher" else ratio > 1 + tolerance
    better = ratio > 1 + tolerance if fig["better"] == "higher" else ratio < 1 - tolerance
    return ("WORSE" if worse else "better" if better else "same"), ratio


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=os.path.join(HERE, "baseline.json"))
    ap.add_argument("--accept", action="store_true")
    ap.add_argument("outputs", nargs="+")
    args = ap.parse_args()
    try:
        doc = load_baseline(args.baseline)
        lines = []
        for path in args.outputs:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines.extend(f.read().splitlines())
    except (OSError, ValueError, re.error) as e:
        print(f"figures: {e}", file=sys.stderr)
        return 2
    print(f"{'figure':<60} {'now':>12} {'accepted':>12} {'ratio':>7}  verdict (taken)")
    found = 0
    for fig in doc["figures"]:
        new = find(fig["pattern"], lines)
        if new is None:
            continue
        found += 1
        word, ratio = verdict(fig, new)
        old = fig.get("value")
        print(f"{fig['name']:<60} {new:>12.6g} {old if old is not None else '-':>12} "
              f"{'' if ratio is None else format(ratio, '.2f'):>7}  {word} "
              f"({fig.get('taken', 'never')})")
        if args.accept:
            fig["value"] = new
            fig["taken"] = f"{datetime.date.today()} {platform.node()} {os.cpu_count()} cores"
    print(f"figures: {found} of {len(doc['figures'])} tracked figures in this run "
          "(WORSE / better: beyond the figure's tolerance, in its own direction)")
    if args.accept:
        with open(args.baseline, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print(f"figures: accepted into {args.baseline}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
