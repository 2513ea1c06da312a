"""Every row of a CSV export is understood or named: real exports' variants through ``data
sync`` on a real SQLite file. Each variant is stored exactly as the source meant it, or
refused with the file and the line named and nothing of that asset written, while the other
asset syncs. The rows are real Binance BTC/USDT and ETH/USDT daily closes of December 2023
(tests/fixtures/sync_realdata, see its README), written in each export's way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime

import pytest

from pairscreen import clock
from pairscreen.cli import exits
from tests.support.csv_world import CsvWorld, csv_world, real_rows, universe_text

# Pinned so that 2023-12-31 is the last closed day: 2024-01-01's bar is still forming.
NOW = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
BTC = [row.split(",") for row in real_rows("sync_realdata", "BTC", since="2023-12-01")]
ETH = real_rows("sync_realdata", "ETH", since="2023-12-01")
REAL = [(d, float(c)) for d, c, _ in BTC]  # what every understood variant stores
HEADER = "date,close,volume"


@pytest.fixture()
def world(
    empty_database_url: str,
    tmp_path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[CsvWorld]:
    monkeypatch.setattr(clock, "now", lambda: NOW)
    yield csv_world(
        empty_database_url, tmp_path, capsys, universe_text(("BTC", "crypto"), ("ETH", "crypto"))
    )


def _text(lines: list[str], end: str = "\n") -> bytes:
    return (end.join(lines) + end).encode("utf-8")


def _rows(cell: Callable[[str, str, str], str] = lambda d, c, v: f"{d},{c},{v}") -> list[str]:
    return [cell(d, c, v) for d, c, v in BTC]


def _epoch(day: str) -> int:
    return int(datetime.combine(date.fromisoformat(day), datetime.min.time(), UTC).timestamp())


def _one_bad(index: int, row: str) -> bytes:
    """The real file with its row ``index`` (line ``index + 2``) replaced by ``row``."""
    rows = _rows()
    rows[index] = row
    return _text([HEADER, *rows])


# (name, the file's bytes, a warning the report names, or None)
UNDERSTOOD: list[tuple[str, bytes, str | None]] = [
    ("plain", _text([HEADER, *_rows()]), None),
    ("utf8_bom_and_crlf", b"\xef\xbb\xbf" + _text([HEADER, *_rows()], "\r\n"), None),
    (
        # Yahoo's seven columns; Adj Close is the close. Its Close is set apart from it on
        # purpose (as a dividend-paying stock's is), to show which one is stored.
        "yahoo_adj_close",
        _text(
            [
                "Date,Open,High,Low,Close,Adj Close,Volume",
                *_rows(lambda d, c, v: f"{d},{c},{c},{c},{float(c) * 1.02!r},{c},{v}"),
            ]
        ),
        None,
    ),
    (
        "timestamp_milliseconds",
        _text(["timestamp,close,volume", *_rows(lambda d, c, v: f"{_epoch(d) * 1000},{c},{v}")]),
        None,
    ),
    (
        "timestamp_seconds",
        _text(["timestamp,close,volume", *_rows(lambda d, c, v: f"{_epoch(d)},{c},{v}")]),
        None,
    ),
    (
        "iso_timestamps",
        _text([HEADER, *_rows(lambda d, c, v: f"{d}T00:00:00Z,{c},{v}")]),
        None,
    ),
    (
        "exponent_notation",
        _text([HEADER, *_rows(lambda d, c, v: f"{d},{float(c):.16e},{v}")]),
        None,
    ),
    ("newest_first", _text([HEADER, *reversed(_rows())]), None),
    (
        "columns_reordered_and_extra",
        _text(["Symbol, Volume ,CLOSE,Date", *_rows(lambda d, c, v: f"BTCUSDT,{v},{c},{d}")]),
        None,
    ),
    (
        "the_file_appended_twice",
        _text([HEADER, *_rows(), *_rows()]),
        "BTC: source rows left out (BTC.csv): 31 repeating a day with the same values "
        "(stored once)",
    ),
    (
        "an_unfinished_bar",
        _text([HEADER, *_rows(), "2024-01-01,42452.49,1234.5"]),
        "BTC: source rows left out (BTC.csv): 1 dated after the last closed day 2023-12-31 "
        "(not closed yet)",
    ),
]

FIRST_CLOSE = BTC[0][1]  # 2023-12-01
# (name, the file's bytes, what the refusal names after "refused: BTC: ")
REFUSED: list[tuple[str, bytes, str]] = [
    (
        "unquoted_thousands_separator",
        _text([HEADER, *_rows(lambda d, c, v: f"{d},{float(c):,.2f},{v}")]),
        "BTC.csv: 31 rows not understood: line 2 has 4 fields, the header 3 (a thousands "
        "separator in an unquoted number?); line 3 has 4 fields",
    ),
    (
        "quoted_thousands_separator",
        _text([HEADER, *_rows(lambda d, c, v: f'{d},"{float(c):,.2f}",{v}')]),
        f"BTC.csv: 31 rows not understood: line 2: close '{float(FIRST_CLOSE):,.2f}' is not a "
        "finite positive number (a thousands separator or a decimal comma?)",
    ),
    (
        "decimal_comma",
        _one_bad(3, '2023-12-04,"41980,98",1'),
        "BTC.csv: 1 row not understood: line 5: close '41980,98' is not a finite positive "
        "number (a thousands separator or a decimal comma?); nothing written for BTC",
    ),
    (
        "nan_close",
        _one_bad(4, "2023-12-05,NaN,1"),
        "BTC.csv: 1 row not understood: line 6: close 'NaN' is not a finite positive number",
    ),
    ("inf_close", _one_bad(4, "2023-12-05,inf,1"), "line 6: close 'inf' is not a finite"),
    ("overflowing_close", _one_bad(4, "2023-12-05,1e999,1"), "line 6: close '1e999' is not"),
    ("empty_close", _one_bad(4, "2023-12-05,,1"), "line 6: close is empty"),
    ("null_close_yahoo", _one_bad(4, "2023-12-05,null,null"), "line 6: close 'null' is not"),
    ("zero_close", _one_bad(4, "2023-12-05,0,1"), "line 6: close '0' is not a finite positive"),
    ("negative_close", _one_bad(4, "2023-12-05,-44,1"), "line 6: close '-44' is not a finite"),
    (
        "mt4_dotted_date",
        _one_bad(4, "2023.12.05,44000,1"),
        "line 6: date '2023.12.05' is not an ISO day (YYYY-MM-DD)",
    ),
    ("us_date", _one_bad(4, "12/05/2023,44000,1"), "line 6: date '12/05/2023' is not an ISO day"),
    (
        "impossible_date",
        _one_bad(4, "2023-11-31,44000,1"),
        "line 6: date '2023-11-31' is not a day of the calendar",
    ),
    (
        "a_day_repeated_with_another_close",
        _text([HEADER, *_rows(), f"2023-12-05,{float(BTC[4][1]) + 1!r},{BTC[4][2]}"]),
        f"BTC.csv: 1 row not understood: line 33 gives 2023-12-05 again with close "
        f"{float(BTC[4][1]) + 1:.10g} (line 6: {float(BTC[4][1]):.10g})",
    ),
    (
        "a_cut_off_last_row",
        _text([HEADER, *_rows()[:-1], "2023-12-31,42283.5"]),
        "line 32 has 2 fields, the header 3 (a cut-off row?)",
    ),
    (
        "volume_with_a_thousands_separator",
        _one_bad(4, '2023-12-05,44000,"1,234.5"'),
        "line 6: volume '1,234.5' is not a finite number of at least 0 (a thousands separator",
    ),
    ("empty_file", b"", "BTC.csv is empty; nothing written for BTC"),
    ("header_only", b"date,close,volume\r\n", "BTC.csv has its header and no rows; nothing"),
    (
        "utf16_export",
        "\n".join([HEADER, *_rows()]).encode("utf-16"),
        "BTC.csv is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8",
    ),
    (
        "latin1_bytes",
        _text(["date,close,volume,note", *[f"{r},ok" for r in _rows()[:2]]])
        + "2023-12-03,39472.2,1,Clôture\n".encode("latin-1"),
        "BTC.csv is not UTF-8: line 4 holds the byte 0xF4 (Latin-1 or Windows-1252?)",
    ),
    (
        "mt4_export_without_header",
        _text(_rows(lambda d, c, v: f"{d.replace('-', '.')},00:00,{c},{c},{c},{c},{v}")),
        f"BTC.csv has no header: its first line '2023.12.01,00:00,{FIRST_CLOSE}",
    ),
    (
        "semicolon_separated",
        _text(["date;close;volume", *_rows(lambda d, c, v: f"{d};{c};{v}")]),
        "names no date (or timestamp) and no close column; the first line must name the "
        "columns, e.g. date,close,volume (its fields are separated by semicolons? only commas "
        "are read)",
    ),
    (
        "timestamp_in_microseconds",
        _text(["timestamp,close,volume", *_rows(lambda d, c, v: f"{_epoch(d) * 10**6},{c},{v}")]),
        "line 2: timestamp 1701388800000000 is neither seconds (10^8 to 10^10) nor "
        "milliseconds (10^11 to 10^13) since 1970; its unit is unknown",
    ),
    (
        "both_date_and_timestamp",
        _text(["timestamp,date,close", *_rows(lambda d, c, v: f"{_epoch(d)},{d},{c}")]),
        "has both a date and a timestamp column; keep one",
    ),
]


@pytest.mark.parametrize(("name", "data", "warning"), UNDERSTOOD, ids=[v[0] for v in UNDERSTOOD])
def test_a_real_export_variant_is_stored_exactly(world, name, data, warning):
    world.write_bytes("BTC", data)
    world.write("ETH", ETH)
    code, out, err = world.run("data", "sync")
    assert code == exits.OK, out + err
    assert world.stored("BTC") == REAL
    assert len(world.stored("ETH")) == 31
    assert "refused:" not in out and "held:" not in out
    if warning is not None:
        assert f"warning: {warning}" in out.splitlines()


@pytest.mark.parametrize(("name", "data", "named"), REFUSED, ids=[v[0] for v in REFUSED])
def test_a_malformed_export_is_refused_naming_the_file_and_line(world, name, data, named):
    world.write_bytes("BTC", data)
    world.write("ETH", ETH)
    code, out, err = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT, out + err
    (refused,) = [line for line in out.splitlines() if line.startswith("refused:")]
    assert refused.startswith("refused: BTC: ")
    assert named in refused
    assert refused.endswith("; nothing written for BTC")
    assert err.strip() == (
        "pairscreen: error: files or rows that could not be read for BTC: nothing was written "
        "for it (see above)"
    )
    assert world.stored("BTC") == []  # nothing partial
    assert len(world.stored("ETH")) == 31  # the other asset synced
    assert len(out.splitlines()) <= 4  # a few named lines, not one per row


def test_731_rows_with_thousands_separators_are_one_line_naming_the_first(world):
    """The operator's Binance export: every close above 1,000 written with a separator."""
    btc = real_rows("csv_rows", "BTC", since="2021-12-31", through="2023-12-31")
    assert len(btc) == 731
    world.write(
        "BTC",
        [f"{d},{float(c):,.2f},{v}" for d, c, v in (row.split(",") for row in btc)],
    )
    world.write("ETH", ETH)
    code, out, _ = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT
    refused = [line for line in out.splitlines() if line.startswith("refused:")]
    field = "has 4 fields, the header 3 (a thousands separator in an unquoted number?)"
    assert refused == [
        f"refused: BTC: BTC.csv: 731 rows not understood: line 2 {field}; line 3 {field}; "
        f"line 4 {field}; and 728 more; nothing written for BTC"
    ]
    assert world.stored("BTC") == []


def test_an_empty_file_beside_good_ones_is_named_and_the_good_ones_sync(
    empty_database_url, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(clock, "now", lambda: NOW)
    world = csv_world(
        empty_database_url,
        tmp_path,
        capsys,
        universe_text(("GOOD", "crypto"), ("EMPTY", "crypto"), ("NEG", "crypto")),
    )
    world.write("GOOD", _rows())
    world.write_bytes("EMPTY", b"date,close\n"[:0])
    world.write("NEG", [*_rows()[:3], "2023-12-04,-41980.98,1", *_rows()[4:]])
    code, out, err = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT == 7
    lines = out.splitlines()
    assert "refused: EMPTY: EMPTY.csv is empty; nothing written for EMPTY" in lines
    assert (
        "refused: NEG: NEG.csv: 1 row not understood: line 5: close '-41980.98' is not a "
        "finite positive number; nothing written for NEG" in lines
    )
    assert "files or rows that could not be read for EMPTY, NEG: nothing was written" in err
    assert world.stored("GOOD") == REAL
    assert world.stored("EMPTY") == [] and world.stored("NEG") == []


def test_a_bad_row_in_a_refreshed_file_keeps_the_stored_history_as_it_was(world):
    world.write("BTC", _rows()[:20])
    world.write("ETH", ETH[:20])
    assert world.run("data", "sync")[0] == exits.OK
    before = world.stored("BTC")
    assert before == REAL[:20]
    rows = _rows()
    rows[25] = "2023-12-26,43,578.8,1"  # one new row with a separator: line 27
    world.write("BTC", rows)
    world.write("ETH", ETH)
    code, out, _ = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT
    assert "refused: BTC: BTC.csv: 1 row not understood: line 27 has 4 fields" in out
    assert world.stored("BTC") == before  # not one of the 10 good new rows either
    assert len(world.stored("ETH")) == 31
    world.write("BTC", _rows())  # the file fixed: the next sync adds the new days
    code, out, _ = world.run("data", "sync")
    assert code == exits.OK, out
    assert world.stored("BTC") == REAL
