"""One result object for every backend and problem.

``SearchResult`` prints itself as a table (``str(result)``) and serialises to JSON
(``result.to_json()`` / ``result.as_dict()``).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

#: Status values.
OPTIMAL = "optimal"          # optimise mode, whole tree searched
FOUND = "found"              # decide mode, a solution exists
NONE = "none"                # decide mode: no solution; optimise mode: no feasible node
EXHAUSTED = "exhausted"      # enumerate mode, whole tree counted
INTERRUPTED = "interrupted"  # a time or node limit, or a signal, stopped the search


@dataclass
class WorkerStats:
    """What one worker (or the sequential loop) did."""

    worker: str
    nodes: int = 0
    chunks: int = 0
    steals_tried: int = 0
    steals_succeeded: int = 0
    rows_stolen: int = 0          # rows this worker took from others
    rows_given: int = 0           # rows others took from this worker
    releases: int = 0
    rows_released: int = 0
    acquires: int = 0
    rows_acquired: int = 0
    rows_dealt: int = 0           # rows of the initial frontier dealt to this worker
    rows_left: int = 0            # rows still on its stack when the search stopped
    idle_seconds: float = 0.0
    busy_seconds: float = 0.0


@dataclass
class SearchResult:
    problem: str
    mode: str
    status: str
    backend: str
    objective: int | None = None
    solution: Any = None
    verified: bool | None = None
    bound: int | None = None          # proven upper bound (optimise, interrupted)
    count: int | None = None          # enumerate: solutions counted
    nodes: int = 0
    wall_seconds: float = 0.0
    search_seconds: float = 0.0       # wall time of the search proper (no start-up)
    workers: list[WorkerStats] = field(default_factory=list)
    incumbent_history: list[tuple[float, int]] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)   # the problem's own counters
    policy: dict | None = None
    stop_reason: str | None = None
    info: dict = field(default_factory=dict)                  # problem description
    # resilience (stealsearch.engine.core.epochs): committed epochs, rollbacks and the nodes they discarded
    epochs: int = 0
    recoveries: int = 0
    nodes_redone: int = 0
    checkpoint: str | None = None      # directory of the last checkpoint written
    # what ran where (stealsearch.engine.transports.rampup): one dict per phase, {"phase": "sequential" or
    # "dask[N]", "nodes", "seconds", ...}; the phases' nodes add up to ``nodes`` (less
    # the nodes of a resumed checkpoint)
    phases: list[dict] = field(default_factory=list)

    # -- derived figures ------------------------------------------------------------
    @property
    def nodes_this_run(self) -> int:
        """The nodes this run expanded: ``nodes`` less those of a resumed checkpoint
        (the phases' nodes add up to it)."""
        return sum(p.get("nodes", 0) for p in self.phases) if self.phases else self.nodes

    @property
    def nodes_per_second(self) -> float:
        """This run's nodes over its search seconds (a resumed run's carried nodes were
        searched by an earlier run: counting them here overstated resume's rate)."""
        t = self.search_seconds or self.wall_seconds
        return self.nodes_this_run / t if t > 0 else 0.0

    @property
    def process_nodes_per_second(self) -> float:
        """This run's nodes over the whole run's wall seconds (imports excluded, set-up and
        cluster start included): the rate a user waiting for the result gets."""
        return self.nodes_this_run / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def node_balance_stddev(self) -> float:
        """Population std dev of per-worker node counts (seed 003, Tables 4.4-4.5)."""
        xs = [w.nodes for w in self.workers]
        if len(xs) < 2:
            return 0.0
        mean = sum(xs) / len(xs)
        return math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))

    def conservation(self) -> dict:
        """rows released = rows acquired + rows stolen + rows left in shared portions.

        Checked on every parallel run; in a sequential run every term is 0."""
        released = sum(w.rows_released for w in self.workers)
        acquired = sum(w.rows_acquired for w in self.workers)
        stolen = sum(w.rows_stolen for w in self.workers)
        given = sum(w.rows_given for w in self.workers)
        left_shared = self.info.get("rows_left_shared", 0)
        return {"released": released, "acquired": acquired, "stolen": stolen,
                "given": given, "left_in_shared": left_shared,
                "holds": released == acquired + stolen + left_shared and stolen == given}

    # -- serialisation -----------------------------------------------------------------
    def as_dict(self) -> dict:
        d = asdict(self)
        d["nodes_per_second"] = self.nodes_per_second
        d["process_nodes_per_second"] = self.process_nodes_per_second
        d["node_balance_stddev"] = self.node_balance_stddev
        d["conservation"] = self.conservation()
        d["incumbent_history"] = [list(x) for x in self.incumbent_history]
        return d

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.as_dict(), default=json_default, **kwargs)

    def __repr__(self) -> str:
        """One short line (the whole result: ``str(result)``, ``result.as_dict()``)."""
        shown = [("problem", self.problem), ("status", self.status)]
        shown += [(k, getattr(self, k)) for k in ("objective", "bound", "count")
                  if getattr(self, k) is not None]
        shown += [("nodes", self.nodes), ("backend", self.backend),
                  ("search_seconds", round(self.search_seconds, 3))]
        return "SearchResult(" + ", ".join(f"{k}={v!r}" for k, v in shown) + ")"

    def _repr_html_(self) -> str:
        """A small table for notebooks (Jupyter calls it)."""
        from html import escape

        rows = [("status", self.status + (f" ({self.stop_reason})" if self.stop_reason
                                          and self.stop_reason != self.status else ""))]
        for k in ("objective", "bound", "count"):
            if getattr(self, k) is not None:
                rows.append((k, f"{getattr(self, k):,}"))
        if self.objective is not None and self.bound is not None:
            gap = abs(self.bound - self.objective) / max(abs(self.bound), 1)
            rows.append(("gap", f"{100 * gap:.1f}%"))
        if self.verified is not None:
            rows.append(("verified", str(self.verified)))
        rows += [("nodes", f"{self.nodes:,}"), ("nodes/s", f"{self.nodes_per_second:,.0f}"),
                 ("backend", f"{self.backend}, {len(self.workers)} worker(s)"),
                 ("seconds", f"{self.search_seconds:.3f} searching, {self.wall_seconds:.3f} "
                             "in all")]
        body = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th>"
                       f"<td style='text-align:left'>{escape(v)}</td></tr>" for k, v in rows)
        return (f"<table><caption style='text-align:left'><b>{escape(self.problem)}</b> "
                f"({escape(self.mode)})</caption>{body}</table>")

    def __str__(self) -> str:
        lines = [f"{self.problem} ({self.mode}) on {self.backend}: {self.status}"
                 + (f" [{self.stop_reason}]" if self.stop_reason and self.status == INTERRUPTED
                    and self.stop_reason != self.status else "")]
        if self.objective is not None:
            lines.append(f"  objective      {self.objective}"
                         + ("   (verified)" if self.verified else ""))
        if self.bound is not None:
            lines.append(f"  proven bound   {self.bound}")
        if self.count is not None:
            lines.append(f"  count          {self.count:,}")
        for k, v in self.counters.items():
            lines.append(f"  {k:<14} {v:,}")
        lines.append(f"  nodes          {self.nodes:,}")
        lines.append(f"  wall seconds   {self.wall_seconds:.3f}  (search {self.search_seconds:.3f})")
        lines.append(f"  nodes/s        {self.nodes_per_second:,.0f}  (whole run "
                     f"{self.process_nodes_per_second:,.0f})")
        if len(self.workers) > 1 or self.backend != "sequential":
            lines.append("  worker                          nodes   chunks  steals ok/tried  rows stolen"
                         "  releases  idle s")
            for w in self.workers:
                lines.append(f"  {w.worker[-28:]:<28} {w.nodes:>10,} {w.chunks:>8} "
                             f"{w.steals_succeeded:>7}/{w.steals_tried:<7} {w.rows_stolen:>11} "
                             f"{w.releases:>9} {w.idle_seconds:>7.3f}")
            lines.append(f"  node std dev   {self.node_balance_stddev:,.1f}")
        if len(self.phases) > 1:
            lines.append("  phases         " + "  ->  ".join(
                f"{p['phase']}: {p['nodes']:,} nodes in {p['seconds']:.3f} s"
                for p in self.phases))
        if self.recoveries:
            lines.append(f"  recoveries     {self.recoveries} (nodes re-done {self.nodes_redone:,})")
        if self.incumbent_history:
            hist = ", ".join(f"{v}@{t:.2f}s" for t, v in self.incumbent_history[-8:])
            lines.append(f"  incumbents     {hist}")
        return "\n".join(lines)


def json_default(obj):
    """``json.dumps(default=...)`` for numpy scalars and arrays and for sets."""
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
