"""A computed screen's JSON text, held in parts with its survivors still compressed.

The payload of a screen of 2,000 assets is about 440 MB of JSON. Joining it into one string
while the survivors' texts still existed, then handing it to SQLite, held it three to five
times over at the moment of publishing (2.2 GB). Here each survivor stays as the compressed
text its worker sent, with the few fields the screen adds to it once every chunk is in;
publishing decompresses the survivors one at a time as it writes them and as it builds the
page index, so the whole text never needs to exist in memory at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from pairscreen import clock
from pairscreen.screen_store.survivor_blobs import SurvivorCodec


@dataclass(frozen=True)
class PayloadParts:
    """``opening``, the survivors joined by commas, then ``closing``: the payload's text."""

    opening: str  # the payload's fields before its survivors, up to and with '"survivors":['
    # Each survivor's compressed JSON object and the fields the screen adds to it (JSON
    # members without braces, "" for none).
    survivors: Sequence[tuple[bytes, str]]
    closing: str  # from the survivors' closing ']' to the end of the object
    codec: SurvivorCodec = field(default_factory=SurvivorCodec, compare=False, repr=False)

    @classmethod
    def write(
        cls,
        head: Mapping[str, Any],
        survivors: Sequence[tuple[bytes, str]],
        tail: Mapping[str, Any],
        codec: SurvivorCodec | None = None,
    ) -> PayloadParts:
        """The payload whose fields are ``head``, then its ``survivors`` (each from
        :func:`survivor_entry`), then ``tail``: the one writer of a screen's JSON text."""
        before = _compact(head)[:-1]
        opening = f'{before}{"," if head else ""}"survivors":['
        closing = f"],{_compact(tail)[1:]}" if tail else "]}"
        return cls(opening, survivors, closing, codec or SurvivorCodec())

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> PayloadParts:
        """The parts of the payload ``body`` (with its ``survivors`` where the payload lists
        them), whose text is ``body``'s compact JSON."""
        names = list(body)
        at = names.index("survivors")
        codec = SurvivorCodec()
        survivors = [(codec.pack(_compact(s).encode()), "") for s in body["survivors"]]
        head = {name: body[name] for name in names[:at]}
        tail = {name: body[name] for name in names[at + 1 :]}
        return cls.write(head, survivors, tail, codec)

    @property
    def n_survivors(self) -> int:
        return len(self.survivors)

    def survivor(self, i: int) -> str:
        """Survivor ``i``'s JSON text, as the payload lists it."""
        packed, added = self.survivors[i]
        text = self.codec.unpack(packed)
        return f"{text[:-1]},{added}}}" if added else text

    def pieces(self) -> Iterator[str]:
        """The payload's text in order, a survivor at a time."""
        yield self.opening
        for i in range(len(self.survivors)):
            yield f",{self.survivor(i)}" if i else self.survivor(i)
        yield self.closing

    def text(self) -> str:
        """The whole payload as one string (for the callers that need it whole)."""
        return "".join(self.pieces())

    def fields(self) -> dict[str, object]:
        """Every field of the payload but its survivors."""
        body: dict[str, object] = json.loads(self.opening + self.closing)
        body.pop("survivors")
        return body

    def with_as_of(self, day: date, close: datetime | None = None) -> PayloadParts:
        """The same payload with ``as_of`` as its last field; an intraday screen's with
        ``as_of_close`` (the last bar's close time it read) after it."""
        closing = f'{self.closing[:-1]},"as_of":{json.dumps(day.isoformat())}}}'
        if close is not None:
            closing = f'{closing[:-1]},"as_of_close":{json.dumps(clock.iso(close))}}}'
        return PayloadParts(self.opening, self.survivors, closing, self.codec)


def _compact(value: object) -> str:
    return json.dumps(value, allow_nan=False, separators=(",", ":"))


def survivor_entry(packed: bytes, added: Mapping[str, Any]) -> tuple[bytes, str]:
    """A survivor as the payload holds it: its compressed JSON object, and the fields the
    screen adds to it once every chunk is in (written here, as JSON members)."""
    return packed, _compact(dict(added))[1:-1] if added else ""
