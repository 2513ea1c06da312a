"""API keys: ``rr_`` + 26 random base62 characters + a 6-character base62 CRC32 checksum.

The checksum lets a client, a secret scanner and our own security function reject a
mistyped or made-up key without a database round trip. Keys are stored only as SHA-256
digests with a short display prefix.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import zlib

PREFIX = "rr_"
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RANDOM_LENGTH = 26
CHECKSUM_LENGTH = 6
KEY_PATTERN = re.compile(r"^rr_[0-9A-Za-z]{32}$")


def _base62(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        chars.append(ALPHABET[digit])
    return "".join(reversed(chars))


def checksum(body: str) -> str:
    """Base62 of the CRC32 of the random part (62**6 > 2**32, so it always fits)."""
    return _base62(zlib.crc32(body.encode("ascii")), CHECKSUM_LENGTH)


def generate_key() -> str:
    body = "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))
    return f"{PREFIX}{body}{checksum(body)}"


def is_well_formed(key: str) -> bool:
    """True when ``key`` has the right shape and a valid checksum; no database needed."""
    if not KEY_PATTERN.match(key):
        return False
    body, check = key[3 : 3 + RANDOM_LENGTH], key[3 + RANDOM_LENGTH :]
    return secrets.compare_digest(checksum(body), check)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("ascii")).hexdigest()


def display_prefix(key: str) -> str:
    return key[:8]
