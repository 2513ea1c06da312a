"""Each handler's signature computed once, not on every request.

connexion 3 applies its parameter and security decorators as a request arrives, and each
reads the signature of the function it wraps (``inspect.signature``): the handler's once and
the bearer function's twice per request, about 15 µs of a cached endpoint's ~260. A function
whose ``__signature__`` is set answers ``inspect.signature`` from it, so the app sets it once,
as it resolves each operation, to the very signature inspection would build.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from connexion.resolver import Resolver


def fix_signature(function: Callable[..., Any]) -> None:
    """Set ``function.__signature__`` to its signature (a function already carrying one, or
    an object that refuses the attribute, is left alone)."""
    if getattr(function, "__signature__", None) is not None:
        return
    signature = inspect.signature(function)
    try:
        function.__signature__ = signature  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return


class SignatureFixingResolver(Resolver):  # type: ignore[misc]
    """connexion's resolver (``operationId`` is the handler's dotted name), fixing the
    signature of each handler it resolves."""

    def resolve_function_from_operation_id(self, operation_id: str) -> Callable[..., Any]:
        function: Callable[..., Any] = super().resolve_function_from_operation_id(operation_id)
        fix_signature(function)
        return function
