"""A group of pairs on one calendar, whose panels are cut from the calendar matrix on demand.

A screen's task of a few thousand pairs used to gather one panel of them all (closes and
volumes of both legs, pairs x ~900 days each) before its deciding metrics read it 500 rows at
a time, and before its survivors (a tenth of it) read it whole. Cut on demand, each slice's
panel is gathered while it is used, the survivors' panel holds the survivors alone, and a
slice whose pairs share a leg (a screen's slice is one asset against hundreds) broadcasts
that leg's row instead of copying it: less copying, and a task's memory no longer grows with
its size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import PairPanel
from pairscreen.engine.batch_panel import RowIndex, select_rows
from pairscreen.engine.calendar import CandleMatrix
from pairscreen.engine.costs import with_costs
from pairscreen.universe import SwapCosts


@dataclass(frozen=True, eq=False)
class PanelRows:
    """Pairs ``(ia[k], ib[k])`` of one calendar group, each panel their last ``days`` common
    closes (``common``) with the universe's swap ``costs`` applied (``slippage_a``/``_b``:
    each pair's legs' slippage)."""

    matrix: CandleMatrix
    ia: np.ndarray
    ib: np.ndarray
    common: np.ndarray  # (pairs, matrix days) bool: the closes each pair's panel holds
    days: int
    window_days: int
    costs: SwapCosts
    slippage_a: np.ndarray  # (pairs,)
    slippage_b: np.ndarray  # (pairs,)

    @property
    def n_pairs(self) -> int:
        return int(self.ia.shape[0])

    def rows(self, index: RowIndex) -> PairPanel:
        """The panel of the selected pairs, gathered from the matrix now."""
        idx = index if isinstance(index, slice) else np.asarray(index, dtype=np.intp)
        ia, ib = self.ia[idx], self.ib[idx]
        panel = self.matrix.panel(ia, ib, self.common[idx], self.days, self.window_days)
        return with_costs(panel, self.costs, self.slippage_a[idx], self.slippage_b[idx])


# Pairs that give a panel of any of their rows: a panel (its rows) or a :class:`PanelRows`
# (cut from the calendar matrix); :func:`rows_of` gives either's.
PairRows = PanelRows | PairPanel


def rows_of(pairs: PairRows, index: RowIndex) -> PairPanel:
    """The panel of the selected rows of ``pairs``."""
    if isinstance(pairs, PanelRows):
        return pairs.rows(index)
    return select_rows(pairs, index)
