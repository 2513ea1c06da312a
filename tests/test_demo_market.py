"""The built-in demo market: deterministic, realistic-looking, and a screen with a real mix.

The screen mix is computed with the reference implementations (arch, statsmodels,
pairscan-rmr) directly, so this test holds the demo to the methodology independently of our
engine.
"""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from pairscreen_plugins.demo_market import catalogue, model
from pairscreen_plugins.market import demo

from pairscreen import Asset, clock
from pairscreen.universe import load_demo_universe

TODAY = clock.today()
LAST_CLOSED = TODAY - timedelta(days=1)  # today's candle is still forming: never served
REASONS = ("insufficient_history", "hurst", "adf", "range_width", "touches")


@pytest.fixture(scope="module")
def universe():
    return load_demo_universe()


@pytest.fixture(scope="module")
def candles(universe):
    source = demo.DemoMarketSource()
    out = source.fetch_candles(universe.assets, universe.market_options, since={}, until=TODAY)
    return {c.ticker: c for c in out}


def test_hook_registers_the_demo_source():
    (source,) = demo.pairscreen_register_market_sources()
    assert source.name == "demo"


def test_universe_shape(universe, candles):
    assert universe.label == "synthetic demo market"
    assert universe.market_source == "demo"
    assert len(universe.assets) >= 40
    assert len({a.sector for a in universe.assets}) >= 6
    classes = Counter(a.asset_class for a in universe.assets)
    assert classes["tokenized_metal"] >= 2
    assert classes["tokenized_equity"] >= 5
    assert classes["tokenized_treasury"] >= 1
    assert {"PAXG", "XAUT", "AAPLx", "MSTRx", "COINx", "NVDAx", "TSLAx"} <= set(universe.tickers)
    assert universe.cross_pairs
    assert set(candles) == set(universe.tickers)  # the demo knows every asset it lists


def test_pegs_of_tokenized_assets(universe):
    expected_threshold = {
        "tokenized_metal": 1.0,
        "tokenized_equity": 1.5,
        "tokenized_treasury": 0.5,
    }
    for asset in universe.assets:
        if not asset.is_tokenized:
            assert asset.peg is None
            continue
        assert asset.peg is not None
        assert asset.peg.sources == ("demo",)
        assert asset.peg.threshold_pct == expected_threshold[asset.asset_class]
        assert asset.peg.reference in catalogue.demo_reference_symbols()
        if asset.asset_class == "tokenized_equity":
            assert asset.ticker.endswith("x") and asset.peg.reference == asset.ticker[:-1]
        if asset.asset_class == "tokenized_metal":
            assert asset.peg.reference == "XAU"


def test_history_length_prices_and_volumes(universe, candles):
    short = [t for t, c in candles.items() if len(c.dates) < 200]
    assert short == ["BERA"], "exactly one recently listed asset"
    for ticker, c in candles.items():
        assert c.dates[-1] == np.datetime64(LAST_CLOSED, "D")
        assert np.all(np.diff(c.dates).astype(int) == 1), f"{ticker}: a day is missing"
        if ticker != "BERA":
            assert len(c.dates) >= 1100
        assert np.all(np.isfinite(c.close)) and np.all(c.close > 0)
        assert np.all(np.isfinite(c.volume)) and np.all(c.volume > 0)
    # quote-currency volumes of realistic size, bigger for bigger markets at the same price
    # level: the level scales each asset's volume (as it does on an exchange), and the
    # market's drift may carry ETH's price far enough above its catalogue level to outtrade
    # BTC on some days' markets (the market ending 2027-09-02 does), so the ranking is read
    # at the catalogue's levels
    assert 5e9 < candles["BTC"].volume[-30:].mean() < 1e11

    def at_catalogue_level(ticker: str) -> float:
        c, price = candles[ticker], catalogue.CRYPTO_BY_SYMBOL[ticker].price
        return float((c.volume[-30:] / (c.close[-30:] / price) ** 0.6).mean())

    assert at_catalogue_level("BTC") > at_catalogue_level("ETH") > at_catalogue_level("GT")
    assert 1e5 < candles["AAPLx"].volume[-30:].mean() < 1e8
    # volume reacts to the size of the move: a day's volume against the mean of the 30 days
    # before it (in logs), so that the price level's drift does not dilute it (the raw
    # correlation swings between 0.13 and 0.22 with the day the history ends; this one stays
    # near 0.44)
    c = candles["SOL"]
    moves = np.abs(np.diff(np.log(c.close)))
    days = 30
    log_volume = np.log(c.volume)
    trailing = np.convolve(log_volume, np.ones(days) / days, mode="valid")
    surprise = log_volume[days:] - trailing[:-1]
    assert np.corrcoef(moves[days - 1 :], surprise)[0, 1] > 0.3


def test_deterministic_and_stable_when_a_day_is_added(universe, monkeypatch):
    source = demo.DemoMarketSource()
    assets = [universe.asset(t) for t in ("BTC", "ADA", "PAXG", "AAPLx", "USTB", "BERA")]
    options = dict(universe.market_options)

    def fetch(until, **extra):
        return {
            c.ticker: c
            for c in source.fetch_candles(assets, {**options, **extra}, since={}, until=until)
        }

    first, again = fetch(TODAY), fetch(TODAY)
    other_seed = fetch(TODAY, seed=12345)
    a_day_later = clock.now() + timedelta(days=1)
    monkeypatch.setattr(clock, "now", lambda: a_day_later)  # today's candle has closed
    tomorrow = fetch(TODAY + timedelta(days=1))
    for ticker, c in first.items():
        np.testing.assert_array_equal(c.close, again[ticker].close)
        np.testing.assert_array_equal(c.volume, again[ticker].volume)
        # one more day appends a day; every day before it keeps its numbers
        t = tomorrow[ticker]
        assert t.dates[-1] == np.datetime64(TODAY, "D")
        common, i_first, i_next = np.intersect1d(c.dates, t.dates, return_indices=True)
        assert len(common) >= len(c.dates) - 1
        np.testing.assert_array_equal(c.close[i_first], t.close[i_next])
        np.testing.assert_array_equal(c.volume[i_first], t.volume[i_next])
        assert not np.array_equal(c.close, other_seed[ticker].close)


def test_since_returns_only_new_days_and_unknown_assets_are_skipped(universe, caplog):
    source = demo.DemoMarketSource()
    btc = universe.asset("BTC")
    ghost = Asset(ticker="GHOST", sector="x")
    with caplog.at_level(logging.WARNING):
        out = list(
            source.fetch_candles(
                [btc, ghost],
                universe.market_options,
                since={"BTC": TODAY - timedelta(days=3)},
                until=TODAY,
            )
        )
    assert [c.ticker for c in out] == ["BTC"]
    assert list(out[0].dates) == [np.datetime64(TODAY - timedelta(days=k), "D") for k in (2, 1)]
    assert "GHOST" in caplog.text
    up_to_date = list(
        source.fetch_candles(
            [btc], universe.market_options, since={"BTC": LAST_CLOSED}, until=TODAY
        )
    )
    assert up_to_date == []


def test_serves_no_unclosed_day(universe):
    """Asked for today and beyond, the source stops at yesterday: today's candle is forming."""
    source = demo.DemoMarketSource()
    later = TODAY + timedelta(days=5)
    for c in source.fetch_candles(universe.assets, universe.market_options, since={}, until=later):
        assert c.dates[-1] == np.datetime64(LAST_CLOSED, "D"), c.ticker


def test_tokenized_assets_track_their_references(universe, candles):
    for asset in universe.assets:
        if asset.peg is None:
            continue
        dates, ref = model.demo_reference_daily(asset.peg.reference, TODAY)
        token = candles[asset.ticker]
        _, i_ref, i_tok = np.intersect1d(dates, token.dates, return_indices=True)
        drift = np.abs(token.close[i_tok] / ref[i_ref] - 1)
        assert np.median(drift) < 0.005, asset.ticker
        assert drift.max() < 0.06, asset.ticker
        assert np.quantile(drift, 0.9) < asset.peg.threshold_pct / 100, asset.ticker


def test_references_move_like_their_markets():
    dates, aapl = model.demo_reference_daily("AAPL", TODAY)
    weekday = (dates.astype("int64") + 3) % 7  # 0 = Monday
    saturday = np.flatnonzero(weekday == 5)
    saturday = saturday[saturday > 0]
    np.testing.assert_array_equal(aapl[saturday], aapl[saturday - 1])  # Friday's close
    np.testing.assert_array_equal(aapl[saturday + 1][:-1], aapl[saturday][:-1])
    weekdays = np.flatnonzero(weekday[1:] < 5) + 1
    assert np.mean(aapl[weekdays] != aapl[weekdays - 1]) > 0.99
    _, gold = model.demo_reference_daily("XAU", TODAY, days=400)
    assert 0.05 < np.std(np.diff(np.log(gold))) * np.sqrt(365) < 0.35
    _, nav = model.demo_reference_daily("USTBNAV", TODAY, days=400)
    growth = nav[-1] / nav[-366] - 1
    assert np.all(np.diff(nav) > 0) and 0.03 < growth < 0.07
    with pytest.raises(KeyError):
        model.demo_reference_daily("NOPE", TODAY)


def test_intraday_prices_agree_with_daily_closes():
    day = TODAY - timedelta(days=10)
    midnight = datetime.combine(day + timedelta(days=1), datetime.min.time(), UTC)
    _, closes, _ = model.demo_daily("AAPLx", day)
    assert model.demo_price_at("AAPLx", midnight) == pytest.approx(closes[-1], rel=1e-12)
    _, closes, _ = model.demo_daily("BTC", day)
    assert model.demo_price_at("BTC", midnight) == pytest.approx(closes[-1], rel=1e-12)
    # a stock quote on a Saturday is Friday's close, as of Friday's close
    saturday = TODAY - timedelta(days=(TODAY.weekday() - 5) % 7 or 7)
    friday = saturday - timedelta(days=1)
    price, as_of = model.demo_reference_at(
        "AAPL", datetime.combine(saturday, datetime.min.time(), UTC) + timedelta(hours=12)
    )
    _, ref = model.demo_reference_daily("AAPL", friday)
    assert price == ref[-1]
    assert as_of == datetime.combine(friday, datetime.min.time(), UTC) + timedelta(hours=21)
    # during a session the quote is fresh, and a token tracks its reference every hour
    tuesday = friday - timedelta(days=3)
    for hour in range(24):
        at = datetime.combine(tuesday, datetime.min.time(), UTC) + timedelta(hours=hour, minutes=7)
        ref_price, ref_as_of = model.demo_reference_at("AAPL", at)
        if 15 <= hour < 21:
            assert ref_as_of == at
        assert abs(model.demo_price_at("AAPLx", at) / ref_price - 1) < 0.06
    again = model.demo_reference_at("AAPL", at)
    assert again == (ref_price, ref_as_of)


def _hurst(window: np.ndarray) -> float:
    from arch.unitroot import VarianceRatio

    vr = VarianceRatio(window, lags=20, trend="c", debiased=True, overlap=True).vr
    return 0.5 + np.log(vr) / (2 * np.log(20))


def _first_failure(close_a: np.ndarray, close_b: np.ndarray) -> str:
    """The filter of docs/methodology.md, checked in order with the reference implementations."""
    from pairscan_rmr import alternating_touches, range_width
    from statsmodels.tsa.stattools import adfuller

    if len(close_a) < 200:
        return "insufficient_history"
    window = np.log(close_a / close_b)[-540:]
    if not _hurst(window) < 0.5:
        return "hurst"
    if not adfuller(window, regression="c", autolag="AIC")[1] < 0.7:
        return "adf"
    if not range_width(window) >= 0.40:
        return "range_width"
    low, high = alternating_touches(window)
    if low < 2 or high < 2:
        return "touches"
    return ""


def test_screen_mix_has_survivors_and_every_rejection_reason(universe, candles):
    outcome: Counter[str] = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in universe.screened_pairs():
            ca, cb = candles[a.ticker], candles[b.ticker]
            _, ia, ib = np.intersect1d(ca.dates, cb.dates, return_indices=True)
            outcome[_first_failure(ca.close[ia], cb.close[ib]) or "survivor"] += 1
    total = sum(outcome.values())
    print(dict(outcome))
    for reason in REASONS:
        assert outcome[reason] >= 1, f"no pair rejected for {reason}: {dict(outcome)}"
    assert 0.03 <= outcome["survivor"] / total <= 0.25, dict(outcome)
    assert outcome["hurst"] == max(outcome.values()), "most rejections should be hurst"
