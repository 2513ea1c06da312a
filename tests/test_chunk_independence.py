"""A pair's numbers do not depend on which other pairs share its panel.

The screen splits the universe into chunks (of any size, on this machine or a Dask cluster)
and a live snapshot is a panel of one pair: both must give every metric and both backtest
legs bit for bit the same. numpy sums a contiguous axis pairwise but a strided one in order,
so a vectorised reduction can change its last digit with the panel's width; this test holds
every metric and the strategy to one answer whatever the width.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.series_factory import all_series, by_length, panel
from tests.test_metric_parity import compute

from pairscreen_plugins.strategies.accumulation import AccumulationStrategy  # isort: skip

GROUP = by_length(all_series())[900]


def everything(p) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    out = dict(compute(p))
    for leg in ("A", "B"):
        batch = AccumulationStrategy().run(p, bt_days=360, start_leg=leg)
        out[f"growth_{leg}"] = batch.growth_pct
        out[f"drawdown_{leg}"] = batch.max_drawdown_pct
        out[f"trades_{leg}"] = batch.n_trades
    return out


@pytest.mark.parametrize("width", [1, 2, 3, 7, 9, 23])
def test_every_number_is_the_same_in_any_panel_width(width: int) -> None:
    series = GROUP[:46]
    whole = everything(panel(series))
    for start in range(0, len(series), width):
        part = everything(panel(series[start : start + width]))
        for name, values in part.items():
            expected = whole[name][start : start + width]
            nan_ok = values.dtype.kind == "f"
            assert np.array_equal(values, expected, equal_nan=nan_ok), (
                f"{name} differs in a panel of {width} from rows {start}..: {values} != {expected}"
            )
