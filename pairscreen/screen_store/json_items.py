"""Walk a big JSON object one element of its array at a time.

A published screen of 100,000 survivors is 100+ MB of JSON; ``json.loads`` of it builds
every survivor's dict at once, several times the text's size, and a process rarely gives
that memory back. The views built from it (the compact list, pages, the CSV) need one
survivor at a time, so this walks the top-level object with ``raw_decode``: each element of
the chosen array is decoded, handed over with its exact place in the text, and dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class Field:
    """A top-level field other than the walked array, decoded whole."""

    name: str
    value: Any


@dataclass(frozen=True)
class Element:
    """One element of the walked array and where its text lies: ``text[start:end]``."""

    value: Any
    start: int
    end: int


def walk(text: str, array: str) -> Iterator[Field | Element]:
    """Every top-level field of the JSON object ``text`` as a :class:`Field`, except the
    array named ``array``, whose elements come one by one as :class:`Element`."""
    decoder = json.JSONDecoder()
    pos = _expect(text, _skip(text, 0), "{")
    if text[pos] == "}":
        return
    while True:
        name, pos = decoder.raw_decode(text, pos)
        pos = _expect(text, pos, ":")
        if name == array:
            pos = _expect(text, pos, "[")
            while text[pos] != "]":
                value, end = decoder.raw_decode(text, pos)
                yield Element(value, pos, end)
                pos = _skip(text, end)
                if text[pos] == ",":
                    pos = _skip(text, pos + 1)
            pos += 1
        else:
            value, pos = decoder.raw_decode(text, pos)
            yield Field(name, value)
        pos = _skip(text, pos)
        if text[pos] == "}":
            return
        pos = _expect(text, pos, ",")


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _expect(text: str, pos: int, char: str) -> int:
    """The position after ``char`` (and the whitespace that follows) at ``pos``."""
    pos = _skip(text, pos)
    if text[pos : pos + 1] != char:
        raise ValueError(f"expected {char!r} at character {pos} of a JSON document")
    return _skip(text, pos + 1)
