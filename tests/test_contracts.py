"""The public contracts stand apart from the engine: what plugin authors import lives in
``pairscreen.contracts``, every built-in plugin imports nothing else of pairscreen (but the
clock), the contracts import nothing of the engine, and the panel a plugin reads offers no
engine method and writes nothing into its frozen fields.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path

import grimp
import numpy as np
import pytest

import pairscreen
import pairscreen.contracts as contracts
import pairscreen.types as old_types
from pairscreen.contracts import PairPanel
from pairscreen.testing import pair_panel

ROOT = Path(__file__).resolve().parents[1]
SUBMODULES = (
    "assets",
    "bars",
    "charts",
    "commands",
    "filters",
    "hooks",
    "market",
    "metrics",
    "notifiers",
    "options",
    "panel",
    "pegs",
    "strategies",
)
# What a plugin may import of pairscreen: the contracts, the clock, and the top-level package,
# which re-exports the contracts' names (and only those, below).
PUBLIC_MODULES = ("pairscreen", "pairscreen.clock")


def is_public(module: str) -> bool:
    return module in PUBLIC_MODULES or module.split(".")[:2] == ["pairscreen", "contracts"]


def private_imports(graph: grimp.ImportGraph, importers: Iterable[str]) -> list[str]:
    """Each import of a pairscreen module that is not public, ``importer -> imported``."""
    return sorted(
        f"{importer} -> {imported}"
        for importer in importers
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.split(".")[0] == "pairscreen" and not is_public(imported)
    )


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("pairscreen_plugins", "pairscreen", cache_dir=None)


def plugin_modules(graph: grimp.ImportGraph) -> list[str]:
    return sorted(m for m in graph.modules if m.split(".")[0] == "pairscreen_plugins")


def test_every_built_in_plugin_imports_only_the_public_contracts(graph) -> None:
    modules = plugin_modules(graph)
    assert len(modules) > 30, "the graph holds every built-in plugin"
    assert private_imports(graph, modules) == []


def test_the_check_names_a_plugin_that_reaches_into_the_engine(graph) -> None:
    graph.add_import(
        importer="pairscreen_plugins.metrics.bands",
        imported="pairscreen.engine.batch_panel",
        line_number=1,
        line_contents="from pairscreen.engine.batch_panel import select_rows",
    )
    assert private_imports(graph, plugin_modules(graph)) == [
        "pairscreen_plugins.metrics.bands -> pairscreen.engine.batch_panel"
    ]


def names_from_the_package(path: Path) -> set[str]:
    """The names ``path`` imports with ``from pairscreen import ...``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "pairscreen" and not node.level
        for alias in node.names
    }


def test_what_plugins_take_from_the_top_level_package_is_a_contract_or_the_clock() -> None:
    allowed = {*contracts.__all__, "clock"}
    for path in sorted((ROOT / "plugins" / "pairscreen_plugins").rglob("*.py")):
        extra = names_from_the_package(path) - allowed
        assert not extra, f"{path.relative_to(ROOT)} imports {sorted(extra)} from pairscreen"


def test_the_contracts_import_nothing_of_the_engine() -> None:
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    inside = sorted(m for m in graph.modules if m.split(".")[:2] == ["pairscreen", "contracts"])
    assert len(inside) == len(SUBMODULES) + 1
    reached = {
        imported
        for module in inside
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.split(".")[0] == "pairscreen" and not is_public(imported)
    }
    assert reached == {"pairscreen.config"}  # Settings, which every register hook receives


def test_the_package_the_old_module_and_the_contracts_export_the_same_names() -> None:
    declared = {"Settings"}
    for name in SUBMODULES:
        declared |= set(importlib.import_module(f"pairscreen.contracts.{name}").__all__)
    assert set(contracts.__all__) == declared - {"PROJECT_NAME"}
    assert set(pairscreen.__all__) == {*contracts.__all__, "__version__"}
    assert old_types.__all__ == contracts.__all__
    for name in contracts.__all__:
        assert getattr(pairscreen, name) is getattr(contracts, name), name
        assert getattr(old_types, name) is getattr(contracts, name), name


def test_nothing_in_pairscreen_imports_the_old_module() -> None:
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    assert graph.find_modules_that_directly_import("pairscreen.types") == set()


def test_a_plugin_s_panel_offers_no_engine_method() -> None:
    panel = pair_panel(np.linspace(10, 20, 800), np.linspace(20, 10, 800))
    for engine_only in ("rows", "flipped", "last_days", "leg_ids", "cache"):
        assert not hasattr(panel, engine_only), engine_only
    assert {f.name for f in dataclasses.fields(PairPanel) if f.init} == {
        "a",
        "b",
        "dates",
        "close_a",
        "close_b",
        "volume_a",
        "volume_b",
        "window_days",
        "volume_days",
        "slippage",
        "bar",  # the bar size (docs/bar_sizes.md): data, read by the spans it translates
    }


def test_reading_a_panel_writes_nothing_into_its_fields() -> None:
    panel = pair_panel(np.linspace(10, 20, 800), np.linspace(20, 10, 800))
    before = set(vars(panel))
    _ = (panel.window, panel.band_history, panel.log_ratio, panel.r_current)
    _ = (panel.day_offsets, panel.metric_window, panel.band_window)
    assert set(vars(panel)) == before  # derived arrays live in the panel's cache
    with pytest.raises(dataclasses.FrozenInstanceError):
        panel.window_days = 10  # type: ignore[misc]


def test_a_panel_s_cache_is_its_own_and_a_copy_starts_empty() -> None:
    panel = pair_panel(np.linspace(10, 20, 800), np.linspace(20, 10, 800))
    assert panel.cached("bands", lambda: 1) == 1
    assert panel.cached("bands", lambda: 2) == 1
    copy = dataclasses.replace(panel, window_days=200)
    assert copy.cached("bands", lambda: 3) == 3
    panel.forget("bands")
    assert panel.cached("bands", lambda: 4) == 4
    panel.forget("never cached")  # nothing to drop: nothing happens


def test_the_docs_show_the_contracts_import() -> None:
    plugins_doc = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert "from pairscreen.contracts import" in plugins_doc
    spec = importlib.util.find_spec("pairscreen.contracts")
    assert spec is not None and spec.origin is not None
    assert "from pairscreen.contracts import" in Path(spec.origin).read_text(encoding="utf-8")
