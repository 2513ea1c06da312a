"""Parameter errors that name the parameter, what was given and what is allowed.

Connexion's validator answers with jsonschema's message alone (``'abc' is not of type
'integer'``), which names neither the parameter nor its allowed values, and echoes a
60,000-character value whole. This validator keeps connexion's checks and rewrites only the
sentence: ``query parameter 'bt' is 'abc'; allowed: 90, 180 or 360.``, the value cut by
:func:`~pairscreen.api.errors.shown`; an unknown query parameter is named the same way.
"""

from __future__ import annotations

import re
from typing import Any

from connexion.exceptions import BadRequestProblem
from connexion.utils import is_null, is_nullable
from connexion.validators import ParameterValidator
from jsonschema import Draft4Validator
from starlette.datastructures import QueryParams

from pairscreen.api.errors import shown

CANONICAL_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")

# What a pattern of the contract means, in words (the path's tickers).
PATTERN_WORDS = {"^[A-Za-z0-9]{1,20}$": "1-20 letters or digits"}


# connexion is untyped (its names are Any), so mypy cannot check this subclass.
class NamedParameterValidator(ParameterValidator):  # type: ignore[misc]
    """connexion's parameter validation with sentences a newcomer can act on."""

    @staticmethod
    def validate_parameter(
        parameter_type: str, value: Any, param: dict[str, Any], param_name: str | None = None
    ) -> str | None:
        schema = param.get("schema", param)
        if is_nullable(param) and is_null(value):
            return None
        if value is None:
            if param.get("required"):
                return f"{parameter_type} parameter {shown(param['name'])} is missing."
            return None
        if Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER).is_valid(value):
            return None
        return (
            f"{parameter_type} parameter {shown(param['name'])} is {shown(str(value))}; "
            f"allowed: {allowed(schema)}."
        )

    def validate_query_parameter(self, param: dict[str, Any], request: Any) -> str | None:
        """An integer in its canonical form only: connexion's ``int()`` would also take
        ``+90``, `` 90`` or ``090``, which no client means and a cache key should not vary by."""
        schema = param.get("schema", param)
        if schema.get("type") == "integer":
            raw = QueryParams(request.scope.get("query_string", b"")).get(param["name"])
            if raw is not None and not CANONICAL_INTEGER.fullmatch(raw):
                name, words = shown(param["name"]), allowed(schema)
                return f"query parameter {name} is {shown(raw)}; allowed: {words}."
        error: str | None = super().validate_query_parameter(param, request)
        return error

    def validate_request(self, request: Any) -> None:
        """An unknown query parameter first, named (cut) with the ones the endpoint takes."""
        if self.strict_validation:
            extra = self.validate_query_parameter_list(
                request, security_params=self.security_query_params
            )
            if extra:
                known = [p["name"] for p in self.parameters.get("query", [])]
                raise BadRequestProblem(
                    detail=f"query parameter {shown(sorted(extra)[0])} is unknown; allowed: "
                    f"{', '.join(known) or 'none'}. This endpoint accepts only the documented "
                    "parameters."
                )
        super().validate_request(request)


def allowed(schema: dict[str, Any]) -> str:
    """The values ``schema`` accepts, in words."""
    if "enum" in schema:
        values = [str(v) for v in schema["enum"]]
        return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"
    if "pattern" in schema:
        pattern = schema["pattern"]
        return PATTERN_WORDS.get(pattern, f"a value matching {pattern}")
    if schema.get("type") == "boolean":
        return "true or false"
    kind = {"integer": "an integer", "number": "a number"}.get(schema.get("type", ""))
    if kind is None:
        return "a valid value"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"{kind} from {low} to {high}"
    if low is not None:
        return f"{kind} of at least {low}"
    if high is not None:
        return f"{kind} of at most {high}"
    return kind
