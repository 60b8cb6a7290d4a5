"""The UTS kernel's SHA-1 fast path (schedule split into a per-parent part and a
per-child-index table, rounds 0-4 shared by siblings) against hashlib, child by child."""
import hashlib
import struct

import numpy as np

from stealsearch.engine.core.problem import N_ENGINE_COUNTERS
from stealsearch.problems.uts import UTSProblem
from stealsearch.problems.uts import kernels as K
from stealsearch.problems.uts.problem import UTSParams


def _child_state(parent: bytes, i: int) -> bytes:
    return hashlib.sha1(parent + struct.pack(">I", i)).digest()


def test_every_child_of_a_2000_child_root_matches_hashlib():
    # T3's root has 2000 children: indices past MAXNUMCHILDREN use the rows the table
    # has only for binomial trees (kernels.scratch sizes it by the tree's maximum)
    problem = UTSProblem(UTSParams.parse("-t 0 -b 2000 -q 0.124875 -m 8 -r 42"))
    root = problem.root_frontier()
    stack = np.zeros((4096, problem.row_width), np.int64)
    stack[0] = root[0]
    counters = np.zeros(N_ENGINE_COUNTERS + 2, np.int64)
    top, status, _ = K.uts_kernel(stack, 1, 1, 0, 0, counters, np.zeros(1, np.int64),
                                  *problem.kernel_data())
    assert top == 2000 and counters[0] == 1
    parent = b"".join(struct.pack(">I", int(x)) for x in root[0, 1:])
    for i in range(2000):
        want = _child_state(parent, i)
        got = b"".join(struct.pack(">I", int(x)) for x in stack[i, 1:])
        assert got == want, i
        assert stack[i, 0] == 1


def test_grandchildren_match_hashlib_across_chunks():
    # budget 1 per call, a fresh scratch (table and parent schedule) each time: states
    # must not depend on what the scratch held before
    problem = UTSProblem.preset("T1")
    stack = np.zeros((4096, problem.row_width), np.int64)
    stack[0] = problem.root_frontier()[0]
    counters = np.zeros(N_ENGINE_COUNTERS + 2, np.int64)
    top = 1
    seen = 0
    while top and seen < 300:
        parent = b"".join(struct.pack(">I", int(x)) for x in stack[top - 1, 1:])
        height = stack[top - 1, 0]
        new_top, _, _ = K.uts_kernel(stack, top, 1, 0, 0, counters, np.zeros(1, np.int64),
                                     *problem.kernel_data())
        n = new_top - (top - 1)
        for i in range(n):
            got = b"".join(struct.pack(">I", int(x)) for x in stack[top - 1 + i, 1:])
            assert got == _child_state(parent, i)
            assert stack[top - 1 + i, 0] == height + 1
        top = new_top
        seen += 1
    assert seen == 300


def test_scratch_reused_across_calls_changes_nothing():
    """One stack's scratch serves every call (the engine's way): the tree is the same as
    with a fresh scratch per call, and the kernel writes only ``pw``."""
    from stealsearch.engine import StealPolicy, solve

    problem = UTSProblem.preset("T3")
    p_vec, itab, pw = problem.kernel_data()
    itab_before = itab.copy()
    stack = np.zeros((8192, problem.row_width), np.int64)
    stack[0] = problem.root_frontier()[0]
    counters = np.zeros(N_ENGINE_COUNTERS + 2, np.int64)
    top = 1
    for _ in range(500):                      # 500 chunks of 37 nodes on one scratch
        top, _, _ = K.uts_kernel(stack, top, 37, 0, 0, counters, np.zeros(1, np.int64),
                                 p_vec, itab, pw)
    assert np.array_equal(itab, itab_before)
    r = solve(problem, backend="sequential", node_limit=500 * 37,
              policy=StealPolicy(budget=37, chunk_seconds=None))
    assert r.nodes == counters[0] == 500 * 37
    assert (r.counters["leaves"], r.counters["depth"]) == (counters[N_ENGINE_COUNTERS],
                                                          counters[N_ENGINE_COUNTERS + 1])
    fresh = problem.kernel_data()
    assert fresh[2] is not pw and fresh[1] is not itab    # each stack its own
