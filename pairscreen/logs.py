"""How log lines look: plain text for people, or one JSON object per line for collectors.

A log collector reads a line at a time; a traceback over twenty lines or a message with a
newline breaks that, so the JSON format puts the whole record, exception included, on one
line. The access log's fields (``method``, ``path``, ``status``, ``duration_ms``) travel as
the record's ``extra`` and become keys of their own rather than words in the message.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The attributes every LogRecord has; anything else on a record came from ``extra``.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, extras."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in record.__dict__.items():
            if name not in _STANDARD and not name.startswith("_"):
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def formatter(log_format: str) -> logging.Formatter:
    """The formatter of ``log_format``: ``text`` or ``json`` (:mod:`pairscreen.config`)."""
    return JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)


ACCESS_LOGGER = "pairscreen.access"


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The stderr handler :func:`configure_logging` installs, told apart from anyone else's."""


def configure_logging(log_format: str, level: int | None = None) -> None:
    """One stderr handler on the root logger in ``log_format``, replacing our previous one.

    Run by each process's composition root: the CLI, and the app factory of every uvicorn
    worker process (a spawned process inherits no logging set-up). Like
    :func:`logging.basicConfig`, it leaves logging alone when someone else's handler is on
    the root logger already (an embedding program, pytest). ``level`` None keeps the root's
    level. In JSON the access log is on at INFO (a collector wants it); in text it shows
    with the INFO level (``pairscreen -v``).
    """
    root = logging.getLogger()
    if any(not isinstance(h, _Handler) for h in root.handlers):
        return
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = _Handler()
    handler.setFormatter(formatter(log_format))
    root.addHandler(handler)
    if level is not None:
        root.setLevel(level)
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO if log_format == "json" else 0)
