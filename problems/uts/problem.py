"""UTS tree parameters, the published trees, and the engine Problem.

The Unbalanced Tree Search benchmark (Olivier, Huan, Liu, Prins, Dinan, Sadayappan,
Tseng, "UTS: an unbalanced tree search benchmark", LCPC 2006; version 2.1) is the
workload the stealstack was made for (seed 003, ref. [2]).  A tree is implicit: a
node's number of children comes from its own SHA-1 state, so the tree is the same
however it is traversed, and its size is an exact oracle for the engine.

Parameters follow the UTS command line: ``-t`` type (0 binomial, 1 geometric,
2 hybrid, 3 balanced), ``-a`` geometric shape (0 linear, 1 expdec, 2 cyclic,
3 fixed), ``-d`` gen_mx, ``-b`` b0, ``-r`` root seed, ``-q`` non-leaf probability,
``-m`` non-leaf branching factor, ``-f`` hybrid shift depth.

Validation refuses what cannot be searched: a binomial (or hybrid) tree whose q*m > 1
is a supercritical Galton-Watson process, infinite with a probability computed exactly
(:meth:`UTSParams.finite_probability`); above 1/2 it is refused.  Just above 1 it is
usually finite: the published T3L (q*m = 1.00007, finite with probability ~0.93) is,
with 111,345,631 nodes.  Such a tree is accepted, with a warning unless it is one of the
published trees, since an infinite one would only end by a node or time limit.

The kernel's scratch (the child-index table and the per-parent schedule,
:func:`stealsearch.problems.uts.kernels.scratch`) comes with :meth:`UTSProblem.kernel_data`, new for
every stack, so a kernel call allocates nothing.
"""
from __future__ import annotations

import math
import shlex
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from stealsearch.engine.core.errors import InputError, InputWarning
from stealsearch.engine.core.problem import Mode, Problem

from . import kernels as K
from .kernels import BALANCED, BIN, GEO, HYBRID

#: The largest b0 of a binomial or balanced tree (children of one node, each a stack row
#: and a row of the child-index table; T3's root has 2000).
MAX_B0_ROWS = 100_000
#: The deepest tree (-d, gen_mx) accepted: the UTS reference's ``int gen_mx`` (a larger
#: -d would not fit the kernel's int64 depth and would run as an endless search).
MAX_GEN_MX = 2 ** 31 - 1


class UTSParameterError(InputError):
    """A UTS parameter is out of range or malformed."""


def extinction_probability(q: float, m: int) -> float:
    """The probability that a binomial UTS subtree is finite: the smallest root in
    [0, 1] of ``s = (1 - q) + q s^m`` (a Galton-Watson process whose nodes have m children
    with probability q, none otherwise).  1 when q*m <= 1 (the critical and subcritical
    cases); below 1 when q*m > 1 (supercritical).

    >>> round(extinction_probability(0.200014, 5), 6)       # T3L
    0.999965
    >>> round(extinction_probability(0.5, 4), 4)
    0.5437
    """
    if q * m <= 1.0 or m < 2:
        return 1.0
    # g(s) = 1 - q + q s^m - s is > 0 at 0 and < 0 at its minimum s*, where
    # q m s*^(m-1) = 1; the root sought lies between, where g is decreasing: bisect
    lo, hi = 0.0, (1.0 / (q * m)) ** (1.0 / (m - 1))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 1.0 - q + q * mid ** m - mid > 0.0:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class UTSParams:
    tree_type: int = K.GEO
    shape: int = K.LINEAR
    gen_mx: int = 6
    b0: float = 4.0
    root_seed: int = 0
    q: float = 15.0 / 64.0
    m: int = 4
    shift_depth: float = 0.5

    def __post_init__(self):
        if self.tree_type not in (0, 1, 2, 3):
            raise UTSParameterError(f"-t (tree type) must be 0..3, got {self.tree_type}")
        if self.shape not in (0, 1, 2, 3):
            raise UTSParameterError(f"-a (geometric shape) must be 0..3, got {self.shape}")
        if not 1 <= self.gen_mx <= MAX_GEN_MX:
            got = f"{self.gen_mx:.3g}" if abs(self.gen_mx) > 1e12 else str(self.gen_mx)
            raise UTSParameterError(f"-d (gen_mx, the tree's depth) must be in "
                                    f"1..{MAX_GEN_MX:,}, got {got}")
        if not self.b0 > 0 or not math.isfinite(self.b0):
            raise UTSParameterError(f"-b (b0) must be > 0, got {self.b0}")
        if self.tree_type in (BIN, BALANCED) and self.b0 > MAX_B0_ROWS:
            # b0 is then a node's number of children: that many stack rows per node
            raise UTSParameterError(f"-b (b0) of a binomial or balanced tree is the root's "
                                    f"(or every node's) number of children: at most "
                                    f"{MAX_B0_ROWS:,}, got {self.b0:g}")
        if (self.tree_type in (GEO, HYBRID) and self.shape == K.EXPDEC and self.gen_mx < 2):
            raise UTSParameterError("-a 1 (expdec) divides by log(gen_mx): -d must be >= 2, "
                                    f"got {self.gen_mx}")
        if not math.isfinite(self.shift_depth):
            raise UTSParameterError(f"-f (shift depth) must be a finite number, got {self.shift_depth}")
        if not 0.0 <= self.q <= 1.0:
            raise UTSParameterError(f"-q (non-leaf probability) must be in [0, 1], got {self.q}")
        if self.m < 0:
            raise UTSParameterError(f"-m (non-leaf children) must be >= 0, got {self.m}")
        if not 0 <= self.root_seed < 2 ** 31:
            raise UTSParameterError(f"-r (root seed) must be in [0, 2^31), got {self.root_seed}")
        if self.tree_type in (BIN, HYBRID) and self.finite_probability() < 0.5:
            raise UTSParameterError(
                f"q*m = {self.q * self.m:g}: the binomial tree would be infinite with "
                f"probability {1 - self.finite_probability():.2g} (it is finite with "
                "certainty only for q*m <= 1)")

    def extinction_probability(self) -> float:
        """The probability that the binomial subtree below one node is finite
        (:func:`extinction_probability` of q and m)."""
        return extinction_probability(self.q, self.m)

    def finite_probability(self) -> float:
        """The probability that the whole tree is finite.  A binomial tree's root has
        floor(b0) independent binomial subtrees: ``extinction_probability() ** floor(b0)``
        (T3L, q*m = 1.00007: about 0.93, and the published tree is one of the finite
        ones).  A hybrid tree's geometric top is finite; each node reaching the binomial
        part starts a subtree, so its probability is at most one subtree's.  Geometric
        and balanced trees are always finite.

        >>> round(UTSParams.parse(PRESETS["T3L"][0]).finite_probability(), 2)
        0.93
        """
        if self.tree_type == BIN:
            return self.extinction_probability() ** int(self.b0)
        if self.tree_type == HYBRID:
            return self.extinction_probability()
        return 1.0

    def supercritical(self) -> bool:
        """A binomial part with q*m > 1: finite only by chance (see :meth:`finite_probability`)."""
        return self.tree_type in (BIN, HYBRID) and self.q * self.m > 1.0

    @classmethod
    def parse(cls, text: str) -> "UTSParams":
        """Parse UTS-style options, e.g. ``"-t 1 -a 3 -d 10 -b 4 -r 19"``."""
        flags = {"-t": ("tree_type", int), "-a": ("shape", int), "-d": ("gen_mx", int),
                 "-b": ("b0", float), "-r": ("root_seed", int), "-q": ("q", float),
                 "-m": ("m", int), "-f": ("shift_depth", float)}
        words = shlex.split(text)
        if len(words) % 2:
            raise UTSParameterError(f"UTS options must come in flag/value pairs: {text!r}")
        kwargs = {}
        for flag, value in zip(words[::2], words[1::2]):
            if flag not in flags:
                raise UTSParameterError(f"unknown UTS option {flag!r} in {text!r}")
            name, conv = flags[flag]
            try:
                kwargs[name] = conv(value)
            except ValueError:
                raise UTSParameterError(f"UTS option {flag} needs a number, got {value!r}") from None
        return cls(**kwargs)

    def vector(self) -> np.ndarray:
        v = np.zeros(K.N_PARAMS, dtype=np.float64)
        v[K.P_TYPE] = self.tree_type
        v[K.P_SHAPE] = self.shape
        v[K.P_B0] = self.b0
        v[K.P_GENMX] = self.gen_mx
        v[K.P_Q] = self.q
        v[K.P_M] = self.m
        v[K.P_SHIFT] = self.shift_depth
        return v

    def max_children(self) -> int:
        if self.tree_type in (K.BIN, K.BALANCED):
            return max(K.MAXNUMCHILDREN, int(np.ceil(self.b0)))
        return K.MAXNUMCHILDREN


#: The published trees: options and (nodes, depth, leaves) from the UTS 2.1 release notes.
PRESETS = {
    "default": ("-t 1 -a 0 -d 6 -b 4 -r 0", (1732, 6, 1050)),
    "T1": ("-t 1 -a 3 -d 10 -b 4 -r 19", (4130071, 10, 3305118)),
    "T5": ("-t 1 -a 0 -d 20 -b 4 -r 34", (4147582, 20, 2181318)),
    "T2": ("-t 1 -a 2 -d 16 -b 6 -r 502", (4117769, 81, 2342762)),
    "T3": ("-t 0 -b 2000 -q 0.124875 -m 8 -r 42", (4112897, 1572, 3599034)),
    "T4": ("-t 2 -a 0 -d 16 -b 6 -r 1 -q 0.234375 -m 4", (4132453, 134, 3108986)),
    "T1L": ("-t 1 -a 3 -d 13 -b 4 -r 29", (102181082, None, None)),
    "T3L": ("-t 0 -b 2000 -q 0.200014 -m 5 -r 7", (111345631, None, None)),
}


class UTSProblem(Problem):
    """Count the nodes of a UTS tree (enumerate mode).

    >>> from stealsearch.engine import solve
    >>> r = solve(UTSProblem.preset("default"), backend="sequential")
    >>> r.count, r.counters["depth"], r.counters["leaves"]
    (1732, 6, 1050)
    """

    name = "uts"
    kernel = staticmethod(K.uts_kernel)
    row_width = 6
    mode = Mode.ENUMERATE
    solution_size = 1
    extra_counters = (("leaves", "sum"), ("depth", "max"))

    def __init__(self, params: UTSParams, label: str | None = None):
        self.params = params
        self.label = label
        if params.supercritical() and label not in PRESETS:
            # the published T3L is supercritical too, and known to be finite: no warning
            warnings.warn(
                f"UTS q*m = {params.q * params.m:g} > 1: this tree is finite only with "
                f"probability {params.finite_probability():.2g}; an infinite one ends only "
                "by a node or time limit", InputWarning, stacklevel=2)
        self.max_children = params.max_children()
        self._vector = params.vector()

    @classmethod
    def preset(cls, name: str) -> "UTSProblem":
        key = {k.lower(): k for k in PRESETS}.get(name.lower())
        if key is None:
            raise UTSParameterError(f"unknown UTS tree {name!r}; known: {', '.join(PRESETS)}")
        return cls(UTSParams.parse(PRESETS[key][0]), label=key)

    def root_frontier(self) -> np.ndarray:
        digest = np.zeros(5, dtype=np.int64)
        K.root_state(self.params.root_seed, digest)
        row = np.zeros((1, self.row_width), dtype=np.int64)
        row[0, 1:] = digest
        return row

    def kernel_data(self) -> tuple:
        """``(p_vec, itab, pw)``: the parameters, then the kernel's scratch, new on every
        call.  Every stack calls this once (``stealsearch.engine.core.stack.LocalStack``), so each stack,
        and each search thread with it, has its own ``pw`` (the one array the kernel
        writes); the kernel itself allocates nothing."""
        return (self._vector, *K.scratch(self._vector))

    def describe(self) -> dict:
        return {"problem": "uts", "tree": self.label, "params": asdict(self.params)}
