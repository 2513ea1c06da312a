"""The peewee models. Schema changes go through :mod:`pairscreen.db.migrations`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import peewee

from pairscreen import clock
from pairscreen.db.proxy import database


def utcnow() -> datetime:
    return clock.now()


class UTCDateTimeField(peewee.DateTimeField):
    """A timestamp stored as naive UTC and read back timezone-aware."""

    def db_value(self, value: datetime | None) -> Any:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        # peewee's stub leaves Field.db_value unannotated; untyped_calls_exclude misses super().
        return super().db_value(value)  # type: ignore[no-untyped-call]

    def python_value(self, value: Any) -> Any:
        value = super().python_value(value)  # type: ignore[no-untyped-call]  # as db_value
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class BaseModel(peewee.Model):
    class Meta:
        database = database
        legacy_table_names = False


class SchemaVersion(BaseModel):
    version = peewee.IntegerField(primary_key=True)
    applied_at = UTCDateTimeField(default=utcnow)


class User(BaseModel):
    id = peewee.AutoField()  # peewee's implicit primary key, declared so it is typed
    email = peewee.CharField(max_length=254, unique=True)
    tier = peewee.CharField(max_length=20, null=True)  # personal | pro | None
    tier_expires_at = UTCDateTimeField(null=True)
    is_lifetime = peewee.BooleanField(default=False)
    created_at = UTCDateTimeField(default=utcnow)


class ApiKey(BaseModel):
    """The one active key of a user; rotating overwrites the row, revoking the old key."""

    id = peewee.AutoField()
    user = peewee.ForeignKeyField(User, backref="api_key", unique=True, on_delete="CASCADE")
    digest = peewee.CharField(max_length=64, unique=True)  # SHA-256 hex of the full key
    prefix = peewee.CharField(max_length=12)  # shown to the owner to recognise the key
    created_at = UTCDateTimeField(default=utcnow)


class QuotaUsage(BaseModel):
    """An account's compute units of one UTC day: ``used`` by requests that answered 200,
    ``pending`` reserved by requests still computing (migration 3)."""

    id = peewee.AutoField()
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    day = peewee.DateField()
    used = peewee.IntegerField(default=0)
    pending = peewee.IntegerField(default=0)

    class Meta:
        indexes = ((("user", "day"), True),)


class ComputeSlot(BaseModel):
    """One of an account's in-flight compute slots; held while ``holder`` is set and fresh."""

    id = peewee.AutoField()
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    slot = peewee.IntegerField()
    holder = peewee.CharField(max_length=40, null=True)
    expires_at = UTCDateTimeField(null=True)
    # The quota day of the unit the holder reserved and has not yet confirmed or given back;
    # set, it lets a crashed holder's unit be returned when the slot expires (migration 3).
    reserved_day = peewee.DateField(null=True)

    class Meta:
        indexes = ((("user", "slot"), True),)


class AssetRow(BaseModel):
    id = peewee.AutoField()
    ticker = peewee.CharField(max_length=20, unique=True)
    sector = peewee.CharField(max_length=60)
    asset_class = peewee.CharField(max_length=30)

    class Meta:
        table_name = "asset"


class Candle(BaseModel):
    ticker = peewee.CharField(max_length=20)
    day = peewee.DateField()
    close = peewee.DoubleField()
    volume = peewee.DoubleField(null=True)  # NULL: the source reported no volume that day

    class Meta:
        primary_key = peewee.CompositeKey("ticker", "day")


class DataVersion(BaseModel):
    """A counter bumped whenever candles change, so servers know when to reload them."""

    name = peewee.CharField(max_length=40, primary_key=True)
    version = peewee.IntegerField(default=0)
    updated_at = UTCDateTimeField(default=utcnow)


class Screen(BaseModel):
    id = peewee.AutoField()
    generated_at = UTCDateTimeField(index=True)
    n_pairs_screened = peewee.IntegerField()
    n_survivors = peewee.IntegerField()
    data_source = peewee.CharField(max_length=200, default="")
    # A point-in-time screen (``screen run --as-of``, migration 6): the last day of candles it
    # read. Such a screen is history: it never becomes the latest nor is pruned with the rest.
    as_of = peewee.DateField(null=True, index=True)
    # The survivors' pairs as published ("A/B"), one a line (migration 13): what persistence
    # and a pair's recent verdicts read without decoding the payload.
    survivor_keys = peewee.TextField(null=True)
    # The pairs that passed every rule but persistence, in the same form (migration 18): what
    # the next screens' persistence counts, so that a screen with ``min_persistence`` on does
    # not feed on its own output. NULL in screens stored before it (their survivors count).
    candidate_keys = peewee.TextField(null=True)


class ScreenPayload(BaseModel):
    """A screen's whole published JSON (migration 20; before it, a column of ``screen``).

    The text is the last column of its own table so that SQLite can insert a placeholder of
    its size (``zeroblob``) without building it in memory and let it be written in slices:
    in the middle of a row, a 440 MB placeholder was materialised twice while publishing.
    Deleted with its screen."""

    screen = peewee.ForeignKeyField(Screen, primary_key=True, on_delete="CASCADE")
    payload = peewee.TextField()


class ScreenVerdicts(BaseModel):
    """The head of a screen's stored verdicts (migration 16): tickers, kinds, thresholds, as
    compressed JSON (:mod:`pairscreen.screen_store.verdict_store`)."""

    screen = peewee.IntegerField(primary_key=True)
    head = peewee.BlobField()


class ScreenVerdictBlock(BaseModel):
    """One block of a screen's verdicts (migration 16): a compressed run of pair slots."""

    screen = peewee.IntegerField()
    block = peewee.IntegerField()
    data = peewee.BlobField()

    class Meta:
        primary_key = peewee.CompositeKey("screen", "block")


VERDICT_MODELS: tuple[type[BaseModel], ...] = (ScreenVerdicts, ScreenVerdictBlock)


class ScreenPageIndex(BaseModel):
    """A screen's page index (migration 17), written in the transaction that publishes it:
    where each survivor lies in the payload, best score first, with its score, sector and
    zone, so that a server pages ``/pairs`` and ``/screen/latest`` without parsing the
    payload. Deleted with its screen."""

    screen = peewee.ForeignKeyField(Screen, primary_key=True, on_delete="CASCADE")
    head = peewee.TextField()  # the payload's fields but the survivors, as JSON
    arrays = peewee.BlobField()  # the index's arrays, a compressed .npz


class ScreenPageBlock(BaseModel):
    """A block of a screen's page items (migration 19), written with its page index: the
    text each view lists for ``BLOCK_ITEMS`` survivors in a row of the index's order, so the
    first page of a new screen reads a few blocks instead of the whole payload. Deleted with
    its screen (:mod:`pairscreen.screen_store.page_blocks`)."""

    screen = peewee.ForeignKeyField(Screen, on_delete="CASCADE")
    block = peewee.IntegerField()
    survivors = peewee.BlobField()  # the /screen/latest items, compressed
    pairs = peewee.BlobField()  # the /pairs items, compressed

    class Meta:
        primary_key = peewee.CompositeKey("screen", "block")


def survivor_keys(pairs: list[tuple[str, str]]) -> str:
    """The ``survivor_keys`` text of a screen's survivors."""
    return "".join(f"{a}/{b}\n" for a, b in pairs)


def canonical_pair(a: str, b: str) -> str:
    """The key of the pair of ``a`` and ``b`` whichever way round it is written.

    ``A/B`` and ``B/A`` are one pair (the ratios are inverse), so a watchlist holds one item
    for both; the key is the two tickers in code-point order, computed here rather than in
    SQL because PostgreSQL compares text by the database's collation, not by code point.
    """
    first, second = sorted((a, b))
    return f"{first}/{second}"


class WatchlistItem(BaseModel):
    """A pair a user watches, in the orientation the user chose (``a``/``b``).

    ``pair_key`` (:func:`canonical_pair`, migration 4) is the same for ``A/B`` and ``B/A``; unique
    per user, it makes one item per pair a guarantee of the database on SQLite and
    PostgreSQL alike, whatever writes the row.
    """

    id = peewee.AutoField()
    user = peewee.ForeignKeyField(User, backref="watchlist", on_delete="CASCADE")
    user_id: int  # the raw foreign key, an accessor peewee adds for ``user``
    a = peewee.CharField(max_length=20)
    b = peewee.CharField(max_length=20)
    pair_key = peewee.CharField(max_length=41)  # "<ticker>/<ticker>", tickers in order
    notify_approach = peewee.BooleanField(default=True)
    notify_in_zone = peewee.BooleanField(default=True)
    last_notified_state = peewee.CharField(max_length=20, default="none")
    # When ``notify run`` last moved the state (migration 7); None until it first moves.
    state_changed_at = UTCDateTimeField(null=True)
    # Alert hygiene (migration 15): no notification within ``cooldown_hours`` of the last
    # one (``last_notified_at``) nor before ``snoozed_until``; an excursion ends (re-arms)
    # only past its approach band's outer edge by ``rearm_margin``.
    cooldown_hours = peewee.IntegerField(default=0)
    snoozed_until = UTCDateTimeField(null=True)
    rearm_margin = peewee.DoubleField(default=0.02)
    last_notified_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=utcnow)

    class Meta:
        indexes = ((("user", "a", "b"), True), (("user", "pair_key"), True))


class PegSample(BaseModel):
    id = peewee.AutoField()
    ticker = peewee.CharField(max_length=20)
    sampled_at = UTCDateTimeField()
    status = peewee.CharField(max_length=10)  # healthy | unhealthy | unknown
    market_price = peewee.DoubleField(null=True)
    reference_price = peewee.DoubleField(null=True)
    reference_source = peewee.CharField(max_length=200, default="")
    drift_pct = peewee.DoubleField(null=True)
    threshold_pct = peewee.DoubleField()
    # why the status is ``unknown`` ("PAXG: token price 1,060 days old"); "" otherwise
    reason = peewee.TextField(default="")
    # When the compared prices were observed: a sample is stored only when one of them is
    # newer than in the ticker's previous sample (null: no such price, or a sample stored
    # before migration 21)
    token_observed_at = UTCDateTimeField(null=True)
    reference_observed_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("ticker", "sampled_at"), True),)


class PegEvent(BaseModel):
    id = peewee.AutoField()
    ticker = peewee.CharField(max_length=20, index=True)
    asset_class = peewee.CharField(max_length=30)
    first_unhealthy = UTCDateTimeField()
    last_unhealthy = UTCDateTimeField()
    median_drift_pct = peewee.DoubleField()
    sample_count = peewee.IntegerField()
    reference_source = peewee.CharField(max_length=200, default="")
    active = peewee.BooleanField(default=True, index=True)
    closed_at = UTCDateTimeField(null=True)
    # why a closed event ended: "recovered" (a healthy sample) or "stale" (its inputs were
    # no longer observed within the asset class's staleness limit); "" while active
    ended = peewee.CharField(max_length=10, default="")
    # the sentence of a stale end ("PAXG: reference XAU last observed ..."); "" otherwise
    end_reason = peewee.TextField(default="")


class JobRun(BaseModel):
    """When a job (screen, peg sampling, notifications) last ran: feeds ``checked_at``."""

    name = peewee.CharField(max_length=40, primary_key=True)
    finished_at = UTCDateTimeField()

    @classmethod
    def replace(cls, __data: Any = None, **insert: Any) -> peewee.ModelInsert:
        """Insert or overwrite the job's row, on SQLite and PostgreSQL alike.

        peewee's ``replace`` is SQLite/MySQL ``REPLACE INTO``, which PostgreSQL lacks; an
        upsert on the primary key (``ON CONFLICT (name) DO UPDATE``, SQLite >= 3.24) does
        the same for this two-column table.
        """
        return cls.insert(__data, **insert).on_conflict(
            conflict_target=[cls.name], preserve=[cls.finished_at]
        )


INITIAL_MODELS: tuple[type[BaseModel], ...] = (
    User,
    ApiKey,
    QuotaUsage,
    ComputeSlot,
    AssetRow,
    Candle,
    DataVersion,
    Screen,
    WatchlistItem,
    PegSample,
    PegEvent,
    JobRun,
)


# ---------------------------------------------------------------------------
# Notifications (migration 2)
# ---------------------------------------------------------------------------

OUTBOX_STATUSES: tuple[str, ...] = ("pending", "sent", "failed")


class Channel(BaseModel):
    """One delivery channel of a user: an e-mail address, a Telegram chat id, a webhook URL,
    a Discord or Slack incoming-webhook URL, or the address of a notifier plugin's kind
    (secrets: never shown whole outside the CLI). ``kind`` is plain text, constrained by no
    list in the schema, so a plugin's new kind needs no migration.

    A user without an ``email`` row gets e-mail at the account address; a disabled row turns
    that channel off. ``depeg_alerts`` (on the e-mail row, Pro only) asks for every depeg
    alert, not only those of assets on the user's watchlist.
    """

    id = peewee.AutoField()
    user = peewee.ForeignKeyField(User, backref="channels", on_delete="CASCADE")
    user_id: int  # the raw foreign key, an accessor peewee adds for ``user``
    kind = peewee.CharField(max_length=20)  # a registered channel kind: email, telegram, ...
    address = peewee.CharField(max_length=500)
    enabled = peewee.BooleanField(default=True)
    depeg_alerts = peewee.BooleanField(default=False)
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        indexes = ((("user", "kind"), True),)


class Outbox(BaseModel):
    """A notification to deliver; written in the transaction that decided to send it.

    ``idempotency_key`` is unique (a rerun can never queue the same event twice) and travels
    with every delivery attempt so the receiver can drop duplicates. A worker claims a row
    by a conditional UPDATE setting ``claimed_by`` / ``claimed_until``; a claim that expires
    (the worker crashed) makes the row deliverable again.
    """

    id = peewee.AutoField()
    idempotency_key = peewee.CharField(max_length=200, unique=True)
    user = peewee.ForeignKeyField(User, null=True, on_delete="CASCADE")
    user_id: int | None  # the raw foreign key, an accessor peewee adds for ``user``
    channel = peewee.CharField(max_length=20)
    address = peewee.CharField(max_length=500)
    subject = peewee.CharField(max_length=300)
    text = peewee.TextField()
    html = peewee.TextField(default="")
    payload = peewee.TextField(default="{}")  # JSON
    status = peewee.CharField(max_length=10, default="pending")  # pending | sent | failed
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(default=utcnow)
    last_error = peewee.TextField(default="")
    created_at = UTCDateTimeField(default=utcnow)
    sent_at = UTCDateTimeField(null=True)
    claimed_by = peewee.CharField(max_length=120, null=True)
    claimed_until = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("status", "next_attempt_at"), False),)


class WorkerLock(BaseModel):
    """The single-instance lock of ``pairscreen worker``: held while ``expires_at`` is ahead."""

    name = peewee.CharField(max_length=40, primary_key=True)
    holder = peewee.CharField(max_length=120, null=True)
    acquired_at = UTCDateTimeField(null=True)
    expires_at = UTCDateTimeField(null=True)


NOTIFICATION_MODELS: tuple[type[BaseModel], ...] = (Channel, Outbox, WorkerLock)


class Evidence(BaseModel):
    """A published evaluation of the screen's rules (migration 10): the ``/evidence`` body.

    ``pairscreen evaluate --publish`` and the worker write one row per run; the newest is
    served and the last few are kept.
    """

    id = peewee.AutoField()
    published_at = UTCDateTimeField(index=True)
    first_day = peewee.DateField()  # the first and last as-of day evaluated
    last_day = peewee.DateField()
    payload = peewee.TextField()  # the /evidence body as JSON


class BarBlock(BaseModel):
    """One asset's intraday bars of one UTC day at one bar size (migration 22).

    A block holds the day's ``86400 / bar_seconds`` bars as packed little-endian float64
    arrays, slot ``k`` being the bar that opens at ``day + k * bar_seconds`` (it closes one
    bar later): ``closes`` with NaN where the source has no bar, ``volumes`` NULL when no bar
    of the day has a known volume, else NaN where one is unknown. One row per asset and day,
    keyed by the asset's integer id, is what keeps an hour from costing a daily candle row
    (:mod:`pairscreen.market.bar_store`). Daily universes never write here.
    """

    # No index of its own: the primary key leads with it.
    asset = peewee.ForeignKeyField(AssetRow, on_delete="CASCADE", index=False)
    asset_id: int  # the raw foreign key, an accessor peewee adds for ``asset``
    bar_seconds = peewee.IntegerField()
    day = peewee.DateField()
    closes = peewee.BlobField()
    volumes = peewee.BlobField(null=True)

    class Meta:
        primary_key = peewee.CompositeKey("asset", "bar_seconds", "day")
