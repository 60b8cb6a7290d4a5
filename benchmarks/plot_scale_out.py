"""Efficiency against cores for each round trip: the emulated cluster's runs, measured,
and the multi-lane model's predictions, in one figure (benchmarks/RESULTS.md).

Measured points come from :mod:`stealsearch.benchmarks.emulate_cluster` logs (every
line that is its ``--json`` object counts; other lines are skipped): the runs of one
tree shape, size, round trip and policy are one point, their median, with the lowest and the
highest as a bar.  Model lines come from ``simulate_cluster run ... --json FILE`` (one
JSON line per size): one line per profile, round trip and policy.  Where the runs
or the lines ran more than one policy, each is labelled with the fields that differ
(``probes=8``; filled markers and dotted lines for all but the first).

    python -m stealsearch.benchmarks.plot_scale_out --measured run-*.log \\
        --model model.jsonl --out benchmarks/results/scale_out_measured.png

It prints the table of what it drew (markdown).  Bad input (a file that cannot be read,
a model line that is not JSON, nothing to draw): one line, exit code 2.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

#: colours by round trip (ms); others take the cycle's
RTT_COLOURS = {0.5: "tab:blue", 5.0: "tab:red"}
#: markers of the measured points by tree shape (the first word of the run's ``tree``)
SHAPE_MARKERS = {"T1XL-shaped": "s", "T3-shaped": "^", "clique": "D"}
TARGETS = (0.9, 0.8)


class InputError(ValueError):
    """A file the figure cannot be drawn from."""


def _shape(tree: str) -> str:
    """A run's tree shape: the first word of its ``tree`` ("T1XL-shaped", "clique"), and a
    clique's first incumbent, which changes the tree searched ("clique, heuristic none")."""
    if not tree:
        return "?"
    head, _, heuristic = tree.partition(", heuristic ")
    return head.split()[0] + (f", heuristic {heuristic}" if heuristic else "")


def _read_lines(path: str) -> list[str]:
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None


def measured_points(paths) -> list[dict]:
    """The emulated runs in ``paths``, one point per (tree shape, machines, lanes, round
    trip, policy): ``efficiency`` (the median), ``low``, ``high``, ``runs``, ``loads``,
    ``tag`` (the policy fields that differ between the points)."""
    groups: dict[tuple, list[dict]] = {}
    for path in paths:
        for line in _read_lines(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                run = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(run, dict) or "efficiency" not in run or "emulated_cores" not in run:
                continue
            if run.get("fault"):                   # a fault's run is not a scaling point
                continue
            key = (_shape(run.get("tree", "")), run["machines"], run["lanes"], float(run["rtt_ms"]),
                   json.dumps(run.get("policy", {}), sort_keys=True))
            groups.setdefault(key, []).append(run)
    points = []
    for (shape, machines, lanes, rtt, policy), runs in sorted(groups.items()):
        eff = [r["efficiency"] for r in runs]
        points.append({"shape": shape, "machines": machines, "lanes": lanes,
                       "policy": json.loads(policy),
                       "cores": machines * lanes, "rtt_ms": rtt,
                       "efficiency": statistics.median(eff), "low": min(eff), "high": max(eff),
                       "runs": len(runs), "exact": all(r.get("exact") for r in runs),
                       "loads": [r.get("load_average") for r in runs]})
    _tag(points)
    return points


def _tag(items) -> None:
    """Each item's ``tag``: the policy fields whose values differ between the items
    (``probes=8``), empty when they all ran one policy."""
    keys = sorted({k for it in items for k in it["policy"]})
    varying = [k for k in keys if len({json.dumps(it["policy"].get(k)) for it in items}) > 1]
    for it in items:
        it["tag"] = " ".join(f"{k}={it['policy'].get(k)}" for k in varying)


def model_lines(paths) -> dict[tuple, list[dict]]:
    """``simulate_cluster run --json`` lines by (profile name, round trip, policy and
    levers), each sorted by cores (the last line of a size wins: a run done again
    replaces the first); a line's ``tag`` says how its policy differs from the others'."""
    lines: dict[tuple, dict[int, dict]] = {}
    for path in paths:
        for i, line in enumerate(_read_lines(path), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                key = (os.path.splitext(os.path.basename(r["profile"]))[0], float(r["rtt_ms"]),
                       json.dumps({**r.get("policy", {}), **r.get("levers", {})}, sort_keys=True))
                lines.setdefault(key, {})[int(r["cores"])] = r
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                raise InputError(f"{path}:{i}: not a simulate_cluster --json line") from None
    heads = [{"key": k, "policy": json.loads(k[2])} for k in sorted(lines)]
    _tag(heads)
    return {(k[0], k[1], h["tag"]): [lines[k][c] for c in sorted(lines[k])]
            for h in heads for k in [h["key"]]}


def _colour(rtt: float, others: dict) -> str:
    if rtt in RTT_COLOURS:
        return RTT_COLOURS[rtt]
    cycle = ["tab:green", "tab:purple", "tab:orange", "tab:brown"]
    return others.setdefault(rtt, cycle[len(others) % len(cycle)])


def plot(points: list[dict], lines: dict, path: str, title: str | None = None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    others: dict = {}
    tags = sorted({tag for _, _, tag in lines} | {p["tag"] for p in points})
    for (profile, rtt, tag), rs in lines.items():
        style = "--" if profile.startswith("T3") else (":" if tags.index(tag) else "-")
        ax.plot([r["cores"] for r in rs], [r["efficiency"] for r in rs], style, marker="o",
                ms=3, color=_colour(rtt, others),
                label=f"model, {profile}, {rtt:g} ms" + (f", {tag}" if tag else ""))
    seen = set()
    for p in points:
        c = _colour(p["rtt_ms"], others)
        label = f"measured, {p['shape']}, {p['rtt_ms']:g} ms" + (f", {p['tag']}" if p["tag"] else "")
        ax.errorbar(p["cores"], p["efficiency"],
                    yerr=[[p["efficiency"] - p["low"]], [p["high"] - p["efficiency"]]],
                    fmt=SHAPE_MARKERS.get(p["shape"].split(",")[0], "o"), ms=7, color=c,
                    mfc=c if tags.index(p["tag"]) else "none",
                    capsize=3, label=None if label in seen else label)
        seen.add(label)
    for y in TARGETS:
        ax.axhline(y, color="grey", lw=0.6)
    ax.set_xscale("log", base=2)
    ticks = sorted({p["cores"] for p in points} | {r["cores"] for rs in lines.values() for r in rs})
    ax.set_xticks(ticks, [f"{x:,}" for x in ticks])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("cores (16 lanes a machine)")
    ax.set_ylabel("efficiency")
    ax.set_title(title or "efficiency against cores: emulated (median, range) and the model",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown(points: list[dict], lines: dict) -> str:
    out = ["| what | cores | round trip | efficiency | runs / seeds |", "|---|---|---|---|---|"]
    for p in points:
        rng = f" [{p['low']:.2f}-{p['high']:.2f}]" if p["runs"] > 1 else ""
        out.append(f"| measured, {p['shape']}{', ' + p['tag'] if p['tag'] else ''}"
                   f"{'' if p['exact'] else ' (NOT EXACT)'} | "
                   f"{p['cores']:,} | {p['rtt_ms']:g} ms | {p['efficiency']:.2f}{rng} | {p['runs']} |")
    for (profile, rtt, tag), rs in lines.items():
        for r in rs:
            out.append(f"| model, {profile} x {r.get('scale', 1)}{', ' + tag if tag else ''} | "
                       f"{r['cores']:,} | {rtt:g} ms | "
                       f"{r['efficiency']:.2f} | {r.get('seeds', 1)} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False,
                                 prog="python -m stealsearch.benchmarks.plot_scale_out",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--measured", nargs="*", default=[], metavar="LOG",
                    help="emulate_cluster logs (their --json lines)")
    ap.add_argument("--model", nargs="*", default=[], metavar="JSONL",
                    help="simulate_cluster run --json files")
    ap.add_argument("--out", required=True, help="the figure (PNG)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        points = measured_points(args.measured)
        lines = model_lines(args.model)
    except InputError as exc:
        print(f"plot_scale_out: {exc}", file=sys.stderr)
        return 2
    if not points and not lines:
        print("plot_scale_out: nothing to draw (no emulate_cluster run, no model line)",
              file=sys.stderr)
        return 2
    plot(points, lines, args.out, args.title)
    print(markdown(points, lines), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
