"""The live line on stderr while a search runs.

One line, redrawn a few times per second (never per node)::

    uts on 4 workers: 1.73M nodes  412k/s  best 31  bound 34  gap 8.8%  steals 120  idle 1/4  ~35% done, ETA 00:12  00:04

The line is a :class:`tqdm.tqdm` counter of nodes: tqdm keeps the count, the elapsed
time, the smoothed node rate (its exponential moving average) and the ETA; we give it
the search's own fields.  ``update(nodes, incumbent=..., bound=..., steals=...,
idle_workers=..., workers=..., fraction_done=..., eta=...)``: a field never given (or
``None``) is not shown.  Any other keyword is shown as ``key=value`` after them.

* ``incumbent`` and ``bound`` are states, not events: once known they stay on the line
  until a new value comes (a caller that has nothing new passes ``None``), so the line
  always shows the best value found so far and the last proven bound, and their gap.
  The first bound a search reports is its open rows' at the start, known before any
  search (the root's bound); the line shows a bound once the search has moved it, or
  closed the gap: a bound that never moved says nothing the search found.
* ``fraction_done`` is an estimate (:class:`stealsearch.engine.core.estimate.ProgressEstimator`),
  hence the ``~``; it becomes tqdm's ``total`` (the nodes done over the fraction: the
  estimated size of the tree), so the ETA is tqdm's: the estimated remaining nodes over
  the smoothed node rate.  A caller's own ``eta`` seconds replace it.  Below
  ``MIN_FRACTION`` neither is shown, and no ETA until the nodes have moved for
  ``RATE_SECONDS`` on this line: an estimate of a tree a hundred times the work done so
  far, or a rate measured while a cluster's workers are still loading, gives ETAs of
  thousands of hours.
* ``nodes`` and ``elapsed`` at the start continue a search's line where another left it
  (a ramp-up's hand-over to its cluster, a resumed checkpoint): the count, the elapsed
  time and the rate go on instead of starting again from zero.
* :func:`write_above` puts a line above the live line of its stream (a cluster's
  dashboard link that arrives while the line is shown).
* ``enabled=False`` (``--quiet``, ``--json``) shows nothing.  On a stream that is not
  a terminal (a log file, a pipe) there is no live line and no carriage return: the
  same text as a plain line every ``PLAIN_INTERVAL`` seconds and the last figures on
  close.
* Log records written meanwhile through :mod:`logging` go above the line, not into it
  (:func:`tqdm.contrib.logging.logging_redirect_tqdm` while the line is shown).
* ``close()`` draws the last figures and ends the line with a newline; it is
  idempotent, runs from a ``with`` block's exit, on KeyboardInterrupt, and at exit
  if nobody called it.
"""
from __future__ import annotations

import atexit
import contextlib
import sys
import time

#: seconds between redraws
MIN_INTERVAL = 0.5
#: seconds between plain lines when the stream is not a terminal
PLAIN_INTERVAL = 30.0
#: tqdm's smoothing of the node rate (the weight of the newest interval)
SMOOTHING = 0.3
#: the estimated fraction done below which the line shows neither it nor an ETA
MIN_FRACTION = 0.01
#: seconds of moving nodes on a line before its rate makes an ETA (a few of tqdm's
#: samples at MIN_INTERVAL)
RATE_SECONDS = 2.0

_KNOWN = ("bound", "incumbent", "steals", "idle_workers", "workers", "fraction_done", "eta")
#: fields that keep their last value when a caller passes None
_STATES = ("incumbent", "bound")


def count(n) -> str:
    """1234 -> '1.23k', 1234567 -> '1.23M' (three significant figures)."""
    n = float(n)
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.3g}" if n != int(n) else str(int(n))


def clock(seconds: float) -> str:
    """Seconds as tqdm writes an interval (``00:12``, ``1:02:03``)."""
    from tqdm import tqdm

    return tqdm.format_interval(max(0, int(seconds)))


def gap(incumbent, bound) -> float | None:
    """The relative optimality gap ``|bound - incumbent| / max(|bound|, 1)``, or None."""
    if incumbent is None or bound is None:
        return None
    return abs(float(bound) - float(incumbent)) / max(abs(float(bound)), 1.0)


def percent_done(fraction: float) -> str:
    """``~42%`` while running (never ``100%``: the estimate rounds down), ``100%`` at the end."""
    fraction = min(max(float(fraction), 0.0), 1.0)
    return "100%" if fraction >= 1 else f"~{min(99, int(100 * fraction))}%"


def fields_text(fields: dict, extra: dict, root_bound=None) -> str:
    """The search's own fields as the line shows them (each after two spaces).  A bound
    equal to ``root_bound`` (the first one the search reported) is left out, with its
    gap, unless it meets the incumbent."""
    parts = []
    inc, bnd = fields.get("incumbent"), fields.get("bound")
    if bnd is not None and root_bound is not None and bnd == root_bound and gap(inc, bnd) != 0:
        bnd = None
    if inc is not None:
        parts.append(f"best {inc}")
    if bnd is not None:
        parts.append(f"bound {bnd}")
    g = gap(inc, bnd)
    if g is not None:
        parts.append(f"gap {100 * g:.1f}%")
    if fields.get("steals") is not None:
        parts.append(f"steals {count(fields['steals'])}")
    idle, workers = fields.get("idle_workers"), fields.get("workers")
    if idle is not None:
        parts.append(f"idle {idle}/{workers}" if workers is not None else f"idle {idle}")
    elif workers is not None:
        parts.append(f"workers {workers}")
    parts.extend(f"{k}={v}" for k, v in extra.items() if v is not None)
    return "".join("  " + p for p in parts)


def _braces(text: str) -> str:
    """Text put into a tqdm ``bar_format`` as it is."""
    return text.replace("{", "{{").replace("}", "}}")


class _Nowhere:
    """The stream of a counter that is not drawn (plain lines are printed by us)."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


class Progress:
    """The live line; see the module doc.

    enabled : show it at all (the caller's ``--progress``/``--quiet``/``--json``).
    desc : what runs (``"uts on 4 workers"``).
    file : the stream (default ``sys.stderr``); a live line only if ``file.isatty()``.
    mininterval : seconds between redraws (``update`` in between only records; tqdm's
        ``mininterval``, so also how often its node rate is measured).
    nodes, elapsed : where the search's line was left (a hand-over, a resumed cut): the
        count and the elapsed time go on from them, the rate counts only new nodes.
    """

    #: (when, the clock it showed) of the last line cleared for a hand-over in this
    #: process: the terminal has one live line, and the next goes on from its clock
    _handed_over: tuple[float, float] | None = None

    def __init__(self, enabled: bool, desc: str = "search", *, file=None,
                 mininterval: float = MIN_INTERVAL, nodes: int = 0, elapsed: float = 0.0):
        self.desc = desc
        self.file = sys.stderr if file is None else file
        self.mininterval = mininterval
        isatty = getattr(self.file, "isatty", None)
        self.live = bool(enabled) and bool(isatty and isatty())
        #: plain lines instead of a live one (enabled, not a terminal)
        self._plain = bool(enabled) and not self.live
        self.enabled = bool(enabled)
        self._bar = None
        self._redirect = contextlib.ExitStack()
        self._last_plain = time.monotonic()
        self._fields: dict = {}
        self._extra: dict = {}
        #: the first bound reported (the root's: see the module doc)
        self._root_bound = None
        #: when the node count first rose on this line (tqdm's clock; None: not yet)
        self._moving_since = None
        if not self.enabled:
            return
        from tqdm import tqdm

        nodes = max(0, int(nodes))
        if elapsed > 0 and Progress._handed_over is not None:
            # the line handed over to this one showed its own clock (set-up and a hold
            # included): this one goes on from whichever is later, never back
            at, shown = Progress._handed_over
            elapsed = max(float(elapsed), shown + time.monotonic() - at)
        Progress._handed_over = None
        # tqdm draws once as it is made, its clock at 00:00: a line that goes on from
        # another (a hand-over, a resume) is made silent and given the terminal once its
        # clock is set, so that its first frame shows the time it goes on from
        goes_on = self.live and elapsed > 0
        self._bar = tqdm(total=None, desc=desc, unit="", unit_scale=True,
                         smoothing=SMOOTHING, mininterval=mininterval, miniters=0,
                         file=self.file if self.live and not goes_on else _Nowhere(),
                         leave=True, dynamic_ncols=self.live, bar_format=self._format(nodes),
                         initial=nodes)
        if elapsed > 0:             # tqdm's elapsed time is now - start_t
            self._bar.start_t -= float(elapsed)
        if goes_on:
            from tqdm.utils import DisableOnWriteError

            self._bar.fp = DisableOnWriteError(self.file, tqdm_instance=self._bar)
            self._bar.sp = self._bar.status_printer(self._bar.fp)
        if self.live:
            self._redirect.enter_context(logging_redirect())
            atexit.register(self.close)
            self._bar.refresh()

    # -- the caller's side
    def update(self, nodes: int, **fields) -> None:
        """Record the latest figures; tqdm redraws if ``mininterval`` has passed."""
        bar = self._bar
        if bar is None:
            return
        for k, v in fields.items():
            if k in _STATES and v is None:
                continue
            (self._fields if k in _KNOWN else self._extra)[k] = v
        if self._root_bound is None and fields.get("bound") is not None:
            self._root_bound = fields["bound"]
        frac = self._estimate()
        nodes = int(nodes)
        if self._moving_since is None and nodes > bar.n:
            self._moving_since = bar._time()
        # the estimated size of the tree: tqdm's ETA is (total - n) / its node rate
        bar.total = nodes / min(float(frac), 1.0) if frac is not None and nodes > 0 else None
        bar.bar_format = self._format(nodes)
        if nodes < bar.n:                     # a rolled-back epoch: fewer nodes than shown
            bar.n = bar.last_print_n = nodes
        bar.update(nodes - bar.n)             # tqdm redraws when mininterval has passed
        if self._plain and time.monotonic() - self._last_plain >= PLAIN_INTERVAL:
            self._last_plain = time.monotonic()
            print(self.line(), file=self.file, flush=True)

    def _estimate(self) -> float | None:
        """The fraction done to show: None until it reaches ``MIN_FRACTION``."""
        frac = self._fields.get("fraction_done")
        if frac is None or float(frac) < MIN_FRACTION:
            return None
        return float(frac)

    def _rate_measured(self) -> bool:
        """Whether the nodes have moved long enough on this line for a rate to mean
        something."""
        return (self._bar is not None and self._moving_since is not None
                and self._bar._time() - self._moving_since >= RATE_SECONDS)

    def _format(self, nodes: int = 0) -> str:
        """tqdm's ``bar_format`` for the fields known now: tqdm fills in the count, the
        rate, the ETA and the elapsed time."""
        frac = self._estimate()
        done = ""
        if frac is not None:
            done = "  " + percent_done(frac) + " done"
            if frac < 1 and self._rate_measured():
                eta = self._fields.get("eta")
                done += ", ETA " + ("{remaining}" if eta is None else clock(eta))
        fields = fields_text(self._fields, self._extra, self._root_bound)
        return ("{desc}: " + count(nodes) + " nodes  {rate_noinv_fmt}"
                + _braces(fields) + done + "  {elapsed}")

    def write(self, text: str) -> None:
        """A line above the live line (or plainly on the stream when it is off)."""
        if self._bar is None or not self.live:
            print(text, file=self.file)
        else:
            self._bar.write(text, file=self.file)

    def line(self) -> str:
        """The text the live line shows now."""
        if self._bar is None:
            return ""
        return str(self._bar).strip()

    def close(self, keep: bool = True) -> None:
        """Draw the last figures and end the line with a newline (idempotent); with
        ``keep=False`` (a search handed over to a line that goes on from this one) clear
        it instead, so that the next line is drawn in its place."""
        bar, self._bar = self._bar, None
        if bar is None:
            return
        try:
            if self._plain:
                self._bar = bar
                print(self.line(), file=self.file, flush=True)
                self._bar = None
            elif keep:
                bar.refresh()
            else:
                bar.leave = False       # tqdm clears the line and ends without a newline
                Progress._handed_over = (time.monotonic(), bar._time() - bar.start_t)
        finally:
            try:
                bar.close()             # leave=True: the line stays, a newline follows
            finally:
                self._redirect.close()
                if self.live:
                    atexit.unregister(self.close)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


def write_above(text: str, file=None) -> None:
    """``text`` as a line of its own on ``file`` (default ``sys.stderr``), above the live
    line when one is shown there (tqdm clears it, writes, and draws it again), plainly
    otherwise."""
    from tqdm import tqdm

    stream = sys.stderr if file is None else file
    tqdm.write(text, file=stream)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        stream.flush()


def logging_redirect():
    """Log records above the line while it is shown (tqdm's own redirect)."""
    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm()
