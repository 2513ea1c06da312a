"""Stable random streams: a day's random numbers depend on ``(seed, component, day)`` only."""

from __future__ import annotations

import zlib
from datetime import date

import numpy as np

from pairscreen_plugins.demo_market.catalogue import BLOCK, EPOCH, T_DF


def stream_key(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def stream(seed: int, name: str, n: int, width: int = 1, kind: str = "t") -> np.ndarray:
    """``(n, width)`` random numbers whose row ``i`` depends only on ``(seed, name, i)``.

    Each block of :data:`BLOCK` days has its own generator, so lengthening ``n`` appends
    rows and never changes the earlier ones.
    """
    blocks = max(1, -(-n // BLOCK))
    parts = []
    for b in range(blocks):
        rng = np.random.default_rng([seed & 0xFFFFFFFF, stream_key(name), b])
        if kind == "t":
            parts.append(rng.standard_t(T_DF, (BLOCK, width)) / np.sqrt(T_DF / (T_DF - 2)))
        elif kind == "normal":
            parts.append(rng.standard_normal((BLOCK, width)))
        else:
            parts.append(rng.random((BLOCK, width)))
    return np.concatenate(parts)[:n]


def ar1(shocks: np.ndarray, phi: np.ndarray | float) -> np.ndarray:
    """``x[t] = phi[t] * x[t-1] + shocks[t]`` along axis 0, from ``x[-1] = 0``.

    ``shocks`` is ``(n,)`` or ``(n, 1)``; ``phi`` (all > 0) a scalar or ``n`` values. Solved
    in short chunks with ``x[t] = P[t] * (x[start-1] + cumsum(shocks / P)[t])``, ``P`` the
    running product of ``phi`` in the chunk (short, so ``1 / P`` stays well inside float
    range), which is exact up to rounding and far faster than a Python loop.
    """
    e = np.asarray(shocks, dtype=float).reshape(len(shocks))
    p = np.broadcast_to(np.asarray(phi, dtype=float).reshape(-1), e.shape)
    out = np.empty_like(e)
    carry = 0.0
    for start in range(0, len(e), 32):
        prod = np.cumprod(p[start : start + 32])
        chunk = prod * (carry + np.cumsum(e[start : start + 32] / prod))
        out[start : start + 32] = chunk
        carry = float(chunk[-1])
    return out.reshape(np.shape(shocks))


def days_through(end: date) -> int:
    return (end - EPOCH).days + 1
