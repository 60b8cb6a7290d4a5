"""Live progress on stderr for long searches (nodes, nodes/s, incumbent, bound, steals).

A thin wrapper over tqdm so both backends report the same way; it is throttled to a
few refreshes per second and never runs per node.
"""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, enabled: bool, desc: str = "search"):
        self.enabled = enabled
        self._bar = None
        self._last = 0.0
        if enabled:
            from tqdm import tqdm
            self._bar = tqdm(total=None, unit="node", unit_scale=True, desc=desc,
                             file=sys.stderr, mininterval=0.5, leave=False,
                             dynamic_ncols=True)
        self._shown = 0

    def update(self, nodes: int, **postfix) -> None:
        if self._bar is None:
            return
        now = time.monotonic()
        if now - self._last < 0.5:
            return
        self._last = now
        self._bar.update(max(0, nodes - self._shown))
        self._shown = nodes
        if postfix:
            self._bar.set_postfix({k: v for k, v in postfix.items() if v is not None},
                                  refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
