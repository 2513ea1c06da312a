"""The one ``DatabaseProxy`` the models are bound to, bound late by :func:`connection.connect`.

A module of its own so that the models and the migrations can name it without importing the
connection code (which runs the migrations): ``connection -> migrations -> models -> proxy``
has no cycle.

It is the one piece of process-wide mutable state the service keeps on purpose: peewee binds
a model to its database when the class is defined, and a proxy is how a model class learns
its database only once the settings are known. Everything else reaches the database through
it, and :func:`connection.connect` is the only code that rebinds it.
"""

from __future__ import annotations

import peewee

database = peewee.DatabaseProxy()
