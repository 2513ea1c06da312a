"""The survivor-minus-rest difference by as-of day, one line per horizon (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pairscreen.evaluation.run import Evaluation


def plot_differences(evaluation: Evaluation, path: Path) -> None:
    """Write a PNG of the screen rules' per-day differences (pp of log-ratio, or of the
    strategy's excess over holding both legs) to ``path``, with each horizon's pooled
    difference and interval as a band."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 4.5), dpi=100)
    axes = figure.subplots()
    screen = evaluation.results[0]
    days = np.array(evaluation.dates, dtype="datetime64[D]")
    for result in screen.horizons:
        values = [float("nan") if v is None else v * 100 for v in result.per_date]
        (line,) = axes.plot(days, values, marker="o", ms=3, label=f"{result.horizon} days")
        diff = result.difference
        if diff.low is not None and diff.high is not None:
            axes.axhspan(diff.low * 100, diff.high * 100, color=line.get_color(), alpha=0.12)
    axes.axhline(0.0, color="black", lw=0.8)
    unit = "excess log return" if evaluation.outcome == "strategy" else "log-ratio"
    axes.set_ylabel(f"survivors minus rest (pp of {unit})")
    axes.set_title(f"Rule set {screen.rule_set.name!r}: difference by as-of day and horizon")
    axes.legend(title="horizon (band: 95 % interval)")
    figure.autofmt_xdate()
    figure.tight_layout()
    figure.savefig(path, format="png")
