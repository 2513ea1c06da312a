"""``screen run`` reads top-down: every call it makes between pairscreen's packages goes to a
package below the caller's (CLI → run → compute → publish), never back up into a layer above.

"Above" is the package import graph's own order (tests/test_import_graph.py, module-level
imports): a package is above another when it imports it, directly or through others. A call
from ``engine`` into ``screening`` (a callback, or a generator of the caller's being consumed)
would be a climb even though no import says so; this test sees those too, by tracing the
calls of a real run.
"""

from __future__ import annotations

import gc
import sys
from types import FrameType

import grimp

from pairscreen.cli import main
from tests.test_import_graph import module_level, package_imports, package_of


def below(graph: dict[str, dict[str, tuple[str, str, int]]]) -> dict[str, set[str]]:
    """For each package, every package it imports at module level, directly or through others."""
    reached: dict[str, set[str]] = {}

    def visit(package: str) -> set[str]:
        if package not in reached:
            reached[package] = set()
            for target in graph.get(package, {}):
                reached[package] |= {target, *visit(target)}
        return reached[package]

    for package in graph:
        visit(package)
    return reached


def pairscreen_caller(frame: FrameType | None) -> FrameType | None:
    while frame is not None and not _ours(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
    return frame


def _ours(module: str) -> bool:
    return module.startswith("pairscreen") and not module.startswith("pairscreen_plugins")


def traced_calls(database_url: str) -> set[tuple[str, str, str, str]]:
    """Run ``screen run --no-sync`` on ``database_url`` in this process; every (caller
    module, caller function, callee module, callee function) between two pairscreen modules,
    imports left out."""
    calls: set[tuple[str, str, str, str]] = set()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or frame.f_code.co_name == "<module>":
            return
        callee = frame.f_globals.get("__name__", "")
        if not _ours(callee):
            return
        caller = pairscreen_caller(frame.f_back)
        if caller is None or caller.f_code.co_name == "<module>":
            return
        name = caller.f_globals["__name__"]
        if name != callee:
            calls.add((name, caller.f_code.co_name, callee, frame.f_code.co_name))

    # A finalizer left by an earlier test (a thread pool's) may run inside any frame when the
    # collector runs: collected first and kept off while tracing, it cannot pose as a call.
    gc.collect()
    gc.disable()
    sys.setprofile(profile)
    try:
        code = main(["-q", "screen", "run", "--no-sync", "--database-url", database_url])
    finally:
        sys.setprofile(None)
        gc.enable()
    assert code == 0
    return calls


# The one call back up on purpose: the engine's executor runs the screen's chunk work and
# reads its chunks, which the screen hands it as a function and a generator (the engine
# imports nothing of ``screening``). Anything else climbing fails.
HANDED = {
    ("pairscreen.engine.executors", "pairscreen.screening.pair_chunks", "evaluate_pairs"),
    ("pairscreen.engine.executors", "pairscreen.screening.pair_chunks", "pair_tasks"),
}


def climbs(calls: set[tuple[str, str, str, str]], reached: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{a}.{fa} -> {b}.{fb}"
        for a, fa, b, fb in calls
        if package_of(a) in reached.get(package_of(b), set()) and (a, b, fb) not in HANDED
    )


def test_screen_run_never_calls_back_up_a_layer(runtime, monkeypatch):
    monkeypatch.setenv("PAIRSCREEN_SCREEN_PROCESSES", "1")  # chunks in this process: traced
    graph = grimp.build_graph("pairscreen", cache_dir=None)
    reached = below(package_imports(graph, module_level))
    calls = traced_calls(runtime.settings.database_url)
    called = {(package_of(a), package_of(b)) for a, _, b, _ in calls}
    # the path is the whole one: the command, the composition root, compute and publish
    for step in [
        ("pairscreen.cli", "pairscreen.bootstrap"),
        ("pairscreen.cli", "pairscreen.screening"),
        ("pairscreen.screening", "pairscreen.engine"),
        ("pairscreen.screening", "pairscreen.pegs"),
        ("pairscreen.screening", "pairscreen.market"),
        ("pairscreen.screening", "pairscreen.db"),
    ]:
        assert step in called, step
    publish = ("pairscreen.screening.screen", "run_screen")
    assert (*publish, "pairscreen.screen_store.store", "publish") in calls
    assert climbs(calls, reached) == []


def test_a_callback_into_a_higher_layer_counts_as_a_climb():
    a, b, c = "pairscreen.a", "pairscreen.b", "pairscreen.c"  # a imports b, b imports c
    reached = below({a: {b: (f"{a}.x", f"{b}.y", 1)}, b: {c: (f"{b}.y", f"{c}.z", 1)}, c: {}})
    assert reached == {a: {b, c}, b: {c}, c: set()}
    calls = {(f"{c}.z", "run", f"{a}.x", "work"), (f"{a}.x", "main", f"{c}.z", "helper")}
    assert climbs(calls, reached) == ["pairscreen.c.z.run -> pairscreen.a.x.work"]
