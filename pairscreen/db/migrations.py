"""Schema migrations, applied in order by ``pairscreen db upgrade`` (and by ``pairscreen demo``).

Each migration is a function of the database; append new ones to ``MIGRATIONS`` (use
``playhouse.migrate`` for changes to existing tables) and never edit an applied one.
"""

from __future__ import annotations

from collections.abc import Callable

import peewee

from pairscreen.db import models
from pairscreen.db.proxy import database

Migration = Callable[[peewee.Database], None]


def _initial_schema(db: peewee.Database) -> None:
    db.create_tables(models.INITIAL_MODELS, safe=True)


def _notifications(db: peewee.Database) -> None:
    db.create_tables(models.NOTIFICATION_MODELS, safe=True)


def _add_missing_columns(db: peewee.Database, fields: list[peewee.Field]) -> None:
    """Add ``fields`` to their tables unless present (migration 1 creates tables from the
    current models, so a fresh database already has them)."""
    from playhouse.migrate import SchemaMigrator, migrate

    migrator = SchemaMigrator.from_database(db)
    for field in fields:
        table = field.model._meta.table_name
        if field.column_name not in {c.name for c in db.get_columns(table)}:
            migrate(migrator.add_column(table, field.column_name, field))


def _quota_reservations(db: peewee.Database) -> None:
    _add_missing_columns(db, [models.QuotaUsage.pending, models.ComputeSlot.reserved_day])


def _unknown_volume(db: peewee.Database) -> None:
    """A candle's volume may be NULL: a source without volume must not read as zero volume."""
    from playhouse.migrate import SchemaMigrator, migrate

    column = models.Candle.volume.column_name
    table = models.Candle._meta.table_name
    if any(c.name == column and not c.null for c in db.get_columns(table)):
        migrate(SchemaMigrator.from_database(db).drop_not_null(table, column))


MIGRATIONS: list[tuple[int, str, Migration]] = [
    (1, "initial schema", _initial_schema),
    (2, "notification channels, outbox, worker lock", _notifications),
    (3, "quota units reserved by requests in flight", _quota_reservations),
    (4, "candle volume may be unknown (null)", _unknown_volume),
]


def upgrade(db: peewee.Database | None = None) -> list[int]:
    """Apply every migration not yet applied; returns the versions applied now."""
    db = db or database.obj
    applied_now: list[int] = []
    with db.connection_context():
        db.create_tables([models.SchemaVersion], safe=True)
        done = {row.version for row in models.SchemaVersion.select()}
        for version, _description, migrate in MIGRATIONS:
            if version in done:
                continue
            with db.atomic():
                migrate(db)
                models.SchemaVersion.create(version=version)
            applied_now.append(version)
    return applied_now
