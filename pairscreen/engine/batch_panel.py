"""What the engine does with panels and a plugin never needs: cutting a panel into rows,
flipping its pairs for the mirror backtest leg, and knowing which rows share an asset.

A plugin reads a :class:`~pairscreen.contracts.PairPanel`; the engine builds a
:class:`BatchPanel` from the calendar matrix, whose :attr:`~BatchPanel.leg_ids` let
``each_leg`` compute a leg's work once per asset. Every function here takes
any panel (one a test or the test kit built too) and keeps what the engine knows of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from pairscreen.contracts import PairPanel

RowIndex = np.ndarray | Sequence[int] | slice


@dataclass(frozen=True, eq=False)
class BatchPanel(PairPanel):
    """A panel the engine cut from its calendar matrix: rows whose legs carry the same id in
    :attr:`leg_ids` hold the same asset's closes and volumes, column for column, which
    :meth:`PairPanel.each_leg` reads to compute each distinct asset once (data only: the
    contract's method decides, so a plugin's call never reaches back into the engine)."""

    # (pairs,) int per leg (A, B): the asset's row of the calendar matrix
    leg_ids: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)


def leg_ids(panel: PairPanel) -> tuple[np.ndarray, np.ndarray] | None:
    """The panel's leg ids when the engine built it, else None."""
    return panel.leg_ids if isinstance(panel, BatchPanel) else None


def select_rows(panel: PairPanel, index: RowIndex) -> PairPanel:
    """A panel of the selected rows (a chunk of the screen), with caches of its own; a
    ``slice`` selects them as views, without a copy."""
    idx = index if isinstance(index, slice) else np.asarray(index, dtype=np.intp)
    cut = replace(
        panel,
        a=panel.a[idx] if isinstance(idx, slice) else tuple(panel.a[i] for i in idx),
        b=panel.b[idx] if isinstance(idx, slice) else tuple(panel.b[i] for i in idx),
        dates=panel.dates[idx],
        close_a=panel.close_a[idx],
        close_b=panel.close_b[idx],
        volume_a=panel.volume_a[idx],
        volume_b=panel.volume_b[idx],
        slippage=None if panel.slippage is None else panel.slippage[idx],
    )
    if isinstance(cut, BatchPanel) and cut.leg_ids is not None:
        cut = replace(cut, leg_ids=(cut.leg_ids[0][idx], cut.leg_ids[1][idx]))
    return cut


def flipped(panel: PairPanel) -> PairPanel:
    """The same pairs in the other orientation (B/A), with caches of their own."""
    turned = replace(
        panel,
        a=panel.b,
        b=panel.a,
        close_a=panel.close_b,
        close_b=panel.close_a,
        volume_a=panel.volume_b,
        volume_b=panel.volume_a,
    )
    if isinstance(turned, BatchPanel) and turned.leg_ids is not None:
        turned = replace(turned, leg_ids=(turned.leg_ids[1], turned.leg_ids[0]))
    return turned
