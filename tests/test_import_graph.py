"""The framework's modules import one another without a cycle.

Every import counts: at module level, inside functions, and under ``TYPE_CHECKING``. A
cycle means two modules can only be understood (and imported) together; the composition
root (:mod:`pairscreen.bootstrap`) is where the framework's parts meet instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import grimp


def cycles(modules: Iterable[str], imports_of: Callable[[str], Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in imports_of(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    members = set(component)
    edges = [
        f"  {a} -> {b} (line {graph.get_import_details(importer=a, imported=b)[0]['line_number']})"
        for a in component
        for b in sorted(graph.find_modules_directly_imported_by(a) & members)
    ]
    return "\n".join(["import cycle:", *edges])


def test_pairscreen_has_no_import_cycle():
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    assert len(graph.modules) > 50, "the graph holds the whole package"
    found = cycles(graph.modules, graph.find_modules_directly_imported_by)
    assert not found, "\n".join(describe(graph, c) for c in found)


def test_the_detector_finds_a_cycle():
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    assert graph.direct_import_exists(
        importer="pairscreen.access.quota", imported="pairscreen.clock"
    )
    graph.add_import(
        importer="pairscreen.clock",
        imported="pairscreen.access.quota",
        line_number=1,
        line_contents="",
    )
    found = cycles(graph.modules, graph.find_modules_directly_imported_by)
    assert found == [["pairscreen.access.quota", "pairscreen.clock"]]
    assert cycles({"a", "b", "c"}, {"a": ["b"], "b": ["c"], "c": []}.__getitem__) == []
    assert cycles({"a", "b", "c"}, {"a": ["b"], "b": ["c"], "c": ["a"]}.__getitem__) == [
        ["a", "b", "c"]
    ]
