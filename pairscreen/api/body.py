"""The one JSON request body (``PUT /me/channels/{kind}``) parsed strictly: a body that is not
UTF-8 is a 400 that says so.

Connexion's JSON body validator decodes the bytes before parsing and lets the
``UnicodeDecodeError`` of a body in another encoding (or of random bytes) escape as a 500.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from connexion.datastructures import MediaTypeDict
from connexion.exceptions import BadRequestProblem
from connexion.validators import VALIDATOR_MAP, JSONRequestBodyValidator
from starlette.types import Scope


# connexion is untyped (its names are Any), so mypy cannot check this subclass.
class StrictJSONBodyValidator(JSONRequestBodyValidator):  # type: ignore[misc]
    async def _parse(self, stream: AsyncGenerator[bytes, None], scope: Scope) -> Any:
        chunks = [message async for message in stream]

        async def replay() -> AsyncGenerator[bytes, None]:
            for chunk in chunks:
                yield chunk

        try:
            b"".join(chunks).decode(self._encoding)
        except UnicodeDecodeError:
            raise BadRequestProblem(
                detail=f"the request body is not {self._encoding} text: send JSON, "
                'for example {"enabled": true}'
            ) from None
        return await super()._parse(replay(), scope)


def body_validators() -> Any:
    """Connexion's body validators with JSON parsed by :class:`StrictJSONBodyValidator`."""
    return MediaTypeDict({**VALIDATOR_MAP["body"], "*/*json": StrictJSONBodyValidator})
