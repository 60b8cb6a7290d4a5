"""The live line on stderr while a search runs.

One line, redrawn a few times per second (never per node)::

    uts on 4 workers: 1.73M nodes  412k/s  best 31  bound 34  gap 8.8%  steals 120  idle 1/4  ~35% done, ETA 0:12  0:04

It shows what the caller knows: ``update(nodes, bound=..., incumbent=..., steals=...,
idle_workers=..., workers=..., fraction_done=..., eta=...)``; a field left out (or
``None``) is not shown.  Any other keyword is shown as ``key=value`` after them.

``fraction_done`` is an estimate (:class:`stealsearch.engine.estimate.ProgressEstimator`), hence the
``~``; the ETA is the estimated remaining nodes, ``nodes (1 - f) / f``, over the recent
node rate (the smoothed rate the line shows), unless the caller gives ``eta`` seconds.

* ``enabled=False`` (``--quiet``, ``--json``) shows nothing.  On a stream that is not
  a terminal (a log file, a pipe) there is no live line and no carriage return: a
  plain line every ``PLAIN_INTERVAL`` seconds and the last figures on close.
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

_KNOWN = ("bound", "incumbent", "steals", "idle_workers", "workers", "fraction_done", "eta")


def _count(n) -> str:
    """1234 -> '1.23k', 1234567 -> '1.23M' (three significant figures)."""
    n = float(n)
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.3g}" if n != int(n) else str(int(n))


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def gap(incumbent, bound) -> float | None:
    """The relative optimality gap ``|bound - incumbent| / max(|bound|, 1)``, or None."""
    if incumbent is None or bound is None:
        return None
    return abs(float(bound) - float(incumbent)) / max(abs(float(bound)), 1.0)


def format_line(desc: str, nodes: int, rate: float | None, elapsed: float,
                fields: dict, extra: dict) -> str:
    """The text of the live line (no terminal control characters)."""
    parts = [f"{desc}: {_count(nodes)} nodes"]
    if rate is not None:
        parts.append(f"{_count(rate)}/s")
    inc, bnd = fields.get("incumbent"), fields.get("bound")
    if inc is not None:
        parts.append(f"best {inc}")
    if bnd is not None:
        parts.append(f"bound {bnd}")
    g = gap(inc, bnd)
    if g is not None:
        parts.append(f"gap {100 * g:.1f}%")
    if fields.get("steals") is not None:
        parts.append(f"steals {_count(fields['steals'])}")
    idle, workers = fields.get("idle_workers"), fields.get("workers")
    if idle is not None:
        parts.append(f"idle {idle}/{workers}" if workers is not None else f"idle {idle}")
    elif workers is not None:
        parts.append(f"workers {workers}")
    frac = fields.get("fraction_done")
    if frac is not None:
        frac = min(max(float(frac), 0.0), 1.0)
        eta = fields.get("eta")
        if eta is None and 0 < frac < 1:
            if rate:
                eta = nodes * (1 - frac) / frac / rate
            elif elapsed > 0:
                eta = elapsed * (1 - frac) / frac
        if frac >= 1:
            parts.append("100% done")
        else:
            # never "100%" while it runs: the estimate rounds down
            pct = min(99, int(100 * frac))
            parts.append(f"~{pct}% done" + ("" if eta is None else f", ETA {_clock(eta)}"))
    parts.extend(f"{k}={v}" for k, v in extra.items() if v is not None)
    parts.append(_clock(elapsed))
    return "  ".join(parts)


class Progress:
    """The live line; see the module doc.

    enabled : show it at all (the caller's ``--progress``/``--quiet``/``--json``).
    desc : what runs (``"uts on 4 workers"``).
    file : the stream (default ``sys.stderr``); a live line only if ``file.isatty()``.
    mininterval : seconds between redraws (``update`` in between only records).
    """

    def __init__(self, enabled: bool, desc: str = "search", *, file=None,
                 mininterval: float = MIN_INTERVAL):
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
        self._t0 = time.monotonic()
        self._last_draw = self._t0 if self._plain else float("-inf")
        self._nodes = 0
        self._fields: dict = {}
        self._extra: dict = {}
        self._rate: float | None = None
        self._rate_mark = (self._t0, 0)
        if self.live:
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            self._bar = tqdm(total=None, file=self.file, bar_format="{desc}", leave=True,
                             dynamic_ncols=True, mininterval=0, miniters=0)
            self._redirect.enter_context(logging_redirect_tqdm())
            atexit.register(self.close)
            self._draw()

    # -- the caller's side
    def update(self, nodes: int, **fields) -> None:
        """Record the latest figures; redraw if ``mininterval`` has passed."""
        if self._bar is None and not self._plain:
            return
        now = time.monotonic()
        nodes = int(nodes)
        t_mark, n_mark = self._rate_mark
        if now - t_mark >= min(self.mininterval, 0.25) and nodes >= n_mark:
            inst = (nodes - n_mark) / (now - t_mark)
            # exponential smoothing, as tqdm does (0.3 of the newest interval)
            self._rate = inst if self._rate is None else 0.3 * inst + 0.7 * self._rate
            self._rate_mark = (now, nodes)
        self._nodes = nodes
        for k, v in fields.items():
            (self._fields if k in _KNOWN else self._extra)[k] = v
        if self._plain:
            if now - self._last_draw >= PLAIN_INTERVAL:
                self._last_draw = now
                print(self.line(), file=self.file, flush=True)
        elif now - self._last_draw >= self.mininterval:
            self._draw(now)

    def write(self, text: str) -> None:
        """A line above the live line (or plainly on the stream when it is off)."""
        if self._bar is None:
            print(text, file=self.file)
        else:
            self._bar.write(text, file=self.file)

    def line(self) -> str:
        """The text the live line shows now."""
        return format_line(self.desc, self._nodes, self._rate, time.monotonic() - self._t0,
                           self._fields, self._extra)

    def _draw(self, now: float | None = None) -> None:
        self._last_draw = time.monotonic() if now is None else now
        self._bar.set_description_str(self.line(), refresh=True)

    def close(self) -> None:
        """Draw the last figures and end the line with a newline (idempotent)."""
        if self._plain:
            self._plain = False
            print(self.line(), file=self.file, flush=True)
            return
        bar, self._bar = self._bar, None
        if bar is None:
            return
        try:
            self._bar = bar
            self._draw()
        finally:
            self._bar = None
            try:
                bar.close()             # leave=True: the line stays, a newline follows
            finally:
                self._redirect.close()
                atexit.unregister(self.close)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False
