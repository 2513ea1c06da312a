"""The exit statuses of ``pairscreen``, one per kind of failure, so scripts can tell them
apart (docs/operations.md lists them)."""

from __future__ import annotations

OK = 0
FAILURE = 1  # the command ran and failed: a database, file or network error, a bug
USAGE = 2  # the command line or a value given is wrong
NOT_FOUND = 3  # what the command named does not exist: a user, a watched pair, the database
BUSY = 4  # another process holds what is needed: the port, the demo, the worker's lock
MISSING_EXTRA = 5  # an optional dependency is not installed: the message names the extra
PLUGIN_FAILED = 6  # a plugin raised or answered out of contract while the command computed
DATA_CONFLICT = 7  # ``data sync``: the source contradicts stored history; other assets synced
INTERRUPTED = 130  # Ctrl-C
CLOSED_PIPE = 141  # the reader of the output went away (``| head``): ends quietly
