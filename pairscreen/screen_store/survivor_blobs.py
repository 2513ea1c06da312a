"""A survivor's JSON text while it waits between its worker and the published payload.

Each survivor travels compressed on its own (so that the screen can sort them and drop the
ones a page does not need without touching the rest): zstd at level 1 packs a survivor's
~2 KB of JSON as small as zlib did, in a third of the time (7 µs instead of 23), and unpacks
it three times faster, which publishing pays several times per survivor. A codec keeps its
zstd contexts (about 8 µs to make each); it serves one thread at a time.
"""

from __future__ import annotations

import zstandard

LEVEL = 1


class SurvivorCodec:
    """Packs and unpacks survivors' JSON texts, reusing one zstd context each way."""

    def __init__(self) -> None:
        self._compressor = zstandard.ZstdCompressor(level=LEVEL)
        self._decompressor = zstandard.ZstdDecompressor()

    def pack(self, text: bytes) -> bytes:
        packed: bytes = self._compressor.compress(text)
        return packed

    def unpack(self, blob: bytes) -> str:
        text: bytes = self._decompressor.decompress(blob)
        return text.decode()
