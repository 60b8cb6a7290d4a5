"""An independent UTS walker in plain Python over ``hashlib.sha1``.

It shares nothing with the numba kernel (not the SHA-1, not the child-count code),
so agreement between the two on small trees checks the kernel's SHA-1, its byte
order and its reading of the UTS child distributions.  Slow (Python per node): for
trees of up to a few hundred thousand nodes.
"""
from __future__ import annotations

import hashlib
import math
import struct


def _num_children(p, height: int, state: bytes) -> int:
    rand = struct.unpack(">I", state[16:20])[0] & 0x7FFFFFFF
    u = rand / 2147483648.0

    def geometric() -> int:
        b_i = p.b0
        if height > 0:
            if p.shape == 1:
                b_i = p.b0 * height ** (-math.log(p.b0) / math.log(p.gen_mx))
            elif p.shape == 2:
                b_i = 0.0 if height > 5 * p.gen_mx else p.b0 ** math.sin(2.0 * math.pi * height / p.gen_mx)
            elif p.shape == 3:
                b_i = p.b0 if height < p.gen_mx else 0.0
            else:
                b_i = p.b0 * (1.0 - height / p.gen_mx)
        prob = 1.0 / (1.0 + b_i)
        if prob >= 1.0:
            return 0
        return max(0, math.floor(math.log(1.0 - u) / math.log(1.0 - prob)))

    if p.tree_type == 0:
        n = math.floor(p.b0) if height == 0 else (p.m if u < p.q else 0)
    elif p.tree_type == 1:
        n = geometric()
    elif p.tree_type == 2:
        n = geometric() if height < p.shift_depth * p.gen_mx else (p.m if u < p.q else 0)
    else:
        n = int(p.b0) if height < p.gen_mx else 0
    if height == 0 and p.tree_type == 0:
        n = min(n, math.ceil(p.b0))
    elif p.tree_type != 3:
        n = min(n, 100)
    return n


def walk(params, max_nodes: int = 2_000_000) -> tuple[int, int, int]:
    """(nodes, depth, leaves) of the tree, by an explicit-stack walk."""
    root = hashlib.sha1(bytes(16) + struct.pack(">I", params.root_seed)).digest()
    stack = [(0, root)]
    nodes = depth = leaves = 0
    while stack:
        height, state = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise ValueError(f"tree has more than {max_nodes} nodes")
        depth = max(depth, height)
        n = _num_children(params, height, state)
        if n == 0:
            leaves += 1
        for i in range(n):
            stack.append((height + 1, hashlib.sha1(state + struct.pack(">I", i)).digest()))
    return nodes, depth, leaves
