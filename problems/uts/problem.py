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
"""
from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass

import numpy as np

from engine.errors import InputError
from engine.problem import Mode, Problem

from . import kernels as K


class UTSParameterError(InputError):
    """A UTS parameter is out of range or malformed."""


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
        if self.gen_mx < 1:
            raise UTSParameterError(f"-d (gen_mx) must be >= 1, got {self.gen_mx}")
        if not self.b0 > 0:
            raise UTSParameterError(f"-b (b0) must be > 0, got {self.b0}")
        if not 0.0 <= self.q <= 1.0:
            raise UTSParameterError(f"-q (non-leaf probability) must be in [0, 1], got {self.q}")
        if self.m < 0:
            raise UTSParameterError(f"-m (non-leaf children) must be >= 0, got {self.m}")
        if not 0 <= self.root_seed < 2 ** 31:
            raise UTSParameterError(f"-r (root seed) must be in [0, 2^31), got {self.root_seed}")
        if self.tree_type in (0, 2) and self.q * self.m >= 1.0:
            # a binomial part with expected children >= 1 is (almost surely) infinite
            raise UTSParameterError(f"q*m = {self.q * self.m:g} >= 1: the binomial tree "
                                    "would not be finite")

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

    >>> from engine import solve
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
        return (self._vector,)

    def describe(self) -> dict:
        return {"problem": "uts", "tree": self.label, "params": asdict(self.params)}
