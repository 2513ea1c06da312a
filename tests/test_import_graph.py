"""The framework's modules, and its folders, import one another without a cycle.

Between modules every import counts: at module level, inside functions, and under
``TYPE_CHECKING``. A cycle means two modules can only be understood (and imported) together;
the composition root (:mod:`pairscreen.bootstrap`) is where the framework's parts meet instead.

Between packages (each sub-package of ``pairscreen``, each top-level module and the package's
``__init__`` a node of its own) the module-level imports count, ``TYPE_CHECKING`` included:
a folder that imports another at module level, directly or through a third, sits above it,
so the folders read as layers. An import inside a function (a heavy library, a command's
own work) is left out there.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable, Iterable
from functools import cache

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


def package_of(module: str) -> str:
    """The node a module belongs to: ``pairscreen.screening.screen`` is ``pairscreen.screening``,
    a top-level module (``pairscreen.runtime``) is its own."""
    return ".".join(module.split(".")[:2])


@cache
def function_lines(module: str) -> frozenset[int]:
    """The lines of ``module`` inside a function body, where an import runs only when called."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    with open(spec.origin, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    return frozenset(
        line
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for part in ([node.body] if isinstance(node, ast.Lambda) else node.body)
        for line in range(part.lineno, (part.end_lineno or part.lineno) + 1)
    )


def package_imports(
    graph: grimp.ImportGraph, at_module_level: Callable[[str, int], bool]
) -> dict[str, dict[str, tuple[str, str, int]]]:
    """For each package, the packages it imports at module level, each with one import that
    does it (importer, imported, line) to name in a failure."""
    found: dict[str, dict[str, tuple[str, str, int]]] = {}
    for importer in sorted(graph.modules):
        source = package_of(importer)
        found.setdefault(source, {})
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            target = package_of(imported)
            if target == source or target in found[source]:
                continue
            details = graph.get_import_details(importer=importer, imported=imported)
            lines = [
                d["line_number"] for d in details if at_module_level(importer, d["line_number"])
            ]
            if lines:
                found[source][target] = (importer, imported, lines[0])
    return found


def module_level(module: str, line: int) -> bool:
    return line not in function_lines(module)


def package_cycles(graph: grimp.ImportGraph, at_module_level: Callable[[str, int], bool]) -> str:
    """Every cycle between packages, described with one import per edge; ``""`` when none."""
    edges = package_imports(graph, at_module_level)
    described = []
    for component in cycles(edges, lambda p: edges.get(p, {})):
        members = set(component)
        described.append("package import cycle:")
        for source in component:
            for target, (a, b, line) in sorted(edges[source].items()):
                if target in members:
                    described.append(f"  {source} -> {target} ({a} -> {b}, line {line})")
    return "\n".join(described)


def test_pairscreen_has_no_import_cycle():
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    assert len(graph.modules) > 50, "the graph holds the whole package"
    found = cycles(graph.modules, graph.find_modules_directly_imported_by)
    assert not found, "\n".join(describe(graph, c) for c in found)


def test_the_detector_finds_a_cycle():
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    assert graph.direct_import_exists(
        importer="pairscreen.access.quota", imported="pairscreen.errors"
    )
    graph.add_import(
        importer="pairscreen.errors",
        imported="pairscreen.access.quota",
        line_number=1,
        line_contents="",
    )
    found = cycles(graph.modules, graph.find_modules_directly_imported_by)
    assert found == [["pairscreen.access.quota", "pairscreen.errors"]]
    assert cycles({"a", "b", "c"}, {"a": ["b"], "b": ["c"], "c": []}.__getitem__) == []
    assert cycles({"a", "b", "c"}, {"a": ["b"], "b": ["c"], "c": ["a"]}.__getitem__) == [
        ["a", "b", "c"]
    ]


def test_no_package_imports_another_in_a_cycle():
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    packages = {package_of(m) for m in graph.modules}
    assert {
        "pairscreen.screening",
        "pairscreen.screen_store",
        "pairscreen.screen_views",
        "pairscreen.runtime",
        "pairscreen.pegs",
    } <= packages
    assert package_cycles(graph, module_level) == ""


def test_the_package_detector_finds_a_loop_and_ignores_imports_in_functions():
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    # the views of a screen import its store at module level; the store importing a view
    # back would close a loop between the two folders
    views = package_imports(graph, module_level)["pairscreen.screen_views"]
    assert "pairscreen.screen_store" in views
    inside = min(function_lines("pairscreen.screen_store.screen_history"))
    graph.add_import(
        importer="pairscreen.screen_store.screen_history",
        imported="pairscreen.screen_views.status",
        line_number=inside,
        line_contents="",
    )
    assert package_cycles(graph, module_level) == "", "an import in a function is left out"
    graph.add_import(
        importer="pairscreen.screen_store.screen_history",
        imported="pairscreen.screen_views.status",
        line_number=1,  # the docstring's line: outside every function
        line_contents="",
    )
    found = package_cycles(graph, module_level)
    assert (
        "pairscreen.screen_store -> pairscreen.screen_views "
        "(pairscreen.screen_store.screen_history" in found
    )
    assert "pairscreen.screen_views -> pairscreen.screen_store" in found
