"""The screen as a table: ``Accept: text/csv`` on ``/screen/latest`` and ``/pairs``, and
``pairscreen screen export``. The CSV parses with the standard ``csv`` module and holds the
JSON's survivors row for row, every metric and both backtest legs, to the bit."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from pairscreen.api.negotiation import prefers_csv
from tests.conftest import make_client

BASE = "/api/v1"
CSV = {"Accept": "text/csv"}


def parse(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def same(cell: str, value: object) -> bool:
    """A CSV cell holds the JSON value: empty for null, the same number, the same text."""
    if value is None:
        return cell == ""
    if isinstance(value, bool | str):
        return cell == (json.dumps(value) if isinstance(value, bool) else value)
    number = float(cell)
    return number == value or (math.isnan(number) and math.isnan(float(value)))  # type: ignore[arg-type]


def assert_rows_match(rows: list[dict[str, str]], screen: dict) -> None:
    assert len(rows) == screen["n_survivors"] == len(screen["survivors"]) > 0
    for rank, (row, survivor) in enumerate(zip(rows, screen["survivors"], strict=True), 1):
        a, b = survivor["pair"]
        assert (row["rank"], row["pair"], row["a"], row["b"]) == (str(rank), f"{a}/{b}", a, b)
        assert row["sector"] == survivor["sector"]
        assert same(row["score"], survivor["score"])
        for name, value in survivor["metrics"].items():
            assert same(row[name], value), (row["pair"], name, row[name], value)
        backtest = survivor["backtest"]
        assert same(row["backtest_history_days"], backtest["history_days"])
        for leg in ("A", "B"):
            for name in ("base_leg", "growth_pct", "n_trades", "max_drawdown_pct"):
                assert same(row[f"backtest_{leg}_{name}"], backtest[leg][name]), (leg, name)
            buy_hold = backtest[leg]["buy_hold"]
            assert same(
                row[f"backtest_{leg}_buy_hold_growth_pct"], buy_hold and buy_hold["growth_pct"]
            )


def test_screen_latest_as_csv_matches_the_json_row_for_row(client, keys):
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    r = client.get(f"{BASE}/screen/latest", keys.personal, headers=CSV)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/csv; charset=utf-8"
    assert r.headers["vary"] == "Accept, Accept-Encoding"
    assert r.headers["content-disposition"].startswith('attachment; filename="pairscreen-')
    rows = parse(r.text)
    assert_rows_match(rows, screen)
    header = next(csv.reader(io.StringIO(r.text)))
    for name in ("half_life_days", "coint_pvalue", "hedge_ratio", "return_correlation"):
        assert name in header
        assert all(row[name] != "" for row in rows) or name == "half_life_days"


def test_pairs_as_csv_is_the_same_table(client, keys):
    whole = client.get(f"{BASE}/screen/latest", keys.personal, headers=CSV).text
    pairs = client.get(f"{BASE}/pairs", keys.personal, headers=CSV)
    assert pairs.status_code == 200 and pairs.headers["content-type"].startswith("text/csv")
    assert pairs.text == whole
    compact = client.get(f"{BASE}/pairs", keys.personal).json()
    assert [row["pair"] for row in parse(whole)] == [p["pair"] for p in compact["pairs"]]


def test_json_stays_the_default_answer(client, keys):
    for accept in (None, "*/*", "application/json", "application/json, text/csv;q=0.5"):
        headers = {"Accept": accept} if accept else {}
        r = client.get(f"{BASE}/screen/latest", keys.personal, headers=headers)
        assert r.headers["content-type"].startswith("application/json"), accept
        assert r.headers["vary"] == "Accept, Accept-Encoding"
        assert "survivors" in r.json()


def test_csv_of_a_filtered_page_is_refused_in_a_sentence(client, keys):
    for query in ("zone=bottom", "limit=5", "sector=majors&min_score=1"):
        r = client.get(f"{BASE}/pairs?{query}", keys.personal, headers=CSV)
        assert r.status_code == 406, query
        assert r.headers["content-type"].startswith("text/plain")
        assert "text/csv is the whole screen" in r.text
    page = client.get(f"{BASE}/pairs?limit=5", keys.personal)
    assert page.status_code == 200 and page.json()["count"] <= 5


def test_csv_asks_for_the_same_access_as_json(client, keys):
    r = client.get(f"{BASE}/screen/latest", None, headers=CSV)
    assert r.status_code == 401 and r.headers["content-type"].startswith("text/plain")
    r = client.get(f"{BASE}/pairs", keys.no_tier, headers=CSV)
    assert r.status_code == 403 and r.headers["content-type"].startswith("text/plain")


def test_csv_before_the_first_screen_is_a_plain_404(empty_runtime):
    from pairscreen.access import accounts
    from pairscreen.db.connection import database

    with database.connection_context():
        accounts.create_user("a@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("a@example.com")
    c = make_client(empty_runtime)
    with c.client:
        for path in ("/screen/latest", "/pairs"):
            r = c.get(f"{BASE}{path}", key, headers=CSV)
            assert r.status_code == 404
            assert "No screen has been published yet" in r.text


@pytest.mark.parametrize(
    ("accept", "csv_wanted"),
    [
        ("text/csv", True),
        ("text/csv;q=0.9, application/json;q=0.5", True),
        ("text/csv, */*;q=0.8", True),
        ("text/csv, */*", True),
        ("text/*", True),
        ("text/csv, application/json", False),
        ("application/json;q=0.9, text/csv;q=0.4", False),
        ("text/csv;q=0", False),
        ("*/*", False),
        ("", False),
        (None, False),
        ("text/plain", False),
        ("text/csv;q=oops", False),
    ],
)
def test_accept_negotiation(accept, csv_wanted):
    assert prefers_csv(accept) is csv_wanted


def test_cli_exports_the_latest_screen_as_csv_and_json(cli, client, keys, tmp_path: Path):
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    served_csv = client.get(f"{BASE}/screen/latest", keys.personal, headers=CSV).text
    code, out, err = cli("screen", "export", "--format", "csv", str(tmp_path / "s.csv"))
    assert (code, err) == (0, "")
    assert f"({screen['n_survivors']} survivors)" in out and "s.csv (csv)" in out
    written = (tmp_path / "s.csv").read_bytes().decode("utf-8")
    assert written == served_csv
    assert_rows_match(parse(written), screen)
    code, out, err = cli("screen", "export", "--format", "json", str(tmp_path / "s.json"))
    assert code == 0
    assert json.loads((tmp_path / "s.json").read_text()) == screen
    code, out, err = cli("screen", "export", "--format", "csv", "-")
    assert (code, err) == (0, "") and out == served_csv


def test_cli_export_errors_are_one_line(cli, capsys, tmp_path: Path):
    code, _, err = cli("screen", "export", "--format", "xml", str(tmp_path / "s.xml"))
    assert code == 2 and "invalid choice: 'xml'" in err and err.count("\n") == 1
    code, _, err = cli("screen", "export", str(tmp_path / "missing" / "s.csv"))
    assert code == 1 and err.startswith("pairscreen: error:") and err.count("\n") == 1


def test_cli_export_before_the_first_screen(empty_runtime, capsys, tmp_path: Path):
    from pairscreen.cli import main

    url = empty_runtime.settings.database_url
    code = main(["--database-url", url, "screen", "export", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert code == 3 and "No screen has been published yet" in err and err.count("\n") == 1
