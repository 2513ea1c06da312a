"""Which representation a client asked for with its ``Accept`` header.

``/screen/latest`` and ``/pairs`` answer JSON unless the client prefers CSV: ``text/csv`` has
a higher quality than JSON, or the same quality while the client named it and reached JSON
only through a wildcard (``Accept: text/csv, */*;q=0.9`` or ``text/csv, */*``).
"""

from __future__ import annotations

JSON = "application/json"
CSV = "text/csv"


def _ranges(accept: str) -> list[tuple[str, float]]:
    """The media ranges of an ``Accept`` header with their quality (1 unless given)."""
    out: list[tuple[str, float]] = []
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        if not media:
            continue
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        out.append((media.lower(), quality))
    return out


def _quality(ranges: list[tuple[str, float]], media: str) -> tuple[float, bool]:
    """The quality of ``media`` by its most specific range, and whether it was named."""
    kind = media.split("/")[0] + "/*"
    for candidate, named in ((media, True), (kind, False), ("*/*", False)):
        qualities = [q for r, q in ranges if r == candidate]
        if qualities:
            return max(qualities), named
    return 0.0, False


def prefers_csv(accept: str | None) -> bool:
    """True when the ``Accept`` header asks for CSV rather than JSON."""
    lowered = (accept or "").lower()
    if "csv" not in lowered and "text/*" not in lowered:  # JSON at once (the usual case):
        return False  # only a range naming text/csv or text/* can rank CSV above JSON
    ranges = _ranges(lowered)
    csv_q, csv_named = _quality(ranges, CSV)
    json_q, json_named = _quality(ranges, JSON)
    if csv_q <= 0:
        return False
    return csv_q > json_q or (csv_q == json_q and csv_named and not json_named)
