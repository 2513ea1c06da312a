"""A pair whose ratio never moves (two dollar stablecoins at exactly 1.0) has no z-score and no
Hurst exponent: the snapshot answers 200 with those null, as openapi.yaml documents, rather than
a 500 or a number the data cannot give (its position is 0.5, mid; its ADF p-value 1.0)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from pairscreen import clock
from tests.conftest import make_client
from tests.support.synced import synced_runtime

DAYS = 700
NULL_WHEN_CONSTANT = ("z_score", "hurst")


def _write_universe(folder) -> None:  # type: ignore[no-untyped-def]
    prices = folder / "prices"
    prices.mkdir()
    end = clock.now().date() - timedelta(days=1)
    days = [end - timedelta(days=DAYS - 1 - i) for i in range(DAYS)]
    rng = np.random.default_rng(3)
    btc = 30000 * np.exp(np.cumsum(rng.normal(0, 0.03, DAYS)))
    for ticker, closes in (("USDC", np.ones(DAYS)), ("USDT", np.ones(DAYS)), ("BTC", btc)):
        rows = "".join(
            f"{d.isoformat()},{float(c)!r},1000000\n" for d, c in zip(days, closes, strict=True)
        )
        (prices / f"{ticker}.csv").write_text("date,close,volume\n" + rows, encoding="utf-8")
    assets = "".join(
        f'[[asset]]\nticker = "{t}"\nsector = "dollars"\n\n' for t in ("USDC", "USDT", "BTC")
    )
    (folder / "universe.toml").write_text(
        '[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\nvolume_unit = "quote"\n\n' + assets,
        encoding="utf-8",
    )


@pytest.fixture()
def stable_runtime(tmp_path):  # type: ignore[no-untyped-def]
    _write_universe(tmp_path)
    with synced_runtime(tmp_path, "stable") as (rt, key):
        yield rt, key


def test_constant_ratio_gives_nulls_not_errors(stable_runtime) -> None:  # type: ignore[no-untyped-def]
    rt, key = stable_runtime
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/pair/USDC/USDT", key)  # validated against openapi.yaml
        assert r.status_code == 200, r.text
        body = r.json()
        for name in NULL_WHEN_CONSTANT:
            assert body["metrics"][name] is None, name
        assert body["metrics"]["range_width"] == 0.0
        assert body["metrics"]["adf_pvalue"] == 1.0
        assert body["metrics"]["position"] == 0.5 and body["metrics"]["zone"] == "mid"
        assert body["passes_filter"] is False and body["filter_reason"]
        assert body["backtest"]["A"]["n_trades"] == 0
        moving = client.get("/api/v1/pair/BTC/USDT", key)
        assert moving.status_code == 200
        assert all(moving.json()["metrics"][name] is not None for name in NULL_WHEN_CONSTANT)


def test_constant_ratio_still_charts(stable_runtime) -> None:  # type: ignore[no-untyped-def]
    rt, key = stable_runtime
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/pair/USDC/USDT/chart.png?size=phone", key)
        assert r.status_code == 200, r.text
        assert r.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_a_flat_leg_has_no_cointegration_hedge_or_correlation(stable_runtime) -> None:  # type: ignore[no-untyped-def]
    """A leg whose price never moves makes the Engle-Granger regression singular and its
    returns' correlation undefined: null in the JSON (never NaN, never a 500)."""
    rt, key = stable_runtime
    client = make_client(rt)
    pair_fields = ("coint_pvalue", "hedge_ratio", "return_correlation")
    with client.client:
        flat = client.get("/api/v1/pair/USDC/USDT", key).json()["metrics"]
        one_flat = client.get("/api/v1/pair/BTC/USDT", key).json()["metrics"]
    for name in (*pair_fields, "half_life_days"):
        assert flat[name] is None, name
    for name in pair_fields:
        assert one_flat[name] is None, name
    assert "half_life_days" in one_flat  # BTC/USDT still moves: a number or no reversion
