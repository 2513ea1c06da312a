"""Every handler and the bearer function carry their signature once the app is built.

connexion reads a handler's signature on every request (and the bearer function's twice);
the app sets ``__signature__`` as it resolves each operation so that reading it is a lookup.
The signature set must be the function's own: the parameters its code declares.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import yaml
from connexion.utils import get_function_from_name

from pairscreen.api.security import bearer_info
from pairscreen.app import openapi_path


def declared_parameters(function: Callable[..., Any]) -> list[str]:
    """The parameters the code declares (of the function a decorator wraps, if any)."""
    code = inspect.unwrap(function).__code__
    return list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def test_handlers_and_the_bearer_function_carry_their_own_signature(client, runtime) -> None:  # type: ignore[no-untyped-def]
    # connexion resolves the operations as the app starts (the client has started it)
    assert client.get("/healthz").status_code == 200
    spec = yaml.safe_load(openapi_path(runtime.settings).read_text())
    handlers = {
        operation["operationId"]
        for methods in spec["paths"].values()
        for operation in methods.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    assert len(handlers) > 10
    for name in [*sorted(handlers), "pairscreen.api.security.bearer_info"]:
        function = get_function_from_name(name)
        fixed = vars(function).get("__signature__")
        assert isinstance(fixed, inspect.Signature), name
        assert list(fixed.parameters) == declared_parameters(function), name
    assert inspect.signature(bearer_info) is vars(bearer_info)["__signature__"]
