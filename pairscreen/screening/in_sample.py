"""Which published figures are in-sample: fitted or backtested on the history the pair was
picked on, so they describe that history (a model's or a backtest's figure), not the future.

Declared once here; ``/pair`` lists them (``in_sample``), the CSV answer names their columns
(``In-Sample-Columns``) and the website marks them.
"""

from __future__ import annotations

# Metric fields: the OU model's promise and the backtest's break-even fee.
METRICS = ("ou_expected_return_per_year", "ou_expected_trade_days", "breakeven_fee")
# Fields of each backtest leg: what its replay of the history made, lost on the way and
# holds open at the end.
LEG_FIELDS = ("growth_pct", "breakeven_fee", "max_drawdown_pct", "open_position_pct")
NOTE = (
    "In-sample figures: the OU model's expected return and trade length are fitted on the "
    "metric window, and the backtest's growth, drawdown, open position and break-even fee "
    "replay the history the pair is judged on; they describe that history, not the future. "
    "/evidence (calibration) shows what such expected returns realised over the next 30 days."
)


def snapshot_paths() -> list[str]:
    """The in-sample fields of a ``/pair`` answer, as dotted paths."""
    legs = [f"backtest.{leg}.{name}" for leg in ("A", "B") for name in LEG_FIELDS]
    return [*(f"metrics.{name}" for name in METRICS), *legs]


def csv_columns(header: list[str]) -> list[str]:
    """The columns of a screen CSV ``header`` that hold in-sample figures."""
    legs = {f"backtest_{leg}_{name}" for leg in ("A", "B") for name in LEG_FIELDS}
    return [name for name in header if name in METRICS or name in legs]
