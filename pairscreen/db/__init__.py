"""Persistence: one late-bound database proxy, the models, and the migrations."""

from pairscreen.db.connection import connect, database, init_database

__all__ = ["connect", "database", "init_database"]
