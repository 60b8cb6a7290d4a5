"""The formal model of a collective data exchange (seed 000, Gabrielyan & Hersch, §3).

Definitions, as in §3 of the paper:

* a **link** is a one-way communication channel (a name; here any string);
* a **transfer** is the *set* of links of the path from one sending processor to one
  receiving processor;
* a **traffic** X is a set of transfers;  two transfers **congest** if they share a link;
  a sub-traffic is **simultaneous** if no two of its transfers congest;
* the **load** of a link in X is the number of transfers of X using it; the most loaded
  links are the **bottlenecks**; the **duration** Λ(X) is the bottleneck load; the
  **size** #(X) is the number of transfers; the **liquid throughput** is
  #(X)/Λ(X) × (single link throughput);
* a **team** of X is a simultaneous sub-traffic using every bottleneck of X; a team is
  **full** if every other transfer of X congests with one of its transfers (§3.2);
* a **schedule** is a partition of X into simultaneous steps; it is **liquid** if its
  length equals Λ(X) (equivalently: every step is a team of X).

Choices where the paper is silent:

* A traffic is a *set*, so two transfers with the same links are an input error when the
  input lists them as distinct transfers (explicit link-set lists).  A transfer may carry
  a ``source``/``destination`` label (used by round robin and for display).
* An empty transfer (no links) is an input error: it would congest with nothing and
  take no time, which the model of §3 does not cover.
* The empty traffic has Λ = 0, the empty schedule, and no liquid throughput (None).

Example
-------
>>> x = Traffic.from_link_sets([["a", "b"], ["b", "c"], ["a", "c"]])
>>> x.duration(), x.size, sorted(x.bottlenecks())
(2, 3, ['a', 'b', 'c'])
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Iterable, Sequence

from stealsearch.engine.core.errors import InputError


class LiquidInputError(InputError):
    """Bad liquid-schedule input: a traffic, topology or allocation that makes no sense.

    The message is one line saying what is wrong and where."""


@dataclass(frozen=True)
class Transfer:
    """One sender→receiver transfer: the links of its path (a frozenset), plus labels."""

    links: frozenset
    source: str | None = None
    destination: str | None = None

    def label(self) -> str:
        if self.source is not None and self.destination is not None:
            return f"{self.source}->{self.destination}"
        return "{" + ",".join(sorted(self.links, key=_natural_key)) + "}"

    def congests(self, other: "Transfer") -> bool:
        return not self.links.isdisjoint(other.links)


def _natural_key(name: str):
    """Sort 'l2' before 'l10'."""
    import re

    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(name))]


@dataclass
class Traffic:
    """A traffic: an ordered list of distinct transfers over a set of links.

    ``transfers[i]`` has id ``i`` (schedules are lists of steps of ids).  ``links`` is
    the ordered list of link names (every link any transfer uses, plus declared idle
    ones).  ``link_throughput`` (MB/s) scales the liquid throughput.
    """

    transfers: list[Transfer]
    links: list[str]
    link_throughput: float = 1.0
    name: str = "traffic"
    meta: dict = field(default_factory=dict)

    # -- construction + validation ------------------------------------------------------
    @classmethod
    def from_link_sets(cls, link_sets: Iterable[Iterable[str]], *, links: Sequence[str] | None = None,
                       labels: Sequence[tuple[str, str] | None] | None = None,
                       link_throughput: float = 1.0, name: str = "traffic",
                       where: str = "traffic") -> "Traffic":
        """Validate and build a traffic from explicit link sets (§3, Fig. 1).

        ``links``: the declared links; a transfer using any other link is an error.
        ``where``: names the input in error messages (a file name).

        >>> Traffic.from_link_sets([["l1"], []])  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ...
        stealsearch.problems.liquid.model.LiquidInputError: traffic: transfer 1 is empty (a transfer needs at least one link)
        """
        declared = None if links is None else [str(l) for l in links]
        if declared is not None:
            seen = set()
            for l in declared:
                if l in seen:
                    raise LiquidInputError(f"{where}: link {l!r} is declared twice")
                seen.add(l)
        transfers: list[Transfer] = []
        first_at: dict[frozenset, int] = {}
        for i, ls in enumerate(link_sets):
            if isinstance(ls, (str, bytes)):
                raise LiquidInputError(f"{where}: transfer {i} must be a list of link names, got {ls!r}")
            names = [str(l) for l in ls]
            if not names:
                raise LiquidInputError(f"{where}: transfer {i} is empty (a transfer needs at least one link)")
            fs = frozenset(names)
            if len(fs) != len(names):
                raise LiquidInputError(f"{where}: transfer {i} names a link twice: {names}")
            if declared is not None:
                unknown = sorted(fs - set(declared), key=_natural_key)
                if unknown:
                    raise LiquidInputError(f"{where}: transfer {i} uses unknown link {unknown[0]!r}")
            if fs in first_at:
                raise LiquidInputError(
                    f"{where}: transfers {first_at[fs]} and {i} have the same links "
                    f"{sorted(fs, key=_natural_key)} (a traffic is a set of distinct transfers)")
            first_at[fs] = i
            lab = labels[i] if labels is not None else None
            transfers.append(Transfer(fs, *(lab if lab else (None, None))))
        if declared is None:
            used = sorted({l for t in transfers for l in t.links}, key=_natural_key)
            declared = used
        if not (link_throughput > 0):
            raise LiquidInputError(f"{where}: link throughput must be > 0, got {link_throughput}")
        return cls(transfers, declared, float(link_throughput), name)

    # -- basic quantities ---------------------------------------------------------------
    @property
    def size(self) -> int:
        """#(X): the number of transfers."""
        return len(self.transfers)

    def __len__(self) -> int:
        return len(self.transfers)

    def load(self, subset: Iterable[int] | None = None) -> dict[str, int]:
        """Load of every link (transfers of ``subset`` ids, default all, using it)."""
        ids = range(len(self.transfers)) if subset is None else subset
        load = {l: 0 for l in self.links}
        for i in ids:
            for l in self.transfers[i].links:
                load[l] += 1
        return load

    def duration(self, subset: Iterable[int] | None = None) -> int:
        """Λ(X): the load of the bottlenecks (0 for the empty traffic)."""
        load = self.load(subset)
        return max(load.values(), default=0)

    def bottlenecks(self, subset: Iterable[int] | None = None) -> list[str]:
        """The maximally loaded links (none for the empty traffic)."""
        load = self.load(subset)
        top = max(load.values(), default=0)
        if top == 0:
            return []
        return [l for l in self.links if load[l] == top]

    def liquid_throughput(self) -> float | None:
        """#(X)/Λ(X) × link throughput (§3).  Fig. 1: 25/6 × 100 MB/s = 416.67 MB/s."""
        lam = self.duration()
        return None if lam == 0 else self.size / lam * self.link_throughput

    def throughput_of_length(self, steps: int) -> float | None:
        """Aggregate throughput of a schedule of ``steps`` steps: #(X)/steps × link throughput."""
        return None if steps <= 0 else self.size / steps * self.link_throughput

    # -- congestion -------------------------------------------------------------------------
    def congestion_edges(self) -> list[tuple[int, int]]:
        """Edges of the congestion graph (Annex, Fig. 10): pairs of transfers sharing a link."""
        users: dict[str, list[int]] = {l: [] for l in self.links}
        for i, t in enumerate(self.transfers):
            for l in t.links:
                users[l].append(i)
        edges = set()
        for us in users.values():
            edges.update(combinations(us, 2))
        return sorted(edges)

    def is_simultaneous(self, subset: Iterable[int]) -> bool:
        """No two transfers of ``subset`` share a link."""
        seen: set = set()
        for i in subset:
            links = self.transfers[i].links
            if not seen.isdisjoint(links):
                return False
            seen |= links
        return True

    def is_team(self, subset: Iterable[int], within: Iterable[int] | None = None) -> bool:
        """``subset`` is simultaneous and uses every bottleneck of ``within`` (default X)."""
        subset = list(subset)
        if not subset or not self.is_simultaneous(subset):
            return False
        used = set().union(*(self.transfers[i].links for i in subset))
        return set(self.bottlenecks(within)) <= used

    def is_full_team(self, subset: Iterable[int], within: Iterable[int] | None = None) -> bool:
        """A team such that every other transfer (of ``within``) congests with it (§3.2)."""
        subset = list(subset)
        if not self.is_team(subset, within):
            return False
        used = set().union(*(self.transfers[i].links for i in subset))
        pool = range(self.size) if within is None else within
        chosen = set(subset)
        return all(not used.isdisjoint(self.transfers[j].links) for j in pool if j not in chosen)

    def labels(self) -> list[str]:
        return [t.label() for t in self.transfers]

    def summary(self) -> dict:
        """Plain-data facts of the traffic."""
        lam = self.duration()
        return {"name": self.name, "transfers": self.size, "links": len(self.links),
                "duration": lam, "bottlenecks": self.bottlenecks(),
                "liquid_throughput": self.liquid_throughput(),
                "link_throughput": self.link_throughput}

