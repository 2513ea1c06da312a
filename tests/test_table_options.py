"""Table-valued plugin options: a table, or a list of tables, declared by a plugin, checked
with a one-line error naming the key, and handed to the plugin; the ccxt market source's
options in ``[plugins.ccxt_source]`` and the http_json peg source's in ``[plugins.http_json]``,
their former places (``[market]``, ``[peg_sources.http_json]``) working with one notice."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from pairscreen import PluginOption, deprecation, hookimpl
from pairscreen.bootstrap import load_configured_plugins
from pairscreen.config import load_settings
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.options_table import builtin_options_markdown
from pairscreen.plugin_system.registry import PluginError, Plugins
from pairscreen.universe import UniverseError, load_universe_file

ASSETS = """
[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "ETH"
sector = "majors"
"""
MIRRORS = PluginOption(
    "mirrors",
    [],
    "where to fetch from, in order",
    fields=(
        PluginOption("url", "", "the mirror's base URL"),
        PluginOption("weight", 1.0, "its share of the requests"),
        PluginOption("headers", {}, "extra request headers", secret=True),
    ),
)


class Mirrored:
    """A plugin whose one option is a list of tables; it registers a scorer per mirror so
    the test sees what reached the register hook."""

    seen: list[Any]

    def __init__(self) -> None:
        self.seen = []

    @hookimpl
    def pairscreen_plugin_options(self) -> list[PluginOption]:
        return [MIRRORS, PluginOption("limits", {"per_day": 100}, "", fields=None)]

    @hookimpl
    def pairscreen_register_scorers(self, options: Any) -> list[Any]:
        self.seen.append(options)
        return []


@pytest.fixture(autouse=True)
def fresh_notices() -> None:
    deprecation.forget()


def mirrored(table: dict[str, Any]) -> tuple[Plugins, Mirrored]:
    plugin = Mirrored()
    settings = load_settings({"PAIRSCREEN_LOAD_PLUGINS": ""})
    pm = load_plugins(settings, extra=(plugin,))
    pm.unregister(name=pm.get_name(plugin))
    pm.register(plugin, name="mirrored")
    return Plugins(pm, settings, {"mirrored": table}), plugin


def test_a_list_of_tables_is_checked_completed_and_reaches_the_plugin():
    plugins, plugin = mirrored(
        {
            "mirrors": [{"url": "https://a.example", "weight": 2}, {"url": "https://b.example"}],
            "limits": {"per_day": 5, "burst": 2},
        }
    )
    len(plugins.scorers)
    (options,) = plugin.seen
    assert options["mirrors"] == (
        {"url": "https://a.example", "weight": 2.0, "headers": {}},
        {"url": "https://b.example", "weight": 1.0, "headers": {}},
    )
    assert options["limits"] == {"per_day": 5, "burst": 2}  # no fields: as written


@pytest.mark.parametrize(
    ("table", "error"),
    [
        (
            {"mirrors": {"url": "x"}},
            "[plugins.mirrored] mirrors must be a list of tables, got {'url': 'x'}",
        ),
        ({"mirrors": ["x"]}, "[plugins.mirrored] mirrors[0] must be a table, got 'x'"),
        (
            {"mirrors": [{"url": "x"}, {"url": "y", "wieght": 2}]},
            "[plugins.mirrored] mirrors[1]: 'wieght' is not one of its keys (url, weight, headers)",
        ),
        (
            {"mirrors": [{"url": "x", "weight": "heavy"}]},
            "[plugins.mirrored] mirrors[0].weight must be a number, got 'heavy'",
        ),
        (
            {"mirrors": [{"url": "x", "headers": "Bearer abc"}]},
            "[plugins.mirrored] mirrors[0].headers must be a table, got a str (hidden: the "
            "option is secret)",
        ),
        ({"limits": 3}, "[plugins.mirrored] limits must be a table, got 3"),
    ],
)
def test_a_bad_table_value_is_one_line_naming_the_key(table, error):
    plugins, _ = mirrored(table)
    with pytest.raises(PluginError) as bad:
        len(plugins.options)
    assert str(bad.value) == error


def test_a_table_option_cannot_be_declared_with_an_environment_variable():
    class Bad:
        @hookimpl
        def pairscreen_plugin_options(self) -> list[PluginOption]:
            return [PluginOption("config", {}, env="BAD_CONFIG")]

    settings = load_settings({"PAIRSCREEN_LOAD_PLUGINS": ""})
    with pytest.raises(PluginError, match="a table cannot be set by an environment variable"):
        len(Plugins(load_plugins(settings, extra=(Bad(),)), settings).declared_options)


def ccxt_universe(tmp_path: Path, tables: str) -> Path:
    path = tmp_path / "universe.toml"
    path.write_text(f'[components]\nmarket_source = "ccxt"\n{tables}\n{ASSETS}')
    return path


def settled(path: Path):  # type: ignore[no-untyped-def]
    settings = load_settings({"PAIRSCREEN_LOAD_PLUGINS": ""})
    return load_configured_plugins(settings, load_universe_file(path))


CCXT = """
[plugins.ccxt_source]
exchange = "kraken"
history_days = 90

[plugins.ccxt_source.exchange_config]
apiKey = "k-123"
options = { defaultType = "spot" }
"""


def test_ccxt_options_live_in_their_plugin_table(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        plugins, universe = settled(ccxt_universe(tmp_path, CCXT))
    assert not [r for r in caplog.records if "deprecated" in r.getMessage()]
    assert universe.market_options == {
        "exchange": "kraken",
        "history_days": 90,
        "exchange_config": {"apiKey": "k-123", "options": {"defaultType": "spot"}},
    }
    assert plugins.options["ccxt_source"]["exchange_config"] == {
        "apiKey": "k-123",
        "options": {"defaultType": "spot"},
    }
    shown = {o.name: value for o, value, _ in plugins.shown_options("ccxt_source")}
    assert shown["exchange_config"] == {
        "apiKey": "(secret, set)",
        "options": {"defaultType": "(secret, set)"},
    }


def test_ccxt_options_in_market_still_work_with_one_notice(tmp_path, caplog):
    former = CCXT.replace("[plugins.ccxt_source]", "[market]").replace(
        "[plugins.ccxt_source.exchange_config]", "[market.exchange_config]"
    )
    with caplog.at_level(logging.WARNING):
        _, universe = settled(ccxt_universe(tmp_path, former))
        settled(ccxt_universe(tmp_path, former))
    said = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert len(said) == 1 and said[0].endswith(
        "[market] exchange, history_days, exchange_config is deprecated and still works for "
        "this release; write [plugins.ccxt_source] instead"
    )
    assert universe.market_options["exchange_config"]["apiKey"] == "k-123"


def test_a_bad_ccxt_table_is_refused_in_one_line(tmp_path):
    path = ccxt_universe(tmp_path, '[plugins.ccxt_source]\nexchange_config = "apiKey=k"\n')
    with pytest.raises(PluginError) as bad:
        settled(path)
    assert str(bad.value) == (
        "[plugins.ccxt_source] exchange_config must be a table, got a str (hidden: the option "
        "is secret)"
    )
    both = ccxt_universe(tmp_path, '[market]\nexchange = "a"\n[plugins.ccxt_source]\nquote = "EUR"')
    with pytest.raises(UniverseError, match="keep only"):
        settled(both)


HTTP_JSON = """
[plugins.http_json]
url = "https://prices.example/v1/{reference}"
json_path = "data.price"
timeout = 2

[plugins.http_json.headers]
Authorization = "Bearer abc"
"""


def peg_universe(tmp_path: Path, tables: str) -> Path:
    path = tmp_path / "universe.toml"
    path.write_text(
        '[components]\nmarket_source = "demo"\n'
        + tables
        + '\n[[asset]]\nticker = "PAXG"\nsector = "gold"\nasset_class = "tokenized_metal"\n'
        'peg = { reference = "XAU", sources = ["http_json"] }\n'
        '[[asset]]\nticker = "XAUT"\nsector = "gold"\n'
    )
    return path


def test_http_json_options_live_in_their_plugin_table(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        plugins, universe = settled(peg_universe(tmp_path, HTTP_JSON))
    assert not [r for r in caplog.records if "deprecated" in r.getMessage()]
    options = universe.peg_source_options["http_json"]
    assert options["headers"] == {"Authorization": "Bearer abc"}
    assert options["url"] == "https://prices.example/v1/{reference}"
    assert plugins.options["http_json"]["timeout"] == 2.0


def test_http_json_in_peg_sources_still_works_with_one_notice(tmp_path, caplog):
    former = HTTP_JSON.replace("plugins.http_json", "peg_sources.http_json")
    with caplog.at_level(logging.WARNING):
        _, universe = settled(peg_universe(tmp_path, former))
    said = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert len(said) == 1 and said[0].endswith(
        "[peg_sources.http_json] is deprecated and still works for this release; write "
        "[plugins.http_json] instead"
    )
    assert universe.peg_source_options["http_json"]["headers"] == {"Authorization": "Bearer abc"}


def test_the_reference_shows_the_table_options():
    table = builtin_options_markdown()
    assert "| `[plugins.ccxt_source]` | `exchange_config` | table | `{}` (secret) |" in table
    assert "| `[plugins.http_json]` | `headers` | table | `{}` (secret) |" in table
