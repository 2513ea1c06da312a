"""Exact rolling percentiles over sliding windows, for many rows at once.

The backtest needs p5/p95 of the ``L`` values before each of ``bt`` days, for thousands of
pairs: ``np.percentile`` per day per pair costs 2 x 360 partitions of 540 values per pair.
Here each row is sorted once; a window is then a set of positions in that sorted order, and
the k-th smallest value of a window is tracked by a pointer into it. Sliding the window by one
day removes one element and adds one, so each pointer moves to at most the neighbouring
in-window position: a few vectorised steps per day for all rows together.

The mirror leg of a pair reads ``ln(B/A)``, which sorts in exactly the reverse order of
``ln(A/B)`` (checked per row, not assumed), so the same pointers serve both legs: the k-th
smallest of the mirror is the (L-1-k)-th of the common order.

The percentile is numpy's linear interpolation between the two order statistics around
``(L - 1) * q``, with numpy's own weight and ``_lerp`` formula, so every value is
bit-identical to ``np.percentile(window, pct)``.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pairscreen_plugins._percentiles import lerp, percentile_neighbours

# Rows per chunk: bounds the sorted copies and the pointer history (~40 MB at 1024 x 900).
_CHUNK = 1024
# Up to this many rows (a live snapshot is one), a sorted list per row costs less than the
# pointer walk's fixed per-day overhead: about 0.6 ms against 10 ms for one row of 900 days.
_FEW_ROWS = 2


def rolling_percentiles(
    values: np.ndarray,
    window: int,
    pcts: Sequence[float],
    mirror: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """``np.percentile(values[:, s : s + window], pct)`` for every row, window start and pct.

    ``values`` is (rows, m); the result is (len(pcts), rows, m - window + 1). With ``mirror``
    (same shape, ordered opposite to ``values``, e.g. ``ln(B/A)`` beside ``ln(A/B)``) the same
    percentiles of the mirror come back second, else None.
    """
    values = np.asarray(values, dtype=float)
    rows, m = values.shape
    if not 0 < window <= m:
        raise ValueError(f"window {window} does not fit in {m} values")
    n_windows = m - window + 1
    out = np.empty((len(pcts), rows, n_windows))
    out_mirror = None if mirror is None else np.empty_like(out)
    if rows <= _FEW_ROWS:
        for row in range(rows):
            _row_percentiles(
                values[row],
                window,
                pcts,
                None if mirror is None else np.asarray(mirror[row], dtype=float),
                out[:, row],
                None if out_mirror is None else out_mirror[:, row],
            )
        return out, out_mirror
    for start in range(0, rows, _CHUNK):
        chunk = slice(start, start + _CHUNK)
        mirror_chunk = None if mirror is None else np.asarray(mirror[chunk], dtype=float)
        _chunk_percentiles(
            values[chunk],
            window,
            pcts,
            mirror_chunk,
            out[:, chunk],
            None if out_mirror is None else out_mirror[:, chunk],
        )
    return out, out_mirror


def _row_percentiles(
    values: np.ndarray,
    window: int,
    pcts: Sequence[float],
    mirror: np.ndarray | None,
    result: np.ndarray,
    result_mirror: np.ndarray | None,
) -> None:
    """One row: (len(pcts), windows) into ``result`` (and the mirror's into ``result_mirror``).

    The order statistics are exact whatever the method, and the same ``lerp`` as numpy's
    makes the values bit-identical to the pointer walk. The mirror maps the row's own order
    statistics when it sorts strictly opposite (checked), else it gets its own pass.
    """
    neighbours = [percentile_neighbours(window, pct) for pct in pcts]
    ranks = sorted({k for lo, hi, _ in neighbours for k in (lo, hi)})
    if mirror is not None:
        ranks = sorted(set(ranks) | {window - 1 - k for k in ranks})
    stats = _window_order_stats(values, window, ranks)
    picked = dict(zip(ranks, stats.T, strict=True))
    for i, (lo, hi, gamma) in enumerate(neighbours):
        lerp(picked[lo], picked[hi], gamma, out=result[i])
    if mirror is None or result_mirror is None:
        return
    order = np.argsort(values, kind="stable")
    if (np.diff(values[order]) > 0).all() and not (np.diff(mirror[order]) > 0).any():
        # Distinct values: each order statistic names one element, whose mirror is the
        # mirror's order statistic of the opposite rank.
        to_mirror = dict(zip(values.tolist(), mirror.tolist(), strict=True))
        for i, (lo, hi, gamma) in enumerate(neighbours):
            lo_m, hi_m = window - 1 - lo, window - 1 - hi
            lower = np.array([to_mirror[v] for v in picked[lo_m].tolist()])
            upper = np.array([to_mirror[v] for v in picked[hi_m].tolist()])
            lerp(lower, upper, gamma, out=result_mirror[i])
    else:
        _row_percentiles(mirror, window, pcts, None, result_mirror, None)


def _window_order_stats(values: np.ndarray, window: int, ranks: list[int]) -> np.ndarray:
    """The ``ranks``-th smallest value of every window of one row: (windows, len(ranks)).

    A sorted list that loses one value and gains one a day (bisect): about 1.5 µs a day,
    where partitioning every window costs 2 ms a row. Non-finite values (which do not sort)
    take the partition.
    """
    if not np.isfinite(values).all():
        windows = np.lib.stride_tricks.sliding_window_view(values, window)
        return np.partition(windows, ranks, axis=1)[:, ranks]
    row = values.tolist()
    current = sorted(row[:window])
    take = operator.itemgetter(*ranks)
    picked = [take(current)]
    for start in range(1, len(row) - window + 1):
        del current[bisect.bisect_left(current, row[start - 1])]
        bisect.insort(current, row[start + window - 1])
        picked.append(take(current))
    return np.array(picked, dtype=float).reshape(len(picked), len(ranks))


def _chunk_percentiles(
    values: np.ndarray,
    window: int,
    pcts: Sequence[float],
    mirror: np.ndarray | None,
    result: np.ndarray,
    result_mirror: np.ndarray | None,
) -> None:
    """Fill ``result`` (and ``result_mirror``), shape (len(pcts), rows, windows)."""
    rows, m = values.shape
    row_base = np.arange(rows, dtype=np.intp)[:, None] * m
    order = np.argsort(values, axis=1)  # any tie order will do for ``values`` alone
    flat_order = order + row_base
    # Both orientations in one complex array (real: values, imaginary: mirror), so that one
    # gather fetches a value and its mirror together; the parts are stored, never mixed.
    unsorted = np.zeros((rows, m), dtype=np.complex128)
    unsorted.real = values
    if mirror is not None:
        unsorted.imag = mirror
    both = unsorted.ravel()[flat_order]
    del unsorted
    mirror_ok = np.ones(rows, dtype=bool)
    if mirror is not None:
        mirror_ok = ~(np.diff(both.imag, axis=1) > 0).any(axis=1)
        for i in map(
            int, np.flatnonzero(~mirror_ok)
        ):  # ties in ``values``: break them by the mirror
            order[i] = np.lexsort((-mirror[i], values[i]))
            both.real[i] = values[i, order[i]]
            both.imag[i] = mirror[i, order[i]]
            mirror_ok[i] = not (np.diff(both.imag[i]) > 0).any()
    del flat_order

    neighbours = [percentile_neighbours(window, pct) for pct in pcts]
    wanted = [(lo, hi) for lo, hi, _ in neighbours]
    if mirror is not None:
        wanted += [(window - 1 - lo, window - 1 - hi) for lo, hi, _ in neighbours]
    ranks = sorted({k for pair in wanted for k in pair})
    history = _track_order_stats(order, window, np.asarray(ranks, dtype=np.intp))
    del order

    by_row = history.transpose(1, 0, 2)  # (rows, windows, ranks): gathers walk each row
    both_flat = both.ravel()
    picked = {k: both_flat[by_row[:, :, i] + row_base] for i, k in enumerate(ranks)}
    for i, (lo, hi, gamma) in enumerate(neighbours):
        lerp(picked[lo].real, picked[hi].real, gamma, out=result[i])
        if result_mirror is not None:
            lo_m, hi_m = window - 1 - lo, window - 1 - hi
            lerp(picked[lo_m].imag, picked[hi_m].imag, gamma, out=result_mirror[i])
    odd = np.flatnonzero(~mirror_ok)
    if result_mirror is not None and odd.size:
        # The mirror does not sort as the reverse of these rows: give it its own pass.
        own = np.empty((len(pcts), odd.size, result.shape[2]))
        _chunk_percentiles(np.asarray(mirror)[odd], window, pcts, None, own, None)
        result_mirror[:, odd] = own


# Lookahead of the pointer walk: a first block (32 positions reach 99.9 % of a day's moves),
# then long ones. Rows of the sorted order are padded with _BLOCK never-in-window sentinels
# on each side, so a block may overrun its row without bounds checks (a member always exists
# before the row's end).
_FIRST_BLOCK = 32
_BLOCK = 64
_NOT_AN_ELEMENT = -1


def _track_order_stats(order: np.ndarray, window: int, ranks: np.ndarray) -> np.ndarray:
    """Sorted positions of the ``ranks``-th smallest member of every window, shape
    (windows, rows, len(ranks))."""
    rows, m = order.shape
    n_windows = m - window + 1
    width = m + 2 * _BLOCK
    padded = np.full((rows, width), _NOT_AN_ELEMENT, dtype=np.int32)
    padded[:, _BLOCK : _BLOCK + m] = order
    padded_flat = padded.ravel()
    # Pointers and positions are flat indexes into ``padded``: no per-row offsets later.
    base = np.arange(rows, dtype=np.int32)[:, None] * width + _BLOCK
    position = np.empty((rows, m), dtype=np.int32)  # flat padded index of each element
    np.put_along_axis(position, order, base + np.arange(m, dtype=np.int32), axis=1)
    position_by_day = np.ascontiguousarray(position.T)
    del position

    # Pointers of the requested order statistics in the first window.
    seen = np.cumsum(order < window, axis=1, dtype=np.int32)
    ptr = np.stack([np.argmax(seen > k, axis=1) for k in ranks], axis=1).astype(np.int32)
    ptr += base
    del seen
    history = np.empty((n_windows, rows, ranks.size), dtype=np.int32)
    history[0] = ptr  # flat indexes until the end, where the row bases come off at once

    flat_ptr = ptr.reshape(-1)
    # One look ahead of _FIRST_BLOCK positions resolves nearly every move. The padded order
    # and its reverse side by side give each pointer its positions in its own direction as
    # one contiguous run (up from ``o``: ``o+1, o+2, ...`` at ``o+1``; down: ``o-1, o-2, ...``
    # at ``2 size - o``), so one gather of whole runs serves both directions. A column past
    # the lookahead always counts as found: argmax then says "not within reach", and the
    # rare longer gap walks on in _walk.
    size = padded_flat.size
    ahead = sliding_window_view(np.concatenate([padded_flat, padded_flat[::-1]]), _FIRST_BLOCK + 1)
    from_the_end = np.int32(2 * size)
    for s in range(1, n_windows):
        leaving = position_by_day[s - 1][:, None]
        entering = position_by_day[s + window - 1][:, None]
        # The pointer moves when the day's two changes fall on opposite sides of it, or its
        # own element leaves: (entering - ptr) * (ptr - leaving) >= 0. It moves towards the
        # newcomer, to the nearest member that way.
        toward = entering - ptr
        # (ndarray methods: numpy's function wrappers cost a microsecond a call, twice a day)
        moving = (toward * (ptr - leaving) >= 0).ravel().nonzero()[0]
        if moving.size:
            origin = flat_ptr[moving]
            up = toward.ravel()[moving] > 0
            element = ahead[np.where(up, origin + 1, from_the_end - origin)]
            element -= s  # a member when 0 <= element - s < window (a sentinel never is)
            element[:, -1] = 0
            steps = (element.view(np.uint32) < window).argmax(axis=1)
            steps += 1
            flat_ptr[moving] = origin + np.where(up, steps, -steps)
            beyond = steps > _FIRST_BLOCK
            if beyond.any():
                far = moving[beyond]
                sign = np.where(up[beyond], 1, -1).astype(np.int32)
                flat_ptr[far] = origin[beyond] + sign * _FIRST_BLOCK
                _walk(flat_ptr, far, sign, padded_flat, s, s + window)
        history[s] = ptr
    history -= base[None, :, :]
    return history


def _walk(
    flat_ptr: np.ndarray,
    which: np.ndarray,
    step: np.ndarray,
    padded_flat: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """Move the selected pointers by ``step`` to the nearest element of [lo, hi) that way.

    Looks ahead a block of positions at a time: the nearest member is usually within a few
    positions, but the gap can reach dozens when out-of-window values cluster in a tail.
    """
    origin = flat_ptr[which]
    offset = 0
    block = _BLOCK
    while which.size:
        reach = np.arange(offset + 1, offset + block + 1, dtype=np.int32)
        target = origin[:, None] + step[:, None] * reach
        element = padded_flat[target]
        member = (element >= lo) & (element < hi)
        first = np.argmax(member, axis=1)
        found = member[np.arange(first.size), first]
        hit = np.flatnonzero(found)
        flat_ptr[which[hit]] = target[hit, first[hit]]
        keep = ~found
        which, origin, step = which[keep], origin[keep], step[keep]
        offset += block
        block = _BLOCK
