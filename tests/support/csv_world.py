"""A ``csv`` universe over a folder of price files, a database, and ``pairscreen`` run on both
in-process: what the CSV row and held-move tests share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pairscreen.cli import main
from pairscreen.db.connection import database
from pairscreen.db.models import Candle

FIXTURES = Path(__file__).parent.parent / "fixtures"


def real_rows(folder: str, ticker: str, *, since: str = "", through: str = "9999") -> list[str]:
    """Rows of ``tests/fixtures/<folder>/<ticker>.csv`` (without its header) between two days."""
    lines = (FIXTURES / folder / f"{ticker}.csv").read_text(encoding="utf-8").splitlines()[1:]
    return [line for line in lines if since <= line[:10] <= through]


def universe_text(*assets: tuple[str, str], volume_unit: str = "base") -> str:
    """A csv universe of ``(ticker, asset_class)`` assets, each in a sector of its class."""
    out = '[components]\nmarket_source = "csv"\n\n'
    out += f'[plugins.csv_source]\npath = "prices"\nvolume_unit = "{volume_unit}"\n'
    for ticker, asset_class in assets:
        out += (
            f'\n[[asset]]\nticker = "{ticker}"\nsector = "{asset_class}"\n'
            f'asset_class = "{asset_class}"\n'
        )
    return out


@dataclass
class CsvWorld:
    """The prices folder, the universe file, the database and the command line on them."""

    folder: Path
    universe: Path
    url: str
    data_dir: Path
    run: Callable[..., tuple[int, str, str]]

    def write(self, ticker: str, rows: list[str], header: str = "date,close,volume") -> None:
        text = header + "\n" + "\n".join(rows) + "\n"
        (self.folder / f"{ticker}.csv").write_text(text, encoding="utf-8")

    def write_bytes(self, ticker: str, data: bytes) -> None:
        (self.folder / f"{ticker}.csv").write_bytes(data)

    def stored(self, ticker: str) -> list[tuple[str, float]]:
        """The stored (day, close) rows of one asset, oldest first."""
        with database.connection_context():
            query = (
                Candle.select(Candle.day, Candle.close)
                .where(Candle.ticker == ticker)
                .order_by(Candle.day)
                .tuples()
            )
            return [(str(day)[:10], float(close)) for day, close in query]


def csv_world(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], universe: str
) -> CsvWorld:
    folder = tmp_path / "prices"
    folder.mkdir()
    path = tmp_path / "universe.toml"
    path.write_text(universe, encoding="utf-8")

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(
            [
                "--database-url",
                url,
                "--universe",
                str(path),
                "--data-dir",
                str(tmp_path),
                "--quiet",
                *argv,
            ]
        )
        out, err = capsys.readouterr()
        return code, out, err

    return CsvWorld(folder, path, url, tmp_path, run)
