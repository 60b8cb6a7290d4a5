"""Bit tricks for kernels over int64 bitsets: popcount and count-trailing/leading-zeros
as LLVM intrinsics (``llvm.ctpop.i64``, ``llvm.cttz.i64``, ``llvm.ctlz.i64``) reached from numba through
``@intrinsic`` -- one CPU instruction each.

Sets are ``int64`` words (the engine's row dtype); only bit patterns matter, so
signed words are used throughout and no uint64/int64 mixing (which numba promotes
to float) occurs.  Any problem's kernel may use these.

>>> from stealsearch.engine.core.bitset import popcount, ctz
>>> import numpy as np
>>> int(popcount(np.int64(0b1011))), int(ctz(np.int64(0b1000)))
(3, 3)
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def _ctpop64(typingctx, x):
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        (val,) = args
        val = context.cast(builder, val, x, types.int64)
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [val])

    return sig, codegen


def _count_zeros(name: str):
    """The codegen of ``llvm.<name>.i64`` with its zero-is-poison flag off."""

    def codegen(context, builder, signature, args):
        (val,) = args
        val = context.cast(builder, val, signature.args[0], types.int64)
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)])
        fn = builder.module.declare_intrinsic(name, [ir.IntType(64)], fnty)
        return builder.call(fn, [val, ir.Constant(ir.IntType(1), 0)])

    return codegen


@intrinsic
def _cttz64(typingctx, x):
    """Trailing zero bits of a 64-bit word (``llvm.cttz.i64``; 64 for 0)."""
    if not isinstance(x, types.Integer):
        return None
    return types.int64(types.int64), _count_zeros("llvm.cttz")


@intrinsic
def _ctlz64(typingctx, x):
    """Leading zero bits of a 64-bit word (``llvm.ctlz.i64``; 64 for 0)."""
    if not isinstance(x, types.Integer):
        return None
    return types.int64(types.int64), _count_zeros("llvm.ctlz")


@njit(inline="always", nogil=True, cache=True)
def popcount(x):
    """Number of 1 bits of a 64-bit word."""
    return _ctpop64(x)


@njit(inline="always", nogil=True, cache=True)
def ctz(x):
    """Index of the lowest 1 bit of a non-zero 64-bit word (64 for 0)."""
    return _cttz64(x)

