"""Big universes: which pairs are screened, and pairs aligned on one calendar matrix."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from pairscreen.contracts import Candles
from pairscreen.engine.calendar import CandleMatrix
from pairscreen.engine.panels import align, panel_of
from pairscreen.universe import UniverseError, load_universe_file

ASSETS = [("A", "majors"), ("B", "majors"), ("G", "gold"), ("C", "majors"), ("H", "gold")]
ASSETS += [("S", "stables"), ("T", "stables")]


def write(tmp_path: Path, pairs_table: str) -> Path:
    lines = ['[components]\nmarket_source = "demo"\n\n[plugins.demo]\n', pairs_table]
    for ticker, sector in ASSETS:
        lines.append(f'[[asset]]\nticker = "{ticker}"\nsector = "{sector}"\n')
    path = tmp_path / "universe.toml"
    path.write_text("\n".join(lines))
    return path


def tickers(path: Path) -> list[str]:
    return [f"{a.ticker}/{b.ticker}" for a, b in load_universe_file(path).screened_pairs()]


def test_same_sector_pairs_then_explicit_cross_pairs_as_written(tmp_path):
    path = write(tmp_path, '[pairs]\ncross = [["G", "A"], ["A", "B"], ["A", "G"], ["T", "H"]]\n')
    assert tickers(path) == ["A/B", "A/C", "B/C", "G/H", "S/T", "G/A", "T/H"]


def test_cross_sectors_add_every_pair_across_them_in_universe_order(tmp_path):
    table = '[pairs]\ncross_sectors = [["gold", "majors"]]\ncross = [["H", "B"], ["S", "A"]]\n'
    expected = ["A/B", "A/G", "A/C", "A/H", "B/G", "B/C", "B/H", "G/C", "G/H", "C/H", "S/T"]
    assert tickers(write(tmp_path, table)) == [*expected, "S/A"]


def test_all_pairs_is_every_combination(tmp_path):
    path = write(tmp_path, "[pairs]\nall = true\n")
    expected = [f"{a}/{b}" for (a, _), (b, _) in itertools.combinations(ASSETS, 2)]
    assert tickers(path) == expected
    ia, ib = load_universe_file(path).screened_pair_indices()
    assert ia.shape == ib.shape == (len(ASSETS) * (len(ASSETS) - 1) // 2,)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('all = "yes"', "all must be true or false"),
        ('cross_sectors = [["gold", "silver"]]', "must name two different sectors"),
        ('cross_sectors = [["gold", "gold"]]', "must name two different sectors"),
        ('cross_sectors = ["gold"]', "must name two different sectors"),
    ],
)
def test_bad_pairs_tables_are_refused_with_the_fix(tmp_path, table, message):
    with pytest.raises(UniverseError, match=message):
        load_universe_file(write(tmp_path, f"[pairs]\n{table}\n"))


def candles(ticker: str, rng: np.random.Generator, days: int, keep: float) -> Candles:
    dates = np.datetime64("2025-06-30") - np.arange(days)[::-1]
    kept = rng.random(days) < keep
    kept[-5:] = True
    volume = rng.uniform(1, 9, days)
    volume[rng.random(days) < 0.05] = np.nan
    return Candles(ticker, dates[kept], rng.uniform(1, 2, days)[kept], volume[kept])


def test_matrix_panels_hold_exactly_what_pairwise_alignment_gives():
    rng = np.random.default_rng(5)
    series = [
        candles(f"X{k}", rng, int(rng.integers(300, 700)), keep)
        for k, keep in enumerate([1.0, 1.0, 0.9, 0.97, 1.0, 0.8])
    ]
    by_ticker = {c.ticker: c for c in series}
    matrix = CandleMatrix.of(by_ticker, list(by_ticker))
    ia, ib = (np.array(x) for x in zip(*itertools.combinations(range(len(series)), 2), strict=True))
    common = matrix.common(ia, ib)
    aligned = [align(series[i], series[j]) for i, j in zip(ia, ib, strict=True)]
    assert common.sum(axis=1).tolist() == [p.n_days for p in aligned]
    assert [str(d) for d in matrix.last_common_day(common)] == [str(p.dates[-1]) for p in aligned]
    for days in (200, min(p.n_days for p in aligned)):
        got = matrix.panel(ia, ib, common, days, 150)
        want = panel_of(aligned, days, 150)
        assert (got.a, got.b) == (want.a, want.b)
        for name in ("dates", "close_a", "close_b", "volume_a", "volume_b"):
            assert np.array_equal(getattr(got, name), getattr(want, name), equal_nan=True), name


def test_pairs_with_every_recent_day_take_the_shared_calendar_path():
    rng = np.random.default_rng(8)
    series = [candles(f"F{k}", rng, 400 + 50 * k, 1.0) for k in range(3)]
    matrix = CandleMatrix.of({c.ticker: c for c in series}, [c.ticker for c in series])
    ia, ib = np.array([0, 0, 1]), np.array([1, 2, 2])
    got = matrix.panel(ia, ib, matrix.common(ia, ib), 380, 300)
    want = panel_of([align(series[i], series[j]) for i, j in zip(ia, ib, strict=True)], 380, 300)
    assert got.dates.base is not None  # one shared row of dates, not a copy per pair
    for name in ("dates", "close_a", "close_b", "volume_a", "volume_b"):
        assert np.array_equal(getattr(got, name), getattr(want, name), equal_nan=True), name
