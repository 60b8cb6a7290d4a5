"""What a test needs to happen, made to happen wherever the search runs (importable by
spawned Dask workers through tests/engine/conftest.py's PYTHONPATH).

Worker processes share nothing with the test but files, so every event here is a file:

* :class:`Gate`: a file the test creates; until then every hooked search holds (its
  chunks expand nothing), so the search is certainly still running when the test acts
  (a kill, a SIGSTOP, a retire), however fast the machine;
* :class:`Hooked`: a raw-tier problem's kernel with a hook around each chunk, in every
  process but the test's own (where the client expands the first cut): it waits for a
  gate, kills its own process once it has expanded ``kill_after`` nodes (at most
  ``kills`` processes ever, chosen among ``victims``), or marks a file once a process
  that is not one of ``known`` expands a node.  The kernel itself is the problem's: the
  counts, the optimum and the solution are the real ones;
* :class:`HeldLoad`: a UTS tree whose unpickling (a worker's load) waits for a gate,
  except in one process;
* :class:`NodeEpochs`: any transport whose epochs also end after a number of nodes, as
  consistent cuts (a node limit of the epoch), so a test gets several epochs at node
  counts, not at moments.

``ENDLESS``: UTS options of a tree no machine searches in a test (about 4^20 = 10^12
nodes): a search of it ends by a limit, a stop or a signal, never by itself.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import signal
import threading
import time
import uuid

from stealsearch.engine.core.problem import BUDGET, NODES
from stealsearch.problems.clique import CliqueProblem
from stealsearch.problems.uts import UTSParams, UTSProblem

#: a tree that is searched, never finished, in a test (fixed geometric, depth 20)
ENDLESS = "-t 1 -a 3 -d 20 -b 4 -r 29"
#: seconds a gate or a held load waits at most (then the hold ends: nothing hangs)
HOLD_LIMIT = 120.0
#: seconds between two looks at a closed gate
GATE_POLL = 0.002


class Gate:
    """A file in ``folder`` that opens the gate once it exists.  A gate a failing test
    never opened opens by itself ``HOLD_LIMIT`` seconds after it was made: the test then
    fails on what did not happen, it does not hang."""

    def __init__(self, folder):
        self.path = os.path.join(str(folder), f"gate-{uuid.uuid4().hex[:8]}")
        self.made = time.time()

    def open(self) -> None:
        with open(self.path, "w"):
            pass

    def is_open(self) -> bool:
        return os.path.exists(self.path) or time.time() > self.made + HOLD_LIMIT

    def wait(self) -> None:
        while not self.is_open():
            time.sleep(GATE_POLL)


def _claim(folder: str, name: str, slots: int) -> bool:
    """Take one of ``slots`` once-only slots named ``name`` in ``folder`` (atomic across
    processes: O_EXCL)."""
    for i in range(slots):
        try:
            os.close(os.open(os.path.join(folder, f"{name}-{i}"), os.O_CREAT | os.O_EXCL))
            return True
        except FileExistsError:
            continue
    return False


#: nodes each hooked problem (by its token) expanded in this process
_nodes_here: dict = {}
#: set while a hooked problem asks its own class for its kernel data
_plain = threading.local()


def _hooked_chunk(inner, problem, stack, top, budget, mode, incumbent, counters, solution,
                  *data):
    if problem.gate is not None and not problem.gate.is_open():
        time.sleep(GATE_POLL)           # hold: expand nothing, the lane asks again
        return top, BUDGET, 0
    before = int(counters[NODES])
    out = inner(stack, top, budget, mode, incumbent, counters, solution, *data)
    done = _nodes_here.get(problem.token, 0) + int(counters[NODES]) - before
    _nodes_here[problem.token] = done
    pid = os.getpid()
    if problem.mark is not None and done and pid not in problem.known \
            and not os.path.exists(problem.mark):
        with open(problem.mark, "w"):
            pass
    if problem.kill_after is not None and done >= problem.kill_after \
            and (problem.victims is None or pid in problem.victims) \
            and _claim(problem.folder, "kill", problem.kills):
        os.kill(pid, signal.SIGKILL)    # dies inside its epoch, holding rows
    return out


class Hooked:
    """Mixin for a raw-tier problem (first in the bases): its kernel with the hook of
    the module docstring.  ``folder``: where the hook's files go (a test's tmp_path)."""

    def hook(self, folder, *, gate: Gate | None = None, kill_after: int | None = None,
             kills: int = 1, victims=None, mark: str | None = None, known=()):
        self.folder, self.gate, self.kill_after, self.kills = str(folder), gate, kill_after, kills
        self.victims = None if victims is None else set(victims)
        self.mark, self.known = mark, set(known)
        self.token = uuid.uuid4().hex
        self.test_pid = os.getpid()
        return self

    @property
    def kernel(self):
        inner = super().kernel
        if os.getpid() == self.test_pid or getattr(_plain, "on", False):
            return inner
        return functools.partial(_hooked_chunk, inner, self)

    def kernel_data(self):
        # a problem may choose its data by which kernel it has (clique's bounds)
        _plain.on = True
        try:
            return super().kernel_data()
        finally:
            _plain.on = False

    def killed(self) -> int:
        """How many processes the hook has killed so far."""
        return sum(os.path.exists(os.path.join(self.folder, f"kill-{i}"))
                   for i in range(self.kills))


class HookedUTS(Hooked, UTSProblem):
    pass


class HookedClique(Hooked, CliqueProblem):
    pass


def hooked_uts(options: str, folder, **hook) -> HookedUTS:
    return HookedUTS(UTSParams.parse(options)).hook(folder, **hook)


class HeldLoad(UTSProblem):
    """A UTS tree whose unpickling waits until ``gate`` opens, in every process but
    ``fast_pid`` (None: in every process but the test's)."""

    def __init__(self, params, gate: Gate, fast_pid: int | None = None):
        super().__init__(params)
        self.gate, self.fast_pid, self.test_pid = gate, fast_pid, os.getpid()

    def __setstate__(self, state):
        if os.getpid() not in (state["fast_pid"], state["test_pid"]):
            state["gate"].wait()
        self.__dict__.update(state)


class NodeEpochs:
    """``transport``, whose epochs also end after ``nodes`` nodes: each epoch runs with
    that node limit (the node limit's own machinery, exact: grants never pass it), and
    its stop at it is taken as a cut, not as the end of the search.  Everything else is
    the transport's."""

    def __init__(self, transport, nodes: int):
        self.inner, self.nodes = transport, int(nodes)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def run_epoch(self, loop, spec, cut):
        own = spec.node_limit is None or self.nodes < spec.node_limit
        if own:
            spec = dataclasses.replace(spec, node_limit=self.nodes)
        run = self.inner.run_epoch(loop, spec, cut)
        if own:
            for o in run.outcomes:
                if o.stop_reason == "node_limit":
                    o.stop_reason = "cut"
                if o.coordinator and o.coordinator.get("stop_reason") == "node_limit":
                    o.coordinator["stop_reason"] = "cut"
        return run


def stop_in_first_epoch(client, pid: int, gate: Gate,
                        stopped: threading.Event | None = None) -> threading.Thread:
    """A thread, started, that SIGSTOPs ``pid`` once ``client``'s cluster runs a search's
    epoch tasks, then opens ``gate``: a search held by the gate has expanded nothing yet,
    so the stop falls inside its first epoch.  The gate opens whatever happens (a search
    that never started is then not held); ``stopped`` is set once the signal is sent."""
    def freeze():
        try:
            deadline = time.monotonic() + HOLD_LIMIT / 2
            while time.monotonic() < deadline:
                busy = client.processing()
                if any(str(k).startswith("stealsearch-") and "warm" not in str(k)
                       for v in busy.values() for k in v):
                    break
                time.sleep(0.01)
            os.kill(pid, signal.SIGSTOP)
            if stopped is not None:
                stopped.set()
        finally:
            gate.open()

    thread = threading.Thread(target=freeze, daemon=True)
    thread.start()
    return thread
