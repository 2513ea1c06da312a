"""Every number is dated wherever it is served; nothing short of data is a traceback.

On real closes (``tests/fixtures/calendar_days``: Binance BTC every day, Yahoo AAPL on trading
days; ``tests/fixtures/stale_closes``: Binance PAXG to 2023-06-30), on 2024-01-01:

* ETH's closes are cut at 2023-06-30 (the rows after are left out of the copy), so BTC/ETH
  survives (the universe allows crypto 400 days and screens with a filter that passes every
  pair) while its data ends 182 days before the screen's newest close (BTC/AAPL's, 2023-12-29):
  ``/pairs``, ``/screen/latest``, its CSV and the verdict endpoint date it and flag it;
* AAPL keeps its closes from 2023-05-01 on: BTC/AAPL has more than 200 calendar days of common
  history but fewer than 200 closes in its window, so ``hurst_rs`` is null with its reason in
  ``/pair`` and in the screen, and ``evaluate --publish`` prints no traceback;
* PAXG (a gold token, 5 days allowed) is stale: its age is the same number in the sync report,
  ``/assets``, its peg sample's reason and the website's count.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.sync import sync_candles
from pairscreen.market.sync_report import SyncReport
from pairscreen.pegs.sampling import sample_pegs
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
from tests.conftest import ContractClient, make_client
from tests.plugins import accept_all_filter
from tests.support.cli import newcomer_env, run_cli
from tests.support.databases import TEST_DATABASE_URL

FIXTURES = Path(__file__).parent / "fixtures"
NOW = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
ETH_LAST = date(2023, 6, 30)
AAPL_LAST = date(2023, 12, 29)  # a Friday: the last trading day of 2023
NEWEST = AAPL_LAST  # BTC/AAPL's last common close: the screen's newest
PAXG_LAST = date(2023, 6, 30)
AAPL_FROM = "2023-05-01"

ASSETS = """
[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "ETH"
sector = "majors"

[[asset]]
ticker = "AAPL"
sector = "equities"
asset_class = "equity"

[[asset]]
ticker = "PAXG"
sector = "gold"
asset_class = "tokenized_metal"
peg = { reference = "XAU", sources = ["csv"] }
"""

UNIVERSE = (
    """
[components]
market_source = "csv"

[plugins.csv_source]
path = "prices"
volume_unit = "base"

[staleness]
crypto = 400
equity = 400

[pairs]
cross = [["BTC", "AAPL"], ["PAXG", "BTC"]]
"""
    + "{screen}"
    + ASSETS
)

pytestmark = pytest.mark.skipif(
    bool(TEST_DATABASE_URL), reason="one SQLite world per module (the API is the same)"
)


def _copy(source: Path, target: Path, keep: str) -> None:
    """The rows of ``source`` whose date passes ``keep`` (``<=2023-06-30``, ``>=2023-05-01``)."""
    op, day = keep[:2], keep[2:]
    lines = source.read_text(encoding="utf-8").splitlines()
    rows = [r for r in lines[1:] if (r[:10] <= day if op == "<=" else r[:10] >= day)]
    target.write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8")


def _prices(folder: Path) -> None:
    prices = folder / "prices"
    prices.mkdir()
    shutil.copy(FIXTURES / "calendar_days" / "BTC.csv", prices / "BTC.csv")
    _copy(FIXTURES / "calendar_days" / "ETH.csv", prices / "ETH.csv", f"<={ETH_LAST}")
    _copy(FIXTURES / "calendar_days" / "AAPL.csv", prices / "AAPL.csv", f">={AAPL_FROM}")
    shutil.copy(FIXTURES / "stale_closes" / "PAXG.csv", prices / "PAXG.csv")


@dataclass(frozen=True)
class World:
    folder: Path
    rt: Runtime
    key: str
    synced: SyncReport


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("dated")
    _prices(folder)
    universe = folder / "universe.toml"
    universe.write_text(
        UNIVERSE.replace("{screen}", '\n[screen]\nfilter = "accept_all"\n'), encoding="utf-8"
    )
    url = f"sqlite:///{folder / 'pairscreen.sqlite3'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clock, "now", lambda: NOW)
        settings = load_settings(data_dir=folder, database_url=url, universe_path=universe)
        rt = build_runtime(settings, extra_plugins=(accept_all_filter,))
        from pairscreen.access import accounts

        with database.connection_context():
            synced = sync_candles(rt.universe, rt.plugins)
            run_screen(rt, processes=1)
            sample_pegs(rt)
            accounts.create_user("dated@example.com", "personal", lifetime=True)
            key = accounts.rotate_key("dated@example.com")
        database.close()
        yield World(folder, rt, key, synced)
    database.close()


@pytest.fixture()
def http(world: World) -> Iterator[ContractClient]:
    c = make_client(world.rt)
    with c.client:
        yield c
    database.close()


def _iso(day: date) -> str:
    return f"{day}T00:00:00+00:00"


BEHIND = {
    "BTC/ETH": (ETH_LAST, True, (NEWEST - ETH_LAST).days),
    "BTC/AAPL": (AAPL_LAST, False, 0),
}


def test_pairs_items_carry_their_data_time_and_the_early_end_is_flagged(world, http) -> None:
    whole = http.get("/api/v1/pairs", world.key).json()
    paged = http.get("/api/v1/pairs?limit=1", world.key).json()  # from the stored blocks
    items = {p["pair"]: p for p in whole["pairs"]}
    assert set(items) == set(BEHIND)  # PAXG/BTC is stale, rejected
    for pair, (last, behind, days) in BEHIND.items():
        item = items[pair]
        assert (item["data_time"], item["data_behind"], item["data_behind_days"]) == (
            _iso(last),
            behind,
            days,
        ), pair
    assert items["BTC/ETH"]["data_behind_days"] == 182
    (first,) = paged["pairs"]
    assert first == items[first["pair"]]  # the page's item is the whole body's, to the field


def test_the_screen_and_its_csv_date_every_survivor(world, http) -> None:
    screen = http.get("/api/v1/screen/latest", world.key).json()
    assert screen["data_time"]["newest"] == _iso(NEWEST)
    survivors = {"/".join(s["pair"]): s for s in screen["survivors"]}
    for pair, (last, behind, days) in BEHIND.items():
        s = survivors[pair]
        assert (s["data_time"], s["data_behind"], s["data_behind_days"]) == (
            _iso(last),
            behind,
            days,
        )
    r = http.get("/api/v1/screen/latest", world.key, headers={"Accept": "text/csv"})
    rows = {row["pair"]: row for row in csv.DictReader(io.StringIO(r.text))}
    for pair, (last, behind, days) in BEHIND.items():
        assert rows[pair]["data_time"] == _iso(last)
        assert rows[pair]["data_behind"] == json.dumps(behind)
        assert rows[pair]["data_behind_days"] == str(days)


def test_the_verdict_endpoint_dates_the_pair_survivor_or_not(world, http) -> None:
    eth = http.get("/api/v1/screen/latest/pairs/ETH/BTC", world.key).json()
    assert eth["reversed"] is True and eth["passes_filter"] is True
    assert (eth["data_time"], eth["data_behind"], eth["data_behind_days"]) == (
        _iso(ETH_LAST),
        True,
        182,
    )
    # A stale pair was never aligned: no last common close, and its reason says why.
    stale = http.get("/api/v1/screen/latest/pairs/PAXG/BTC", world.key).json()
    assert stale["reason_code"] == "stale"
    assert (stale["data_time"], stale["data_behind"], stale["data_behind_days"]) == (
        None,
        None,
        None,
    )


def test_a_mixed_calendar_pair_with_few_closes_has_hurst_rs_null_with_its_reason(
    world, http
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clock, "now", lambda: NOW)
        snap = http.get("/api/v1/pair/BTC/AAPL?bt=90", world.key).json()
    closes = snap["windows"]["metric"]["observations"]
    assert closes < 200 and snap["windows"]["metric"]["days"] == 540
    assert snap["metrics"]["hurst_rs"] is None
    assert snap["metrics"]["hurst_rs_reason"] == (
        f"W holds {closes} closes, at least 200 are needed"
    )
    assert snap["metrics"]["hurst"] is not None  # the variance ratio still has its number
    # the screen computed the same for its survivor, instead of stopping
    screen = http.get("/api/v1/screen/latest", world.key).json()
    (survivor,) = [s for s in screen["survivors"] if s["pair"] == ["BTC", "AAPL"]]
    assert survivor["metrics"]["hurst_rs"] is None
    assert survivor["metrics"]["hurst_rs_reason"] == snap["metrics"]["hurst_rs_reason"]


def test_evaluate_publish_on_short_mixed_histories_prints_no_traceback(
    world, tmp_path: Path
) -> None:
    """The command as a person runs it, on the same closes with the built-in filter: as-of
    days where BTC/AAPL has its 200 calendar days but fewer than 200 closes."""
    _prices(tmp_path)
    universe = tmp_path / "universe.toml"
    universe.write_text(UNIVERSE.replace("{screen}", ""), encoding="utf-8")
    env = {
        **newcomer_env(tmp_path),
        "PAIRSCREEN_DATA_DIR": str(tmp_path),
        "PAIRSCREEN_UNIVERSE": str(universe),
    }
    synced = run_cli("--quiet", "data", "sync", env=env)
    assert synced.returncode == 0, synced.stderr
    argv = ("--from", "2023-11-20", "--to", "2023-12-25", "--every", "5", "--horizon", "5")
    done = run_cli("--quiet", "evaluate", *argv, "--publish", env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "hurst_rs" not in done.stderr, done.stderr
    assert done.stdout.startswith("8 as-of days from 2023-11-20 to 2023-12-25 every 5 days, ")


def test_one_stale_assets_age_is_the_same_number_everywhere(world, http) -> None:
    age = (NOW.date() - PAXG_LAST).days  # whole days from the close's day to today
    assert age == 185
    headline = world.synced.lines()[0]
    assert headline == (
        f"1 of 4 assets is stale; the oldest is PAXG, last close {PAXG_LAST} "
        f"({age} days old, limit 5 days)"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clock, "now", lambda: NOW)
        assets = {a["ticker"]: a for a in http.get("/api/v1/assets", world.key).json()["assets"]}
        pair = http.get("/api/v1/pair/PAXG/BTC?bt=90", world.key).json()
    paxg = assets["PAXG"]
    assert (paxg["age_days"], paxg["stale"]) == (age, True)
    reason = paxg["peg"]["reason"]  # the sample's close, observed at 24:00 UTC of its day
    assert reason.startswith(f"PAXG: token price last observed {PAXG_LAST + timedelta(days=1)}")
    assert f", {age} days ago (its class allows 5 days)" in reason, reason
    assert f"PAXG has no close since {PAXG_LAST} ({age} days)" in pair["filter_reason"]
    # The website counts a close's age as the API does (format.js, run by Node at NOW).
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the website's count cannot be run here")
    script = (
        "import(process.argv[1]).then(f => console.log(JSON.stringify("
        "[f.ageDays(process.argv[2], Date.parse(process.argv[3])),"
        " f.closedAgo(process.argv[2], Date.parse(process.argv[3]))])))"
    )
    module = Path(__file__).parents[1] / "pairscreen" / "web" / "static" / "js" / "format.js"
    copied = world.folder / "format.mjs"  # an ES module by its name, for Node
    shutil.copy(module, copied)
    out = subprocess.run(
        [node, "-e", script, str(copied), _iso(PAXG_LAST), NOW.isoformat()],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert json.loads(out) == [age, f"{age} days old"]


BROKEN_METRIC = """
from pairscreen import MetricField, hookimpl


class Broken:
    name = "broken"
    fields = (MetricField("broken_value", nullable=True),)

    def compute(self, panel):
        raise ZeroDivisionError("a bug in the plugin")


@hookimpl
def pairscreen_register_metrics():
    return [Broken()]
"""


def test_a_genuine_metric_bug_is_one_line_naming_its_plugin_the_traceback_with_verbose(
    world, tmp_path: Path
) -> None:
    _prices(tmp_path)
    universe = tmp_path / "universe.toml"
    # Every pair survives (accept_all), so the describing metric runs: as in a screen, a
    # metric no rule reads is computed for the pairs some rule set passes, and raises there.
    chosen = UNIVERSE.replace(
        'market_source = "csv"', 'market_source = "csv"\nfilter = "accept_all"'
    )
    universe.write_text(chosen.replace("{screen}", ""), encoding="utf-8")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "broken_metric.py").write_text(BROKEN_METRIC, encoding="utf-8")
    shutil.copy(Path(accept_all_filter.__file__), plugins / "accept_all_filter.py")
    env = {
        **newcomer_env(tmp_path),
        "PAIRSCREEN_DATA_DIR": str(tmp_path),
        "PAIRSCREEN_UNIVERSE": str(universe),
        "PAIRSCREEN_PLUGINS_DIR": str(plugins),
    }
    assert run_cli("--quiet", "data", "sync", env=env).returncode == 0
    argv = ("evaluate", "--from", "2023-12-20", "--to", "2023-12-25", "--horizon", "5")
    quiet = run_cli("--quiet", *argv, env=env)
    # A raising metric stops evaluate as it stops screen run: status 6, one line naming it.
    assert quiet.returncode == 6, quiet.stderr
    assert quiet.stderr == (
        "pairscreen: error: plugin 'local:broken_metric.py' failed: metric 'broken' raised "
        "ZeroDivisionError: a bug in the plugin (run again with --verbose for the traceback)\n"
    )
    verbose = run_cli("--verbose", "--quiet", *argv, env=env)
    assert verbose.returncode == 6 and "Traceback" in verbose.stderr
    assert 'raise ZeroDivisionError("a bug in the plugin")' in verbose.stderr
