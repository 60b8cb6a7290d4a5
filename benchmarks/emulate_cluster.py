"""An emulated cluster: M machines x T lanes on this machine, by time dilation.

Each machine is a network namespace running one ``dask worker`` process that searches
with T lanes (the production shape: one process per machine, lanes on its cores); the
scheduler and the client run in the root namespace, and every byte between machines
(and between a machine and the scheduler or the client) goes through the delay proxy
(:mod:`stealsearch.benchmarks.netns`, :mod:`stealsearch.benchmarks.delay_proxy`).

**Time dilation D.**  The real kernel searches the real tree (the counts are exact), and
each chunk is then stretched by a sleep (no CPU, the GIL released) to D times its CPU
time, so that a node costs D times its real cost; every period of the engine (chunk
waits, back-off, on-demand waits, progress reports, grant polls, the epoch, the peer
timeout, the client's pings and polls) is D times longer (``StealPolicy.dilation`` on the
workers, :func:`stealsearch.engine.transports.dask.timeouts.dilated` on the client), and
the proxy holds every byte so that a round trip between machines lasts D times the
real cluster's (``--rtt-ms``).  So every ratio that decides the efficiency (round trip
/ node cost, period / work) is the real cluster's, while the M x T emulated cores need
only about ``M T / D`` real ones.

**The size: real-cluster work per core W.**  A real cluster's search lasts seconds to
hours per core, so the tree is sized by the work one core of the *real* cluster does:
``--work-per-core W`` (real seconds of one core's node work, 0.25 by default), the tree
grown until ``nodes x c >= cores x W`` (c the real CPU seconds of one node, measured by
the sequential search of a small tree of the same shape).  The default trees grow so:
``T1XL`` (UTS geometric, fixed shape, b 4, T1XL's seed) by its depth (one depth more is
4 times the nodes), ``T3`` (UTS binomial, T3's q and m and seed) by the root's children,
each the root of a Galton-Watson tree of ``1 / (1 - q m)`` nodes expected, and past
``MAX_B0_ROWS`` of them by q (bigger subtrees).  ``--ideal-seconds S`` instead sizes the
tree as before: ``S x share / c`` nodes whatever the cores (the ideal parallel time S
at ``D = cores / share``), which holds the real-cluster work per core at ``S x share /
cores``: below the protocol's own periods past a few dozen cores.

**How D is chosen.**  The kernels of the emulated cores use ``M T / D`` real cores; D is
the smallest value that keeps this under ``--cpu-share`` (0.5 core by default: the
harness, the proxy and the other tenants keep the rest of a 2-core machine) and that
makes the ideal parallel time (nodes x emulated node cost / cores, i.e. the real
cluster's work per core x D) at least 20 emulated seconds (``IDEAL_FLOOR``; or
``--ideal-seconds``): ``D = max(cores / share, ideal x cores / (nodes x c))``.
``search_seconds`` are emulated seconds (the run's own); the real cluster's are D
times fewer.  ``--oracle-json FILE`` keeps the sequential search's figures (count,
nodes, c) of a tree, and of the small tree c is first measured on, in a file and reads
them back for the same tree: a series of runs sizes the same tree and pays for one
sequential search.

**What is checked.**  Every run: the count against the sequential search's (or the
optimum, for a clique), row conservation (the engine's own check); the CPU the whole
emulation used (workers, scheduler, proxy, client) against the machine's cores
(``harness_cpu_cores``, and the machine's busy share from /proc/stat, other tenants
included).  Not emulated: CPU costs per message and per chunk (the event loops, the
GIL between a worker's lanes and its loop) are real, so they shrink D times against the
dilated work: the emulation is optimistic where a real cluster spends CPU on messages.
``--fidelity`` runs the same tree at D = 1 (a real run: it needs M x T real cores, so
at most 2 here) and then at D, on the same emulated cluster, and reports both
efficiencies (``fidelity``).

**Faults.**  ``--kill M_I --fault-at F``: machine M_I's processes are SIGKILLed once the
search has done F of the expected nodes; ``--cut M_I --fault-at F --cut-for S``: its
link holds every byte for S emulated-cluster seconds (default 2 peer timeouts), then
delivers them late.

    sudo python -m stealsearch.benchmarks.emulate_cluster --machines 8 --lanes 16 --rtt-ms 0.5 --json

JSON (one object on the last line): ``count``, ``expected_count``, ``nodes``,
``machines``, ``lanes``, ``emulated_cores``, ``dilation``, ``node_seconds`` (the emulated
cost of one node, D c), ``rtt_ms_equivalent`` (the measured round trip / D),
``search_seconds`` (emulated), ``efficiency`` (expected nodes x node_seconds / (cores x
search_seconds)), ``work_per_core`` (the real cluster's work per core, expected nodes x c
/ cores; ``work_per_core_asked``: W), ``harness_cores`` (the CPU the whole emulation
used, in cores, against ``machine_cores``), ``steals_remote`` (between machines), ``steals_local`` (ACQUIREs: a
lane taking rows from its machine's shared portion), and the run's figures.  Skips
(one line, or ``{"skipped": why}``, exit 0) where namespaces cannot be built.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import statistics
import sys
import threading
import time

#: emulated seconds of the ideal parallel time (nodes x node cost / cores) at least
IDEAL_FLOOR = 20.0
#: real seconds of one core's node work on the real cluster: what sizes the tree
DEFAULT_WORK_PER_CORE = 0.25
#: real cores the emulated kernels may use
DEFAULT_CPU_SHARE = 0.5
#: the T1XL shape (UTS geometric, fixed, b0 4, seed 29 as T1L and T1XL); the depth sizes it
T1XL_SHAPE = "-t 1 -a 3 -b 4 -r 29"
#: the T3 shape (UTS binomial: q, m and the seed of T3); the root's children size it
T3_SHAPE = {"q": 0.124875, "m": 8, "r": 42}
#: sized trees grown again (each a sequential search) while they hold less than cores x W
GROW_TRIES = 3
#: steal calls timed for a round trip, at most (and at most ~2 s of them)
RTT_CALLS = 40


# -- the tree --------------------------------------------------------------------------------
def _uts(options: str, label: str | None = None):
    from stealsearch.problems.uts import UTSParams, UTSProblem

    return UTSProblem(UTSParams.parse(options), label=label)


def sized_uts(shape: str, nodes: float, at_least: bool = True):
    """A UTS tree of ``shape`` ("T1XL" or "T3") expected to hold ``nodes`` or more
    (``at_least``), or about ``nodes`` (the nearest on a log scale: the old sizing).

    T1XL: a geometric tree of fixed shape has (4^(d+1) - 1) / 3 nodes expected at depth
    d: the smallest d that holds ``nodes`` (one depth more is 4 times the nodes).  T3: a
    binomial tree whose root has b0 children, each the root of a Galton-Watson tree of
    1 / (1 - q m) nodes expected: b0 = nodes (1 - q m); past ``MAX_B0_ROWS`` children,
    b0 stays there and q grows until each subtree holds nodes / b0 expected (q m < 1:
    the tree stays finite, with certainty)."""
    from stealsearch.problems.uts.problem import MAX_B0_ROWS

    if shape == "T1XL":
        d = 1
        goal = nodes if at_least else nodes / 2
        while (4 ** (d + 1) - 1) / 3 < goal:
            d += 1
        return _uts(f"{T1XL_SHAPE} -d {d}", label=f"T1XL-shaped d={d}")
    if shape == "T3":
        q, m, r = T3_SHAPE["q"], T3_SHAPE["m"], T3_SHAPE["r"]
        b0 = max(1, math.ceil(nodes * (1 - q * m)))
        if b0 > MAX_B0_ROWS:
            b0 = MAX_B0_ROWS
            q = (1 - b0 / nodes) / m
        label = f"T3-shaped b0={b0}" + ("" if q == T3_SHAPE["q"] else f" q={q:.9g}")
        return _uts(f"-t 0 -b {b0} -q {q:.9g} -m {m} -r {r}", label=label)
    raise ValueError(f"unknown tree shape {shape!r}")


def nodes_wanted(cores: int, node_cpu: float, *, work_per_core: float | None,
                 ideal: float | None, share: float) -> float:
    """Nodes a sized tree must hold: ``cores x W / c`` (the real cluster's work per
    core W), or with ``ideal`` (the old sizing) ``ideal x share / c`` whatever the cores."""
    if ideal is not None:
        return ideal * share / node_cpu
    return cores * work_per_core / node_cpu


def parse_gnp(spec: str) -> tuple[int, float, int, str | None]:
    """``gnp:N:P:SEED[:HEURISTIC]`` as (N, P, SEED, HEURISTIC or None); a ValueError
    that names the form if it is not one."""
    from stealsearch.problems.clique.problem import HEURISTICS

    fields = spec[4:].split(":") if spec.startswith("gnp:") else []
    try:
        if len(fields) not in (3, 4):
            raise ValueError
        n, p, seed = int(fields[0]), float(fields[1]), int(fields[2])
        heuristic = fields[3] if len(fields) == 4 else None
        if n < 1 or not 0 <= p <= 1 or heuristic not in (None, *HEURISTICS):
            raise ValueError
    except ValueError:
        raise ValueError(f"--tree: gnp:N:P:SEED[:HEURISTIC] (HEURISTIC one of "
                         f"{', '.join(HEURISTICS)}), got {spec!r}") from None
    return n, p, seed, heuristic


def problem_from(spec: str, nodes_wanted: float, at_least: bool = True):
    """The problem ``--tree`` names: T1XL / T3 (sized), a UTS preset, UTS options, or
    ``gnp:N:P:SEED[:HEURISTIC]`` (maximum clique on G(N, P); HEURISTIC the first
    incumbent's, the problem's default if not given: ``none`` starts every worker from
    the empty clique, so incumbents found in the search cross machines)."""
    from stealsearch.problems.uts.problem import PRESETS

    if spec in ("T1XL", "T3"):
        return sized_uts(spec, nodes_wanted, at_least)
    if spec in PRESETS:
        from stealsearch.problems.uts import UTSProblem

        return UTSProblem.preset(spec)
    if spec.startswith("gnp:"):
        from stealsearch.problems.clique import CliqueProblem
        from stealsearch.problems.clique.generators import gnp

        n, p, seed, heuristic = parse_gnp(spec)
        return CliqueProblem(gnp(n, p, seed=seed), heuristic=heuristic)
    if spec.startswith("-"):
        return _uts(spec, label=spec)
    raise ValueError(f"--tree: T1XL, T3, a UTS preset ({', '.join(PRESETS)}), UTS options "
                     f"or gnp:N:P:SEED[:HEURISTIC], got {spec!r}")


def describe(problem) -> str:
    """A UTS tree's label, or a clique's graph."""
    label = getattr(problem, "label", None)
    if label:
        return label
    info = problem.describe() if hasattr(problem, "describe") else {}
    heuristic = info.get("initial_heuristic")
    # (the first incumbent changes the tree searched: it is part of the name)
    return f"{problem.name} {info.get('graph', info)}" + (f", heuristic {heuristic}" if heuristic else "")


def sequential_oracle(problem) -> dict:
    """The sequential search of ``problem`` in this process: what it counts, its nodes,
    its optimum, and the real CPU seconds of one node (c)."""
    from stealsearch.engine import solve

    solve(problem, backend="sequential", node_limit=1000)          # kernels loaded
    cpu0 = time.process_time()
    r = solve(problem, backend="sequential")
    cpu = time.process_time() - cpu0
    if r.status not in ("exhausted", "optimal"):      # a signal or a limit cut it short
        raise RuntimeError(f"the sequential search of {describe(problem)} ended "
                           f"{r.status!r}: no expected count")
    return {"count": r.count, "nodes": r.nodes, "objective": r.objective,
            "node_cpu_seconds": cpu / max(1, r.nodes), "cpu_seconds": cpu,
            "status": r.status}


def tree_key(problem) -> str:
    """What names a tree in an oracle file: a UTS tree's parameters, else its description."""
    params = getattr(problem, "params", None)
    if params is not None:
        from dataclasses import asdict

        return json.dumps(asdict(params), sort_keys=True)
    return describe(problem)


def cached_oracle(problem, path: str | None) -> dict:
    """:func:`sequential_oracle` of ``problem``, read from the JSON file ``path`` if it
    holds this tree's, else computed (and written there, with the others it holds)."""
    if path is None:
        return sequential_oracle(problem)
    key = tree_key(problem)

    def read() -> dict:
        if not os.path.exists(path):
            return {}
        with open(path) as f:
            return json.load(f)

    known = read()
    if key in known:
        return {**known[key], "from_file": path}
    oracle = sequential_oracle(problem)
    known = read()          # read again: another run may have added a tree meanwhile
    known[key] = {**oracle, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  "load_average": os.getloadavg()[0]}
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(known, f, indent=1)
    os.replace(tmp, path)
    return oracle


def calibrate(spec: str, cores: int, *, work_per_core: float | None = DEFAULT_WORK_PER_CORE,
              ideal: float | None = None, share: float = DEFAULT_CPU_SHARE,
              oracle_json: str | None = None) -> tuple[object, dict]:
    """The problem and its oracle; a sized tree (T1XL, T3) is sized on c measured on a
    small tree of its shape (:func:`nodes_wanted`), then measured again on itself."""
    if spec not in ("T1XL", "T3"):
        problem = problem_from(spec, 0.0)
        return problem, cached_oracle(problem, oracle_json)
    # (the probe is kept in the oracle file too: a series of runs sizes one tree)
    probe = cached_oracle(sized_uts(spec, 2e6), oracle_json)
    wanted = nodes_wanted(cores, probe["node_cpu_seconds"], work_per_core=work_per_core,
                          ideal=ideal, share=share)
    for _ in range(GROW_TRIES):
        problem = problem_from(spec, wanted, at_least=ideal is None)
        oracle = cached_oracle(problem, oracle_json)
        work = oracle["nodes"] * oracle["node_cpu_seconds"]
        if ideal is not None or work >= cores * work_per_core:
            break
        # a tree that came out smaller than its expectation (or a c larger than the
        # probe's): grown by what it missed
        wanted = max(wanted, oracle["nodes"]) * cores * work_per_core / work * 1.05
    return problem, oracle


def choose_dilation(cores: int, nodes: int, node_cpu: float, ideal: float, share: float) -> float:
    """The smallest D that keeps the kernels under ``share`` real cores and the ideal
    parallel time at ``ideal`` emulated seconds or more (see the module docstring)."""
    return max(1.0, cores / share, ideal * cores / (nodes * node_cpu))


# -- CPU figures ---------------------------------------------------------------------------------
def _proc_cpu(pid: int) -> float:
    """utime + stime of a process (all its threads), seconds; 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _machine_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


class CpuMeter:
    """The CPU the emulation's processes and the whole machine used over a block."""

    def __init__(self, pids):
        self.pids = list(pids)

    def __enter__(self):
        self.t0 = time.perf_counter()
        self.cpu0 = {p: _proc_cpu(p) for p in self.pids}
        self.jiffies0 = _machine_jiffies()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        #: CPU seconds of each process over the block
        self.by_pid = {p: max(0.0, _proc_cpu(p) - c) for p, c in self.cpu0.items()}
        self.cpu = sum(self.by_pid.values())
        busy, total = _machine_jiffies()
        self.machine_busy = (busy - self.jiffies0[0]) / max(1, total - self.jiffies0[1])

    @property
    def cores(self) -> float:
        return self.cpu / max(1e-9, self.seconds)


# -- on the workers --------------------------------------------------------------------------------
def searched(dask_worker=None) -> dict:
    """Nodes done so far by each epoch running on this worker: {"search/epoch": nodes}."""
    from stealsearch.engine.transports.dask.tables import extension_of

    ext = extension_of(dask_worker)
    if ext is None:
        return {}
    return {f"{sid}/{ep}": int(s.nodes) for (sid, ep), s in list(ext.searches.items())
            if hasattr(s, "lanes")}


# -- the emulation ---------------------------------------------------------------------------------
class Emulation:
    """A running emulated cluster of ``machines`` x ``lanes`` (a context manager): the
    testbed once, then any number of searches (:meth:`run`) at any round trip."""

    def __init__(self, machines: int, lanes: int, *, prefix: str = "ssemu"):
        from .netns import NamespaceCluster

        self.machines, self.lanes = machines, lanes
        self.bed = NamespaceCluster(machines, delay=0.0, prefix=prefix,
                                    start_timeout=max(300.0, 20.0 * machines))
        self.client = None
        self.base_rtt = None

    def __enter__(self):
        from stealsearch.engine import solve
        from stealsearch.problems.uts import UTSProblem

        self.bed.__enter__()
        try:
            self.client = self.bed.client()
            # the plugin registered and the UTS kernels loaded on every worker
            solve(UTSProblem.preset("default"), client=self.client, threads_per_worker=1)
            self.base_rtt = self.round_trip() if self.machines > 1 else 0.0
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.client is not None:
            try:
                self.client.close(timeout=10)
            except Exception:     # the scheduler may be gone already
                pass
            self.client = None
        self.bed.close()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.bed.procs] + [os.getpid()]

    def round_trip(self, seconds_budget: float = 2.0) -> float:
        """Median round trip of a steal call from machine 0 to machine 1, seconds."""
        from .bench_comm import fill_shared, time_handler, unfill_shared

        a, b = self.bed.worker_addrs[0][0], self.bed.worker_addrs[1][0]
        expect = max(self.bed.delay * 2, 1e-3)
        calls = int(max(5, min(RTT_CALLS, seconds_budget / expect)))
        self.client.run(fill_shared, workers=[b])
        try:
            ms = self.client.submit(time_handler, b, 0, calls, workers=[a], pure=False).result()
        finally:
            self.client.run(unfill_shared, workers=[b])
        return ms / 1e3

    def set_rtt(self, rtt: float) -> float:
        """Hold every byte so that a round trip lasts ``rtt`` seconds (the calls' own
        time included, measured at delay 0); returns the round trip measured now."""
        if self.machines < 2:
            return 0.0
        self.bed.set_delay(max(0.0, (rtt - self.base_rtt) / 2))
        return self.round_trip()

    def nodes_done(self) -> dict:
        out: dict[str, int] = {}
        for reply in self.client.run(searched, on_error="ignore").values():
            if isinstance(reply, dict):
                for key, n in reply.items():
                    out[key] = out.get(key, 0) + n
        return out

    def run(self, problem, oracle: dict, *, dilation: float, rtt_ms: float, policy=None,
            epoch_seconds: float | None = None, peer_timeout: float | None = None,
            fault: dict | None = None) -> dict:
        """One search of ``problem`` on the emulated cluster; its figures (a dict)."""
        from stealsearch.engine import StealPolicy, solve
        from stealsearch.engine.core.epochs import DEFAULT_CHECKPOINT_EVERY, PEER_TIMEOUT
        from stealsearch.engine.transports.dask import timeouts

        D = float(dilation)
        cores = self.machines * self.lanes
        rtt = self.set_rtt(D * rtt_ms / 1e3)
        policy = (policy or StealPolicy()).with_(dilation=D)
        every = (epoch_seconds or DEFAULT_CHECKPOINT_EVERY) * D
        pt = (peer_timeout or PEER_TIMEOUT)
        expected_nodes = oracle["nodes"]
        record: dict = {}
        done = threading.Event()
        watcher = None
        if fault:
            watcher = threading.Thread(target=self._fault, daemon=True,
                                       args=(fault, expected_nodes, D, pt, done, record))
        saved_pt = timeouts.PEER_TIMEOUT
        try:
            timeouts.PEER_TIMEOUT = pt
            with timeouts.dilated(D), CpuMeter(self.pids) as meter:
                if watcher is not None:
                    watcher.start()
                r = solve(problem, client=self.client, threads_per_worker=self.lanes,
                          policy=policy, checkpoint_every=every)
        finally:
            timeouts.PEER_TIMEOUT = saved_pt
            done.set()
            if watcher is not None:
                watcher.join(60 + (fault or {}).get("cut_for", 0) * D)
                if fault.get("kind") == "cut" and record.get("cut") and not record.get("healed"):
                    self.bed.heal(fault["machine"])
        exact = (r.count == oracle["count"]) if oracle["count"] is not None else \
            (r.objective == oracle["objective"] and r.status == "optimal" and bool(r.verified))
        node_seconds = D * oracle["node_cpu_seconds"]
        run_c = sum(meter.by_pid.get(p.pid, 0.0) for ps in self.bed.workers for p in ps) \
            / max(1, r.nodes)
        out = {
            "tree": describe(problem), "count": r.count, "expected_count": oracle["count"],
            "objective": r.objective, "expected_objective": oracle["objective"],
            "exact": exact, "status": r.status, "nodes": r.nodes, "expected_nodes": expected_nodes,
            "node_inflation": r.nodes / max(1, expected_nodes),
            "machines": self.machines, "lanes": self.lanes, "emulated_cores": cores,
            "dilation": D, "node_seconds": node_seconds,
            "real_node_seconds": oracle["node_cpu_seconds"],
            "rtt_ms": rtt_ms, "rtt_ms_emulated": rtt * 1e3,
            "rtt_ms_equivalent": rtt * 1e3 / D,
            "search_seconds": r.search_seconds, "wall_seconds": r.wall_seconds,
            "real_cluster_search_seconds": r.search_seconds / D,
            "ideal_seconds": expected_nodes * node_seconds / cores,
            # the real cluster's node work per core (what sizes the tree; real seconds)
            "work_per_core": expected_nodes * oracle["node_cpu_seconds"] / cores,
            "efficiency": expected_nodes * node_seconds / (cores * r.search_seconds),
            "steals_remote": sum(w.steals_succeeded for w in r.workers),
            "steals_tried": sum(w.steals_tried for w in r.workers),
            "steals_local": sum(w.acquires for w in r.workers),
            "rows_stolen": sum(w.rows_stolen for w in r.workers),
            "idle_share": sum(w.idle_seconds for w in r.workers) /
            max(1e-9, sum(w.idle_seconds + w.busy_seconds for w in r.workers)),
            "epochs": r.epochs, "recoveries": r.recoveries, "nodes_redone": r.nodes_redone,
            "conservation": bool(r.conservation()["holds"]),
            "epoch_seconds": every / D, "peer_timeout": pt,
            "harness_cpu_cores": meter.cores, "harness_cores": meter.cores,
            "machine_busy_share": meter.machine_busy,
            "kernel_cpu_cores": oracle["node_cpu_seconds"] * r.nodes / max(1e-9, meter.seconds),
            # the workers' CPU per node: the kernels' and the event loops', lanes'
            # polls and heartbeats (real, not dilated: what the harness itself costs)
            "worker_cpu_per_node": run_c,
            "machine_cores": os.cpu_count(), "load_average": os.getloadavg()[0],
            # the harness must leave the machine room: a saturated machine wakes the
            # stretches and the proxy late, and the emulated periods grow with it
            "harness_below_machine": meter.cores < (os.cpu_count() or 1)
            and meter.machine_busy < 0.95,
            "policy": {k: v for k, v in policy.for_workers(self.machines).as_dict().items()
                       if k != "dilation"},
        }
        if fault:
            out["fault"] = {**fault, **record}
        return out

    def _fault(self, fault, expected_nodes, D, pt, done, record):
        """Wait until the search has done ``at`` of the expected nodes, then kill or cut
        the machine (the cut healed ``cut_for`` emulated-cluster seconds later)."""
        at = fault.get("at", 0.3) * expected_nodes
        poll = max(0.05, fault.get("poll", 0.5))
        seen: dict[str, int] = {}
        while not done.is_set():
            try:
                for key, n in self.nodes_done().items():
                    seen[key] = max(seen.get(key, 0), n)
            except Exception:       # a poll that fails is tried again
                pass
            if sum(seen.values()) >= at:
                break
            done.wait(poll)
        if done.is_set():
            record["missed"] = "the search ended before the fault's moment"
            return
        record["at_nodes"] = sum(seen.values())
        record["t_fault"] = time.time()
        m = fault["machine"]
        if fault["kind"] == "kill":
            record["killed_pids"] = self.bed.kill(m)
        else:
            record["cut"] = True
            self.bed.cut(m)
            done.wait(fault.get("cut_for", 2 * pt) * D)
            self.bed.heal(m)
            record["healed"] = True
            record["cut_seconds"] = time.time() - record["t_fault"]


# -- the command -------------------------------------------------------------------------------------
def parse_policy(items) -> dict:
    """``--policy name=value`` pairs as StealPolicy keywords (typed by the field)."""
    from dataclasses import fields

    from stealsearch.engine import StealPolicy

    types = {f.name: f.type for f in fields(StealPolicy)}
    out = {}
    for item in items or ():
        name, _, value = item.partition("=")
        if name not in types or name == "dilation":
            raise SystemExit(f"emulate_cluster: --policy: unknown field {name!r}")
        kind = str(types[name])
        if "bool" in kind:
            out[name] = value.lower() in ("1", "true", "yes", "on")
        elif "int" in kind:
            out[name] = int(value)
        elif "float" in kind:
            out[name] = None if value.lower() == "none" else float(value)
        else:
            out[name] = value
    return out


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(allow_abbrev=False,
        prog="python -m stealsearch.benchmarks.emulate_cluster",
        description=__doc__.splitlines()[0])
    ap.add_argument("--machines", type=int, default=2, help="emulated machines (namespaces)")
    ap.add_argument("--lanes", type=int, default=2, help="lanes (cores) per machine")
    ap.add_argument("--rtt-ms", type=float, default=0.5,
                    help="the real cluster's round trip between machines, ms")
    ap.add_argument("--tree", default="T1XL",
                    help="T1XL or T3 (sized: see --work-per-core), a UTS preset, UTS "
                         "options ('-t 1 -a 3 -d 13 -b 4 -r 29'), or gnp:N:P:SEED[:HEURISTIC] "
                         "(max clique; HEURISTIC none: no first incumbent)")
    ap.add_argument("--dilation", type=float, default=None,
                    help="D (default: chosen, see the module docstring; 1 = a real run)")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--work-per-core", type=float, default=DEFAULT_WORK_PER_CORE,
                      metavar="W", help="real seconds of one core's node work on the real "
                      f"cluster: T1XL / T3 hold cores x W of it (default {DEFAULT_WORK_PER_CORE:g})")
    size.add_argument("--ideal-seconds", type=float, default=None, metavar="S",
                      help="the old sizing: T1XL / T3 hold S emulated seconds of ideal time "
                      "at D = cores / share, whatever the cores (and D keeps the ideal time "
                      f">= S instead of {IDEAL_FLOOR:g} s)")
    ap.add_argument("--oracle-json", metavar="FILE", default=None,
                    help="keep the sequential search's figures of each tree in FILE, and "
                         "read them back from there for the same tree")
    ap.add_argument("--cpu-share", type=float, default=DEFAULT_CPU_SHARE,
                    help="real cores the emulated kernels may use")
    ap.add_argument("--runs", type=int, default=1, help="searches on the same emulated cluster")
    ap.add_argument("--policy", action="append", metavar="FIELD=VALUE",
                    help="a StealPolicy field (repeatable)")
    ap.add_argument("--epoch-seconds", type=float, default=None,
                    help="the real cluster's seconds between cuts (default the engine's)")
    ap.add_argument("--peer-timeout", type=float, default=None,
                    help="the real cluster's peer timeout, s (default the engine's)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--kill", type=int, metavar="MACHINE", help="SIGKILL this machine mid-search")
    g.add_argument("--cut", type=int, metavar="MACHINE", help="cut this machine off mid-search")
    ap.add_argument("--fault-at", type=float, default=0.3,
                    help="the fault comes once this share of the expected nodes is done")
    ap.add_argument("--cut-for", type=float, default=None,
                    help="the real cluster's seconds the cut lasts (default 2 peer timeouts)")
    ap.add_argument("--fidelity", action="store_true",
                    help="run at D = 1 (real) first, then at D: both efficiencies")
    ap.add_argument("--json", action="store_true", help="one JSON object on the last line")
    return ap


def main(argv=None) -> int:
    from .netns import cleanup_leftovers, skip_reason

    ap = build_parser()
    args = ap.parse_args(argv)
    for name in ("machines", "lanes", "runs"):
        if getattr(args, name) < 1:
            print(f"emulate_cluster: --{name} must be >= 1", file=sys.stderr)
            return 2
    for name in ("work_per_core", "ideal_seconds", "cpu_share"):
        value = getattr(args, name)
        if value is not None and not (0 < value < math.inf):
            print(f"emulate_cluster: --{name.replace('_', '-')} must be a positive number",
                  file=sys.stderr)
            return 2
    if (args.kill is not None or args.cut is not None) and args.machines < 2:
        print("emulate_cluster: a fault needs 2 machines or more", file=sys.stderr)
        return 2
    fault_machine = args.kill if args.kill is not None else args.cut
    if fault_machine is not None and not 0 <= fault_machine < args.machines:
        print(f"emulate_cluster: no machine {fault_machine}", file=sys.stderr)
        return 2
    if args.tree.startswith("gnp:"):
        try:
            parse_gnp(args.tree)
        except ValueError as exc:
            print(f"emulate_cluster: {exc}", file=sys.stderr)
            return 2
    reason = skip_reason()
    if reason:
        print(json.dumps({"skipped": reason}) if args.json else f"emulate_cluster skipped: {reason}")
        return 0
    from stealsearch.engine import StealPolicy
    from stealsearch.engine.core.epochs import PEER_TIMEOUT

    from .common import commit, cpu_model

    cleanup_leftovers("ssemu")
    for sig in (signal.SIGTERM, signal.SIGHUP):     # a SIGTERM still removes the testbed
        signal.signal(sig, lambda *_: sys.exit(1))
    policy = StealPolicy(**parse_policy(args.policy))
    cores = args.machines * args.lanes
    W = None if args.ideal_seconds is not None else args.work_per_core
    problem, oracle = calibrate(args.tree, cores, work_per_core=W, ideal=args.ideal_seconds,
                                share=args.cpu_share, oracle_json=args.oracle_json)
    D = args.dilation or choose_dilation(cores, oracle["nodes"], oracle["node_cpu_seconds"],
                                         args.ideal_seconds or IDEAL_FLOOR, args.cpu_share)
    fault = None
    if fault_machine is not None:
        pt = args.peer_timeout or PEER_TIMEOUT
        fault = {"kind": "kill" if args.kill is not None else "cut", "machine": fault_machine,
                 "at": args.fault_at, "cut_for": args.cut_for or 2 * pt,
                 "poll": max(0.05, 0.02 * oracle["cpu_seconds"] * D / cores)}
    header = {"machine": f"{cpu_model()}, {os.cpu_count()} cores", "commit": commit(),
              "work_per_core_asked": W, "ideal_seconds_asked": args.ideal_seconds,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "command": "python -m stealsearch.benchmarks.emulate_cluster " +
              " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))}
    runs, real = [], None
    with Emulation(args.machines, args.lanes) as emu:
        if args.fidelity:
            real = emu.run(problem, oracle, dilation=1.0, rtt_ms=args.rtt_ms, policy=policy,
                           epoch_seconds=args.epoch_seconds, peer_timeout=args.peer_timeout)
            if not args.json:
                print(summary(real), flush=True)
        for i in range(args.runs):
            out = emu.run(problem, oracle, dilation=D, rtt_ms=args.rtt_ms, policy=policy,
                          epoch_seconds=args.epoch_seconds, peer_timeout=args.peer_timeout,
                          fault=fault if i == args.runs - 1 else None)
            out.update(header)
            runs.append(out)
            if not args.json:
                print(summary(out), flush=True)
    last = dict(runs[-1])
    if args.runs > 1:
        last["efficiency_runs"] = [r["efficiency"] for r in runs]
        last["efficiency_median"] = statistics.median(last["efficiency_runs"])
    if real is not None:
        last["fidelity"] = {"efficiency_real": real["efficiency"],
                            "efficiency_dilated": last["efficiency"],
                            "difference": last["efficiency"] - real["efficiency"],
                            "real_exact": real["exact"], "real_load_average": real["load_average"]}
        runs.append(real)
        if not args.json:
            print(f"fidelity: efficiency {real['efficiency']:.3f} real (D 1), "
                  f"{last['efficiency']:.3f} at D {D:g}: difference "
                  f"{last['fidelity']['difference']:+.3f}")
    if args.json:
        print(json.dumps(last, default=str))
    return 0 if all(r["exact"] and r["conservation"] for r in runs) else 1


def summary(out: dict) -> str:
    what = f"count {out['count']:,}" if out["count"] is not None else \
        f"omega {out['objective']}, {out['nodes']:,} nodes ({out['node_inflation']:.3f} x sequential)"
    return (f"{out['machines']} x {out['lanes']} = {out['emulated_cores']} cores, D {out['dilation']:g}, "
            f"rtt {out['rtt_ms_equivalent']:.3f} ms: {out['tree']}: {what} "
            f"({'exact' if out['exact'] else 'WRONG'}), search {out['search_seconds']:.2f} s "
            f"(ideal {out['ideal_seconds']:.2f} s, {out['work_per_core']:.3f} s a core on the "
            f"real cluster), efficiency {out['efficiency']:.3f}, "
            f"steals {out['steals_remote']} remote / {out['steals_local']} local, "
            f"harness {out['harness_cpu_cores']:.2f} cores, machine busy "
            f"{out['machine_busy_share']:.2f}, load {out['load_average']:.1f}"
            + (f", recoveries {out['recoveries']}" if out["recoveries"] else ""))


if __name__ == "__main__":
    sys.exit(main())
