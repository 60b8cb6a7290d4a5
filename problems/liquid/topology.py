"""Switch/node/link topologies with static routing, and the traffics they carry
(seed 000, §2 and Fig. 1, Fig. 4).

Link model (stated once, used by every topology here, and the one that reproduces
the paper's Annex figure for the Swiss-T1 with 32 nodes: 1024 transfers and a
congestion graph of 48,704 edges):

* every node has a **transmitting** and a **receiving** processor (§2);
* the transmitting processor of node ``v`` reaches its switch over the one-way link
  ``tx:v``; the switch reaches the receiving processor over the one-way link ``rx:v``;
* a cable between switches ``a`` and ``b`` is full duplex: two one-way links
  ``a>b`` and ``b>a`` (the directed model; with undirected cables the 32-node graph
  would have 72,256 edges);
* the transfer ``u → v`` is ``{tx:u} ∪ {a>b for each hop of the route} ∪ {rx:v}``;
* all-to-all includes the **self transfer** ``v → v`` = ``{tx:v, rx:v}`` (through
  the node's switch): 32 × 32 = 1024 transfers.  Without self transfers the graph has
  992 vertices and 46,720 edges, which is not the paper's figure.
* switches are full crossbars with no internal contention (§1).

The Swiss-T1 (Fig. 4): 8 crossbar switches, up to 4 nodes each, 16 cables, all links
86 MB/s, and the routing table where ✓ is a direct cable and a number is the
intermediate switch (every route has at most one intermediate switch; each listed
intermediate is cabled to both ends, which :func:`swiss_t1` checks).

Nodes are named ``<switch>.<k>`` (k = 1..nodes on that switch) and listed in
switch-major order, the order round robin uses.

>>> t1 = swiss_t1()
>>> x = t1.all_to_all([4] * 8)
>>> x.size, len(x.congestion_edges())
(1024, 48704)
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .model import LiquidInputError, Traffic

#: The routing table of Fig. 4 (row = source switch, column = destination switch).
SWISS_T1_ROUTING = (
    "x ✓ 2 ✓ 4 ✓ 8 ✓",
    "✓ x ✓ 7 ✓ 3 ✓ 5",
    "2 ✓ x ✓ 4 ✓ 8 ✓",
    "✓ 7 ✓ x ✓ 7 ✓ 3",
    "4 ✓ 4 ✓ x ✓ 6 ✓",
    "✓ 3 ✓ 7 ✓ x ✓ 1",
    "8 ✓ 8 ✓ 6 ✓ x ✓",
    "✓ 5 ✓ 3 ✓ 1 ✓ x",
)
SWISS_T1_LINK_MB_S = 86.0
SWISS_T1_NODES_PER_SWITCH = 4

_DIRECT = {"✓", "v", "V", "direct", "d", "y", "yes"}
_SELF = {"x", "X", "-", "self"}


@dataclass
class Topology:
    """Switches, nodes in front of each switch, cables, and a static route per switch pair.

    ``routes[(a, b)]`` is the list of switches from ``a`` to ``b`` (``[a]`` when a == b).
    """

    switches: list[str]
    nodes_per_switch: dict[str, int]
    cables: list[tuple[str, str]]
    routes: dict[tuple[str, str], list[str]]
    link_throughput: float = 1.0
    name: str = "topology"
    meta: dict = field(default_factory=dict)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def build(cls, switches: Sequence[Any], nodes: Any, cables: Sequence[Sequence[Any]],
              routing: Any = "shortest", *, link_throughput: float = 1.0, name: str = "topology",
              where: str = "topology") -> "Topology":
        """Validate and build a topology.

        ``nodes``: a mapping switch → count, or a list aligned with ``switches``.
        ``routing``: ``"shortest"`` (networkx shortest paths over the cables, ties broken
        by the order switches are listed), a mapping ``{src: {dst: via}}`` or a matrix
        (list of rows) in the style of Fig. 4 where an entry is ``✓``/``direct``
        (cable), ``x`` (diagonal), one intermediate switch, or a list of them.

        >>> t = Topology.build(["A", "B", "C"], [1, 1, 1], [["A", "B"], ["B", "C"]])
        >>> t.routes[("A", "C")]
        ['A', 'B', 'C']
        """
        if isinstance(switches, int):
            switches = [str(i + 1) for i in range(switches)]
        if not isinstance(switches, (list, tuple)) or not switches:
            raise LiquidInputError(f"{where}: 'switches' must be a non-empty list (or a count)")
        sw = [str(s) for s in switches]
        if len(set(sw)) != len(sw):
            dup = next(s for s in sw if sw.count(s) > 1)
            raise LiquidInputError(f"{where}: switch {dup!r} is listed twice")
        known = set(sw)
        # nodes per switch
        if isinstance(nodes, dict):
            nps = {s: 0 for s in sw}
            for k, v in nodes.items():
                if str(k) not in known:
                    raise LiquidInputError(f"{where}: nodes given for unknown switch {k!r}")
                nps[str(k)] = v
        elif isinstance(nodes, (list, tuple)):
            if len(nodes) != len(sw):
                raise LiquidInputError(f"{where}: 'nodes' lists {len(nodes)} counts for {len(sw)} switches")
            nps = dict(zip(sw, nodes))
        elif isinstance(nodes, int):
            nps = {s: nodes for s in sw}
        else:
            raise LiquidInputError(f"{where}: 'nodes' must be a mapping switch -> count, a list or a number")
        for s, v in nps.items():
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise LiquidInputError(f"{where}: switch {s!r} has {v!r} nodes (need an integer >= 0)")
        # cables
        cab: list[tuple[str, str]] = []
        seen = set()
        for i, c in enumerate(cables or []):
            if not isinstance(c, (list, tuple)) or len(c) != 2:
                raise LiquidInputError(f"{where}: cable {i} must be a pair of switches, got {c!r}")
            a, b = str(c[0]), str(c[1])
            for s in (a, b):
                if s not in known:
                    raise LiquidInputError(f"{where}: cable {i} names unknown switch {s!r}")
            if a == b:
                raise LiquidInputError(f"{where}: cable {i} connects switch {a!r} to itself")
            key = frozenset((a, b))
            if key in seen:
                raise LiquidInputError(f"{where}: cable {i} ({a}-{b}) is listed twice")
            seen.add(key)
            cab.append((a, b))
        if not (isinstance(link_throughput, (int, float)) and link_throughput > 0):
            raise LiquidInputError(f"{where}: link throughput must be a number > 0, got {link_throughput!r}")
        routes = _build_routes(sw, cab, routing, where)
        return cls(sw, nps, cab, routes, float(link_throughput), name)

    # -- derived ---------------------------------------------------------------------------
    def nodes(self, allocation: Sequence[int] | None = None) -> list[tuple[str, str]]:
        """``(node name, switch)`` in switch-major order; ``allocation`` takes the first
        ``allocation[i]`` nodes in front of switch ``i``."""
        if allocation is None:
            allocation = [self.nodes_per_switch[s] for s in self.switches]
        allocation = self.check_allocation(allocation)
        return [(f"{s}.{k + 1}", s) for s, a in zip(self.switches, allocation) for k in range(a)]

    def check_allocation(self, allocation: Sequence[int], where: str = "allocation") -> list[int]:
        if len(allocation) != len(self.switches):
            raise LiquidInputError(f"{where}: {len(allocation)} counts given for "
                                   f"{len(self.switches)} switches of {self.name}")
        out = []
        for s, a in zip(self.switches, allocation):
            try:
                a = int(a)
            except (TypeError, ValueError):
                raise LiquidInputError(f"{where}: count {a!r} for switch {s} is not an integer") from None
            if not 0 <= a <= self.nodes_per_switch[s]:
                raise LiquidInputError(f"{where}: switch {s} has {self.nodes_per_switch[s]} nodes, "
                                       f"cannot allocate {a}")
            out.append(a)
        return out

    def links(self, nodes: Sequence[tuple[str, str]] | None = None) -> list[str]:
        """Every one-way link: ``tx:v`` and ``rx:v`` per node, ``a>b`` and ``b>a`` per cable."""
        nodes = self.nodes() if nodes is None else nodes
        out = [f"tx:{v}" for v, _ in nodes] + [f"rx:{v}" for v, _ in nodes]
        for a, b in self.cables:
            out += [f"{a}>{b}", f"{b}>{a}"]
        return out

    def path_links(self, src: tuple[str, str], dst: tuple[str, str]) -> list[str]:
        """The links of the transfer from node ``src`` to node ``dst`` (see module docstring)."""
        route = self.routes[(src[1], dst[1])]
        return [f"tx:{src[0]}"] + [f"{a}>{b}" for a, b in zip(route, route[1:])] + [f"rx:{dst[0]}"]

    def traffic_from_pairs(self, nodes: Sequence[tuple[str, str]], pairs: Sequence[tuple[int, int]],
                           name: str = "traffic") -> Traffic:
        """The traffic of the transfers ``nodes[i] → nodes[j]`` for each pair ``(i, j)``."""
        link_sets, labels = [], []
        for i, j in pairs:
            link_sets.append(self.path_links(nodes[i], nodes[j]))
            labels.append((nodes[i][0], nodes[j][0]))
        x = Traffic.from_link_sets(link_sets, links=self.links(nodes), labels=labels,
                                   link_throughput=self.link_throughput, name=name)
        x.meta["nodes"] = [v for v, _ in nodes]
        x.meta["pairs"] = [list(p) for p in pairs]
        return x

    def all_to_all(self, allocation: Sequence[int] | None = None) -> Traffic:
        """All-to-all over the allocated nodes, self transfers included (§2): node i's
        transmitting processor sends one packet to every receiving processor, in
        sender-major order (transfer id = i·N + j)."""
        nodes = self.nodes(allocation)
        n = len(nodes)
        alloc = [self.nodes_per_switch[s] for s in self.switches] if allocation is None else list(allocation)
        x = self.traffic_from_pairs(nodes, [(i, j) for i in range(n) for j in range(n)],
                                    name=f"{self.name} all-to-all {' '.join(map(str, alloc))}")
        x.meta["allocation"] = [int(a) for a in alloc]
        x.meta["all_to_all"] = True
        return x

    def from_matrix(self, matrix: Sequence[Sequence[int]], nodes: Sequence[tuple[str, str]] | None = None,
                    where: str = "matrix") -> Traffic:
        """The traffic of a 0/1 traffic matrix over ``nodes`` (default every node):
        entry ``[i][j] = 1`` is the transfer i → j.  A sender sends to a receiver at most
        once (§3), so entries other than 0 and 1 are errors."""
        nodes = self.nodes() if nodes is None else nodes
        n = len(nodes)
        if len(matrix) != n:
            raise LiquidInputError(f"{where}: {len(matrix)} rows for {n} nodes")
        pairs = []
        for i, row in enumerate(matrix):
            if len(row) != n:
                raise LiquidInputError(f"{where}: row {i + 1} has {len(row)} entries, expected {n}")
            for j, v in enumerate(row):
                if v not in (0, 1) or isinstance(v, bool):
                    raise LiquidInputError(f"{where}: row {i + 1}, column {j + 1}: entry {v!r} "
                                           "is not 0 or 1 (a sender sends to a receiver at most once)")
                if v == 1:
                    pairs.append((i, j))
        x = self.traffic_from_pairs(nodes, pairs, name=f"{self.name} matrix")
        x.meta["matrix_nodes"] = n
        return x


def _build_routes(sw: list[str], cables: list[tuple[str, str]], routing: Any, where: str):
    cabled = {frozenset(c) for c in cables}
    routes: dict[tuple[str, str], list[str]] = {(s, s): [s] for s in sw}
    if routing is None or routing == "shortest":
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(sw)
        # insertion order fixes the BFS order, so ties break the same way every run
        g.add_edges_from(sorted(cables, key=lambda c: (sw.index(c[0]), sw.index(c[1]))))
        for a in sw:
            paths = nx.single_source_shortest_path(g, a)
            for b in sw:
                if a == b:
                    continue
                if b not in paths:
                    raise LiquidInputError(f"{where}: no path from switch {a} to switch {b} over the cables")
                routes[(a, b)] = list(paths[b])
        return routes
    if isinstance(routing, str):
        raise LiquidInputError(f"{where}: routing must be 'shortest', a table or a matrix, got {routing!r}")
    # a matrix in the style of Fig. 4, or a nested mapping
    if isinstance(routing, (list, tuple)):
        if len(routing) != len(sw):
            raise LiquidInputError(f"{where}: routing matrix has {len(routing)} rows for {len(sw)} switches")
        table = {}
        for i, row in enumerate(routing):
            if isinstance(row, str):
                row = row.split()
            if len(row) != len(sw):
                raise LiquidInputError(f"{where}: routing matrix row {i + 1} has {len(row)} entries, "
                                       f"expected {len(sw)}")
            table[sw[i]] = {sw[j]: row[j] for j in range(len(sw))}
    elif isinstance(routing, dict):
        table = {str(k): v for k, v in routing.items()}
        for k, v in table.items():
            if k not in sw:
                raise LiquidInputError(f"{where}: routing table names unknown switch {k!r}")
            if not isinstance(v, dict):
                raise LiquidInputError(f"{where}: routing table row {k!r} must map destinations to routes")
    else:
        raise LiquidInputError(f"{where}: routing must be 'shortest', a table or a matrix")
    for a in sw:
        row = {str(k): v for k, v in (table.get(a) or {}).items()}
        for k in row:
            if k not in sw:
                raise LiquidInputError(f"{where}: routing entry {a}->{k} names unknown switch {k!r}")
        for b in sw:
            if a == b:
                continue
            if b not in row:
                raise LiquidInputError(f"{where}: routing table has no route from switch {a} to switch {b}")
            via = row[b]
            if via is None or (isinstance(via, str) and via.strip() in _DIRECT) or via is True:
                hops: list[str] = []
            elif isinstance(via, (list, tuple)):
                hops = [str(h) for h in via]
            elif isinstance(via, str) and via.strip() in _SELF:
                raise LiquidInputError(f"{where}: routing entry {a}->{b} is {via!r} but {a} != {b}")
            else:
                hops = [str(via)]
            for h in hops:
                if h not in sw:
                    raise LiquidInputError(f"{where}: route {a}->{b} passes unknown switch {h!r}")
            path = [a] + hops + [b]
            if len(set(path)) != len(path):
                raise LiquidInputError(f"{where}: route {a}->{b} visits a switch twice: {path}")
            for u, v in zip(path, path[1:]):
                if frozenset((u, v)) not in cabled:
                    raise LiquidInputError(f"{where}: route {a}->{b} via {hops} does not connect: "
                                           f"no cable between {u} and {v}")
            routes[(a, b)] = path
    return routes


def swiss_t1() -> Topology:
    """The Swiss-T1 cluster of Fig. 4: 8 crossbar switches (named 1..8), 4 nodes each,
    86 MB/s links, its static routing table (the cables are the ✓ entries)."""
    rows = [r.split() for r in SWISS_T1_ROUTING]
    sw = [str(i + 1) for i in range(8)]
    cables = sorted({tuple(sorted((sw[i], sw[j]))) for i in range(8) for j in range(8) if rows[i][j] == "✓"})
    # the table must be symmetric in its cables
    for i in range(8):
        for j in range(8):
            if (rows[i][j] == "✓") != (rows[j][i] == "✓"):
                raise AssertionError("Swiss-T1 table: asymmetric cable")  # pragma: no cover
    t = Topology.build(sw, SWISS_T1_NODES_PER_SWITCH, [list(c) for c in cables], rows,
                       link_throughput=SWISS_T1_LINK_MB_S, name="swiss-t1", where="swiss-t1")
    return t


def fig1_traffic(link_throughput: float = 100.0) -> Traffic:
    """The traffic of Fig. 1: 5 transmitters T1..T5 each sending to R1..R5 over links
    l1..l12.  T_i uses l_i, R_j uses l_{5+j}; T4, T5 → R1..R3 cross l11; T1..T3 → R4, R5
    cross l12.  Transfer id = 5·(i-1) + (j-1), the order of the figure.  The paper's
    example throughput assumes 100 MB/s links.

    >>> x = fig1_traffic()
    >>> x.size, x.duration(), x.bottlenecks()
    (25, 6, ['l11', 'l12'])
    """
    link_sets, labels = [], []
    for i in range(1, 6):
        for j in range(1, 6):
            ls = [f"l{i}"]
            if i <= 3 and j >= 4:
                ls.append("l12")
            if i >= 4 and j <= 3:
                ls.append("l11")
            ls.append(f"l{5 + j}")
            link_sets.append(ls)
            labels.append((f"T{i}", f"R{j}"))
    x = Traffic.from_link_sets(link_sets, links=[f"l{k}" for k in range(1, 13)], labels=labels,
                               link_throughput=link_throughput, name="fig1")
    x.meta["nodes"] = [str(i) for i in range(1, 6)]
    x.meta["pairs"] = [[i, j] for i in range(5) for j in range(5)]
    x.meta["all_to_all"] = True
    return x


def no_team_traffic() -> Traffic:
    """Three transfers {a,b}, {b,c}, {a,c}: Λ = 2, every pair congests, so no team and no
    liquid schedule; the optimal schedule has 3 steps."""
    return Traffic.from_link_sets([["a", "b"], ["b", "c"], ["a", "c"]], name="no-team")


# -- files ------------------------------------------------------------------------------------
def load_mapping(path: str | Path) -> dict:
    """Read a JSON or YAML file into a mapping (one-line errors with the line number)."""
    from stealsearch.engine.core.inputs import load_yaml, read_input_text

    p = Path(path)
    text = read_input_text(p, LiquidInputError)
    name = p.name[:-3] if p.name.lower().endswith(".gz") else p.name
    if Path(name).suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LiquidInputError(f"{path}: line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})") from None
        except RecursionError:
            raise LiquidInputError(f"{path}: JSON nested too deeply") from None
    else:
        import yaml

        try:
            # aliases and nesting bounded ("billion laughs"): one LiquidInputError
            data = load_yaml(text, path, LiquidInputError)
        except LiquidInputError:
            raise
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            loc = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            problem = getattr(exc, "problem", None) or exc.__class__.__name__
            raise LiquidInputError(f"{path}: {loc}invalid YAML ({problem})") from None
        except (RecursionError, ValueError, OverflowError) as exc:
            raise LiquidInputError(f"{path}: invalid YAML ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise LiquidInputError(f"{path}: expected a mapping at the top level")
    return data


def topology_from_mapping(data: dict, where: str = "topology") -> Topology:
    for key in ("switches", "cables"):
        if key not in data:
            raise LiquidInputError(f"{where}: missing key {key!r}")
    return Topology.build(data["switches"], data.get("nodes", data.get("nodes_per_switch", 1)),
                          data["cables"], data.get("routing", "shortest"),
                          link_throughput=data.get("link_throughput", 1.0),
                          name=str(data.get("name", "topology")), where=where)


def load_topology(spec: Any, where: str = "topology") -> Topology:
    """A topology from a name (``swiss-t1``), a file path or an inline mapping."""
    if isinstance(spec, dict):
        return topology_from_mapping(spec, where)
    if isinstance(spec, str) and spec.lower() in ("swiss-t1", "t1", "swiss_t1"):
        return swiss_t1()
    if isinstance(spec, (str, Path)):
        return topology_from_mapping(load_mapping(spec), str(spec))
    raise LiquidInputError(f"{where}: topology must be 'swiss-t1', a file name or a mapping")


def load_traffic(path: str | Path) -> Traffic:
    """Read a traffic file (JSON or YAML), one of three forms:

    * explicit: ``transfers: [[l1, l6], ...]`` (items may be ``{links, source, destination}``),
      optional ``links`` (declared links), ``link_throughput``;
    * all-to-all: ``topology: swiss-t1 | FILE | {...}`` and ``allocation: [..]``;
    * matrix: ``topology: ...`` and ``matrix: [[0, 1], [1, 0]]`` over the topology's nodes
      (or over the first ``allocation`` nodes when both are given).
    """
    where = str(path)
    data = load_mapping(path)
    return traffic_from_mapping(data, where, base=Path(path).parent)


def traffic_from_mapping(data: dict, where: str = "traffic", base: Path | None = None) -> Traffic:
    if "transfers" in data:
        items = data["transfers"]
        if not isinstance(items, list):
            raise LiquidInputError(f"{where}: 'transfers' must be a list")
        link_sets, labels = [], []
        for i, it in enumerate(items):
            if isinstance(it, dict):
                if "links" not in it:
                    raise LiquidInputError(f"{where}: transfer {i} has no 'links'")
                link_sets.append(it["links"] if isinstance(it["links"], list) else it["links"])
                src, dst = it.get("source"), it.get("destination")
                labels.append((str(src), str(dst)) if src is not None and dst is not None else None)
            elif isinstance(it, list):
                link_sets.append(it)
                labels.append(None)
            else:
                raise LiquidInputError(f"{where}: transfer {i} must be a list of links, got {it!r}")
        if "links" in data and not isinstance(data["links"], list):
            raise LiquidInputError(f"{where}: 'links' must be a list of link names")
        x = Traffic.from_link_sets(link_sets, links=data.get("links"), labels=labels,
                                   link_throughput=data.get("link_throughput", 1.0),
                                   name=str(data.get("name", Path(where).stem)), where=where)
        if all(l is not None for l in labels) and labels:
            _label_pairs(x)
        return x
    if "topology" not in data:
        raise LiquidInputError(f"{where}: expected 'transfers', or 'topology' with 'allocation' or 'matrix'")
    spec = data["topology"]
    if isinstance(spec, str) and base is not None and not spec.lower() in ("swiss-t1", "t1", "swiss_t1"):
        cand = base / spec
        spec = str(cand) if cand.exists() else spec
    topo = load_topology(spec, where)
    alloc = data.get("allocation")
    if alloc is not None and not isinstance(alloc, list):
        raise LiquidInputError(f"{where}: 'allocation' must be a list of node counts per switch")
    if "matrix" in data:
        nodes = topo.nodes(topo.check_allocation(alloc, where) if alloc is not None else None)
        return topo.from_matrix(data["matrix"], nodes, where)
    if alloc is None:
        raise LiquidInputError(f"{where}: a topology traffic needs 'allocation' or 'matrix'")
    return topo.all_to_all(topo.check_allocation(alloc, where))


def _label_pairs(x: Traffic) -> None:
    """Give a labelled explicit traffic the sender/receiver indices round robin uses."""
    senders, receivers = [], []
    for t in x.transfers:
        if t.source not in senders:
            senders.append(t.source)
        if t.destination not in receivers:
            receivers.append(t.destination)
    x.meta["pairs"] = [[senders.index(t.source), receivers.index(t.destination)] for t in x.transfers]
    x.meta["senders"] = senders
    x.meta["receivers"] = receivers
