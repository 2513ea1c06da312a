"""Schema migrations, applied in order by ``pairscreen db upgrade`` (and by ``pairscreen demo``).

Each migration is a function of the database; append new ones to ``MIGRATIONS`` (use
``playhouse.migrate`` for changes to existing tables) and never edit an applied one.
"""

from __future__ import annotations

from collections.abc import Callable

import peewee

from pairscreen.db import models
from pairscreen.db.proxy import database
from pairscreen.db.rows import tuples

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


def _one_watchlist_item_per_pair(db: peewee.Database) -> None:
    """Give every watchlist item its ``pair_key``, merge the items that watch one pair in both
    orientations, then make the key unique per user (NOT NULL, so no row escapes the index).

    Each step checks first: a database created by migration 1 from the current models already
    has the column and the index, and then only the (empty) merge runs.
    """
    from playhouse.migrate import SchemaMigrator, migrate

    migrator = SchemaMigrator.from_database(db)
    item = models.WatchlistItem
    table = item._meta.table_name
    columns = {c.name: c for c in db.get_columns(table)}
    if "pair_key" not in columns:
        nullable = peewee.CharField(max_length=41, null=True)
        migrate(migrator.add_column(table, "pair_key", nullable))
    _merge_mirrored_items()
    if "pair_key" not in columns or columns["pair_key"].null:
        migrate(migrator.add_not_null(table, "pair_key"))
    unique = ("user_id", "pair_key")
    if unique not in {tuple(i.columns) for i in db.get_indexes(table) if i.unique}:
        migrate(migrator.add_index(table, unique, unique=True))


def _merge_mirrored_items() -> None:
    """Keep one item per user and pair: the first added, with its orientation and state.

    A user who watched A/B and B/A got the notifications of both items, so the kept item
    notifies what either did (its flags are or-ed with the others'); the others are deleted.
    The keys are computed in Python, where the order of two tickers is their code-point order
    on every database.
    """
    item = models.WatchlistItem
    rows = item.select(
        item.id, item.user, item.a, item.b, item.notify_approach, item.notify_in_zone
    ).order_by(item.created_at, item.id)
    kept: dict[tuple[int, str], tuple[int, bool, bool]] = {}
    merged: list[int] = []
    for row_id, user_id, a, b, approach, in_zone in tuples(rows):
        key = (user_id, models.canonical_pair(a, b))
        if key in kept:
            first, first_approach, first_in_zone = kept[key]
            kept[key] = (first, first_approach or approach, first_in_zone or in_zone)
            merged.append(row_id)
        else:
            kept[key] = (row_id, approach, in_zone)
    if merged:
        item.delete().where(item.id.in_(merged)).execute()
    for (_user, pair), (row_id, approach, in_zone) in kept.items():
        item.update(pair_key=pair, notify_approach=approach, notify_in_zone=in_zone).where(
            item.id == row_id
        ).execute()


def _unknown_volume(db: peewee.Database) -> None:
    """A candle's volume may be NULL: a source without volume must not read as zero volume."""
    from playhouse.migrate import SchemaMigrator, migrate

    column = models.Candle.volume.column_name
    table = models.Candle._meta.table_name
    if any(c.name == column and not c.null for c in db.get_columns(table)):
        migrate(SchemaMigrator.from_database(db).drop_not_null(table, column))


def _point_in_time_screens(db: peewee.Database) -> None:
    """A screen may be computed as of a past day; regular screens keep ``as_of`` null."""
    _add_missing_columns(db, [models.Screen.as_of])
    table = models.Screen._meta.table_name
    if not any(i.columns == ["as_of"] for i in db.get_indexes(table)):
        from playhouse.migrate import SchemaMigrator, migrate

        migrate(SchemaMigrator.from_database(db).add_index(table, ("as_of",)))


def _state_changed_at(db: peewee.Database) -> None:
    _add_missing_columns(db, [models.WatchlistItem.state_changed_at])


def _survivor_keys(db: peewee.Database) -> None:
    """Each screen lists its survivors' pairs beside the payload; stored screens are read once
    to fill it in."""
    import json

    _add_missing_columns(db, [models.Screen.survivor_keys])
    rows = models.Screen.select(models.Screen.id).where(models.Screen.survivor_keys.is_null())
    for row in rows:
        # The payload was a column of ``screen`` until migration 20 moved it.
        payload = db.execute_sql(f"SELECT payload FROM screen WHERE id = {db.param}", (row.id,))
        survivors = json.loads(payload.fetchone()[0]).get("survivors", [])
        keys = models.survivor_keys([(s["pair"][0], s["pair"][1]) for s in survivors])
        models.Screen.update(survivor_keys=keys).where(models.Screen.id == row.id).execute()


def _candidate_keys(db: peewee.Database) -> None:
    """Each screen lists the pairs that passed every rule but persistence. Stored screens keep
    it NULL: which pairs the persistence rule removed from them is not in their payload."""
    _add_missing_columns(db, [models.Screen.candidate_keys])


def _alert_hygiene(db: peewee.Database) -> None:
    item = models.WatchlistItem
    _add_missing_columns(
        db, [item.cooldown_hours, item.snoozed_until, item.rearm_margin, item.last_notified_at]
    )


def _peg_sample_reason(db: peewee.Database) -> None:
    _add_missing_columns(db, [models.PegSample.reason])


def _peg_observations(db: peewee.Database) -> None:
    sample, event = models.PegSample, models.PegEvent
    _add_missing_columns(
        db,
        [sample.token_observed_at, sample.reference_observed_at, event.ended, event.end_reason],
    )


def _evidence(db: peewee.Database) -> None:
    db.create_tables([models.Evidence], safe=True)


def _screen_verdicts(db: peewee.Database) -> None:
    db.create_tables(list(models.VERDICT_MODELS), safe=True)


def _screen_page_index(db: peewee.Database) -> None:
    """Screens published from now on store their page index; older ones have none and are
    parsed on their first filtered page, as before."""
    db.create_tables([models.ScreenPageIndex], safe=True)


def _screen_page_blocks(db: peewee.Database) -> None:
    """Screens published from now on store their page items in blocks; older ones have none
    and their pages are cut from the payload, as before."""
    db.create_tables([models.ScreenPageBlock], safe=True)


def _screen_payloads(db: peewee.Database) -> None:
    """Each screen's payload moves to a table of its own (``screen_payload``), as its last
    column: SQLite then streams a new screen's text into it without a copy in memory."""
    db.create_tables([models.ScreenPayload], safe=True)
    table = models.Screen._meta.table_name
    if "payload" not in {c.name for c in db.get_columns(table)}:
        return  # created by migration 1 from the current models
    target = models.ScreenPayload._meta.table_name
    db.execute_sql(f"INSERT INTO {target} (screen_id, payload) SELECT id, payload FROM {table}")
    db.execute_sql(f"ALTER TABLE {table} DROP COLUMN payload")


def _bar_blocks(db: peewee.Database) -> None:
    """Intraday bars (a universe's ``[market] bar`` of 4h, 1h or 15m) get a table of their
    own, one packed row per asset, bar size and UTC day; daily candles stay where they are."""
    db.create_tables([models.BarBlock], safe=True)


MIGRATIONS: list[tuple[int, str, Migration]] = [
    (1, "initial schema", _initial_schema),
    (2, "notification channels, outbox, worker lock", _notifications),
    (3, "quota units reserved by requests in flight", _quota_reservations),
    (
        4,
        "one watchlist item per pair: A/B and B/A merged, unique per user",
        _one_watchlist_item_per_pair,
    ),
    (5, "candle volume may be unknown (null)", _unknown_volume),
    (6, "point-in-time screens (as of a past day)", _point_in_time_screens),
    (7, "when a watchlist item's notification state last moved", _state_changed_at),
    (9, "why a peg sample's status is unknown", _peg_sample_reason),
    (10, "published evaluations of the screen's rules (/evidence)", _evidence),
    (13, "each screen's survivors' pairs (persistence, recent verdicts)", _survivor_keys),
    (15, "watchlist alert hygiene: cooldown, snooze, re-arm margin", _alert_hygiene),
    (16, "every screened pair's verdict, compact, beside its screen", _screen_verdicts),
    (17, "each screen's page index (/pairs and /screen/latest pages)", _screen_page_index),
    (18, "each screen's pairs that passed every rule but persistence", _candidate_keys),
    (19, "each screen's page items in compressed blocks (first pages)", _screen_page_blocks),
    (20, "each screen's payload in a table of its own, as its last column", _screen_payloads),
    (21, "when a peg sample's prices were observed; why a depeg event ended", _peg_observations),
    (22, "intraday bars, packed per asset, bar size and UTC day", _bar_blocks),
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
