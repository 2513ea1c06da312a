"""Every setting of the service, declared once, and read from the environment once.

Each field of :class:`Settings` carries its declaration (:func:`setting`): the environment
variable, the command-line flag when there is one, the default and what it means. The CLI
builds its flags from these declarations and ``docs/configuration.md`` is generated from them,
so neither can drift from the code. :func:`load_settings` runs at a composition root (a CLI
command, the app factory, a Dask worker), after the environment is final; everything else is
handed the frozen result, and this is the only module that reads ``os.environ``.

An empty environment variable counts as unset, except where an empty value means something
(``PAIRSCREEN_LOAD_PLUGINS``: no third-party plugins).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import MISSING, Field, dataclass, field, fields
from datetime import date
from pathlib import Path
from typing import Any

import platformdirs

from pairscreen import clock
from pairscreen.deprecation import moved


class SettingsError(ValueError):
    """A setting has a value it cannot take; the message names the variable or flag."""


@dataclass(frozen=True)
class Parser:
    """Turns the text of a variable or flag into a value and back.

    ``what`` completes "must be ..." in the error, so every bad value is reported the same way.
    """

    convert: Callable[[str], Any]
    what: str
    render: Callable[[Any], str] = str
    accepts_empty: bool = False  # "" is a value, not "unset"
    metavar: str | None = None  # how a command's help names the value


def _integer(minimum: int) -> Callable[[str], int]:
    def convert(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise ValueError(text)
        return value

    return convert


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(text)
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 < value < 65536:
        raise ValueError(text)
    return value


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _boolean(text: str) -> bool:
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise ValueError(text)


def _names(text: str) -> tuple[str, ...]:
    return tuple(filter(None, (n.strip() for n in text.split(","))))


def _choice(*choices: str) -> Parser:
    def convert(text: str) -> str:
        if text not in choices:
            raise ValueError(text)
        return text

    return Parser(convert, "one of " + ", ".join(choices))


TEXT = Parser(str, "text")
PATH = Parser(lambda text: Path(text).expanduser(), "a path")
COUNT = Parser(_integer(0), "a whole number (0 or more)")
AT_LEAST_ONE = Parser(_integer(1), "a whole number, at least 1", metavar="N")
SECONDS = Parser(_positive_seconds, "a positive number of seconds", metavar="SECONDS")
SIGNED_SECONDS = Parser(clock.seconds_of, "a number of seconds", metavar="SECONDS")
PORT = Parser(_port, "a TCP port (1-65535)", metavar="PORT")
FLAG = Parser(
    _boolean, "one of " + ", ".join(_TRUE + _FALSE), render=lambda value: "1" if value else "0"
)
NAMES = Parser(_names, "a comma-separated list of names", render=",".join, accepts_empty=True)
DAY = Parser(date.fromisoformat, "a day, YYYY-MM-DD", render=date.isoformat, metavar="DAY")


@dataclass(frozen=True)
class Declaration:
    """How one setting is set and what it is for; stored in its field's metadata."""

    env: str
    help: str
    parser: Parser
    flag: str | None = None
    shown_default: str | None = None  # the default as the docs state it, when it is computed
    secret: bool = False


def setting(
    env: str,
    help: str,
    parser: Parser = TEXT,
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    flag: str | None = None,
    shown_default: str | None = None,
    secret: bool = False,
) -> Any:
    """A :class:`Settings` field with its declaration."""
    declaration = Declaration(env, help, parser, flag, shown_default, secret)
    return field(
        default=default,
        default_factory=default_factory,
        repr=not secret,
        metadata={"setting": declaration},
    )


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("pairscreen", appauthor=False))


def default_database_url(data_dir: Path) -> str:
    return f"sqlite:///{data_dir / 'pairscreen.sqlite3'}"


@dataclass(frozen=True)
class ComponentChoice:
    """One entry of the universe's ``[components]`` table and the setting that overrides it.

    Declared once in :data:`COMPONENTS`: the settings fields, their environment variables,
    the docs' tables, the start-up checks and the resolution (``pairscreen.component_choice``)
    are all read from it.
    """

    key: str  # the [components] key
    attribute: str  # the Settings and Universe attribute holding the choice
    chooses: str  # what it chooses, as the docs say it
    registry: str  # the Plugins registry it is looked up in
    builtin: str  # the name used when nothing chooses ("": the universe file must)
    env: str
    # where the core reads the resolved choice: the settings (strategy, scorer, renderer),
    # or the universe (market source, filter), whose settings field then stays the override
    # alone, so settings handed on to another universe do not carry this one's choice
    read_from_settings: bool = True

    @property
    def help(self) -> str:
        return f"{self.chooses}, over the universe's `[components] {self.key}`"

    @property
    def shown_default(self) -> str:
        fallback = f", else `{self.builtin}`" if self.builtin else ""
        return f"the universe's `[components] {self.key}`{fallback}"


COMPONENTS: tuple[ComponentChoice, ...] = (
    ComponentChoice(
        "market_source",
        "market_source",
        "the market-data source",
        "market_sources",
        "",
        "PAIRSCREEN_MARKET_SOURCE",
        read_from_settings=False,
    ),
    ComponentChoice(
        "filter",
        "screen_filter",
        "the screen filter",
        "filters",
        "default",
        "PAIRSCREEN_FILTER",
        read_from_settings=False,
    ),
    ComponentChoice(
        "strategy",
        "strategy",
        "the backtest strategy (`accumulation`, `ou_optimal` or `kalman_band` built in)",
        "strategies",
        "accumulation",
        "PAIRSCREEN_STRATEGY",
    ),
    ComponentChoice(
        "scorer",
        "scorer",
        "the scorer that ranks survivors",
        "scorers",
        "score",
        "PAIRSCREEN_SCORER",
    ),
    ComponentChoice(
        "chart_renderer",
        "chart_renderer",
        "the chart renderer for chart.png",
        "chart_renderers",
        "default",
        "PAIRSCREEN_CHART_RENDERER",
    ),
)


def component(key: str) -> ComponentChoice:
    """The declaration of the ``[components]`` entry ``key``."""
    return next(c for c in COMPONENTS if c.key == key)


def component_setting(key: str) -> Any:
    """The :class:`Settings` field of a component choice, from its declaration. Empty means
    "not set here": the composition root (``pairscreen.component_choice``) resolves the
    choice once, so every reader of a built runtime's settings sees a name."""
    declared = component(key)
    return setting(declared.env, declared.help, default="", shown_default=declared.shown_default)


@dataclass(frozen=True)
class Settings:
    """Where data lives and how the service behaves, read once; plugins get it from their hooks.

    Fields can be set by keyword (tests do); :func:`load_settings` reads them from the
    environment and the command line.
    """

    # Storage
    data_dir: Path = setting(
        "PAIRSCREEN_DATA_DIR",
        "folder of the embedded database",
        PATH,
        default_factory=default_data_dir,
        flag="--data-dir",
        shown_default="the user data folder (platformdirs)",
    )
    database_url: str = setting(
        "DATABASE_URL",
        "peewee database URL (SQLite or PostgreSQL)",
        default="",
        flag="--database-url",
        shown_default="pairscreen.sqlite3 in the data folder",
    )
    universe_path: Path | None = setting(
        "PAIRSCREEN_UNIVERSE",
        "universe TOML file",
        PATH,
        default=None,
        flag="--universe",
        shown_default="the built-in demo universe",
    )
    # Screening
    window_days: int = setting(
        "PAIRSCREEN_WINDOW_DAYS",
        "calendar days of log-ratio history the windows and bands use",
        AT_LEAST_ONE,
        default=540,
    )
    min_history_days: int = setting(
        "PAIRSCREEN_MIN_HISTORY_DAYS",
        "calendar days of common history a pair needs to be screened",
        COUNT,
        default=200,
    )
    # The components (one declaration each in COMPONENTS)
    market_source: str = component_setting("market_source")
    screen_filter: str = component_setting("filter")
    strategy: str = component_setting("strategy")
    scorer: str = component_setting("scorer")
    chart_renderer: str = component_setting("chart_renderer")
    screens_kept: int = setting(
        "PAIRSCREEN_SCREENS_KEPT",
        "published screens kept in the database",
        AT_LEAST_ONE,
        default=20,
    )
    persistence_screens: int = setting(
        "PAIRSCREEN_PERSISTENCE_SCREENS",
        "previous screens (at least a day apart) a survivor's survived_last counts",
        COUNT,
        default=6,
    )
    defaults_chosen_through: date = setting(
        "PAIRSCREEN_DEFAULTS_CHOSEN_THROUGH",
        "the last close the study that chose the default rules read (docs/methodology.md, "
        "the walk-forward study): /evidence reports as-of days up to it as `chosen_on` and "
        "later ones as `after`",
        DAY,
        default=date(2023, 12, 31),
    )
    screen_processes: int = setting(
        "PAIRSCREEN_SCREEN_PROCESSES",
        "processes a local screen, and the as-of days of `evaluate` and of the worker's "
        "evidence, run on (0: one per core)",
        COUNT,
        default=0,
    )
    executor: str = setting(
        "PAIRSCREEN_EXECUTOR",
        "where `screen run` computes: this machine's cores, or a Dask cluster",
        _choice("local", "dask"),
        default="local",
        flag="--executor",
    )
    dask_scheduler: str | None = setting(
        "PAIRSCREEN_DASK_SCHEDULER",
        "the Dask scheduler address for the dask executor, e.g. tcp://10.0.0.5:8786",
        default=None,
        flag="--scheduler",
    )
    # The API
    host: str = setting(
        "PAIRSCREEN_HOST",
        "address `serve` and `demo` listen on",
        default="127.0.0.1",
        flag="--host",
    )
    port: int = setting(
        "PAIRSCREEN_PORT", "port `serve` and `demo` listen on", PORT, default=8000, flag="--port"
    )
    workers: int = setting(
        "PAIRSCREEN_WORKERS",
        "uvicorn worker processes of `serve`",
        AT_LEAST_ONE,
        default=1,
        flag="--workers",
    )
    openapi_path: Path | None = setting(
        "PAIRSCREEN_OPENAPI",
        "the openapi.yaml to serve instead of the packaged one",
        PATH,
        default=None,
        shown_default="the packaged contract",
    )
    # Threads per worker process for compute requests (a pool of their own); 0: one fewer
    # than the usable cores, at least 1, so the event loop and cheap reads keep a core.
    compute_threads: int = setting(
        "PAIRSCREEN_COMPUTE_THREADS",
        "threads per API process for compute requests (0: one fewer than the cores, at least 1)",
        COUNT,
        default=0,
    )
    in_flight_personal: int = setting(
        "PAIRSCREEN_IN_FLIGHT_PERSONAL",
        "requests a personal account may run at once",
        AT_LEAST_ONE,
        default=2,
    )
    in_flight_pro: int = setting(
        "PAIRSCREEN_IN_FLIGHT_PRO",
        "requests a pro account may run at once",
        AT_LEAST_ONE,
        default=4,
    )
    daily_limit_personal: int = setting(
        "PAIRSCREEN_DAILY_LIMIT_PERSONAL",
        "charged requests per day, personal accounts",
        COUNT,
        default=200,
    )
    daily_limit_pro: int = setting(
        "PAIRSCREEN_DAILY_LIMIT_PRO", "charged requests per day, pro accounts", COUNT, default=2000
    )
    lock_ttl_seconds: float = setting(
        "PAIRSCREEN_LOCK_TTL",
        "how long a request's slot and quota reservation outlive a crashed holder (a live "
        "request renews them every third of it)",
        SECONDS,
        default=60.0,
    )
    compute_queue_seconds: float = setting(
        "PAIRSCREEN_COMPUTE_QUEUE_TIMEOUT",
        "how long an admitted compute request may wait for a compute thread before it "
        "answers 503 with Retry-After (nothing charged)",
        SECONDS,
        default=30.0,
    )
    max_header_bytes: int = setting(
        "PAIRSCREEN_MAX_HEADER_BYTES",
        "largest request line plus headers accepted; a larger one is answered 431 and closed",
        AT_LEAST_ONE,
        default=16384,
    )
    header_timeout_seconds: float = setting(
        "PAIRSCREEN_HEADER_TIMEOUT",
        "a connection that has not sent a complete request head within this time is closed",
        SECONDS,
        default=10.0,
    )
    keep_alive_seconds: float = setting(
        "PAIRSCREEN_KEEP_ALIVE_TIMEOUT",
        "an idle keep-alive connection is closed after this time",
        SECONDS,
        default=5.0,
    )
    max_connections: int = setting(
        "PAIRSCREEN_MAX_CONNECTIONS",
        "open connections per API process; past it a new one closes the longest-idle one, or "
        "is answered 503 when none is idle (0: three quarters of the soft open-file limit)",
        COUNT,
        default=0,
    )
    metrics: bool = setting(
        "PAIRSCREEN_METRICS",
        "serve Prometheus metrics at /metrics (each API process its own)",
        FLAG,
        default=False,
        flag="--metrics",
    )
    log_format: str = setting(
        "PAIRSCREEN_LOG_FORMAT",
        "log lines as text, or as one JSON object per line (access logs included)",
        _choice("text", "json"),
        default="text",
        flag="--log-format",
    )
    # Plugins
    load_plugins: tuple[str, ...] | None = setting(
        "PAIRSCREEN_LOAD_PLUGINS",
        "the entry-point plugins to load, comma-separated (empty: none)",
        NAMES,
        default=None,
        shown_default="every installed one",
    )
    plugins_dir: Path | None = setting(
        "PAIRSCREEN_PLUGINS_DIR",
        "a folder whose .py files are loaded as plugins",
        PATH,
        default=None,
    )
    disable_plugins: tuple[str, ...] = setting(
        "PAIRSCREEN_DISABLE_PLUGINS",
        "plugins not to load, comma-separated, by the names `pairscreen plugins --all` lists "
        "(built-ins too)",
        NAMES,
        default=(),
        shown_default="none",
    )
    trace_plugins: bool = setting(
        "PAIRSCREEN_TRACE_PLUGINS",
        "log every plugin hook call with the plugins it ran and how long it took",
        FLAG,
        default=False,
    )
    # The clock (pairscreen.clock reads it on every call; declared to be checked and listed)
    clock_shift: float = setting(
        clock.SHIFT_VARIABLE,
        "seconds added to the system clock for every date the service derives from now "
        "(reproducing a past day; the test suite pins its today with it)",
        SIGNED_SECONDS,
        default=0.0,
    )
    # Pegs
    peg_retention_days: int = setting(
        "PAIRSCREEN_PEG_RETENTION_DAYS", "days peg samples are kept", AT_LEAST_ONE, default=90
    )
    # The worker
    worker_wait: bool = setting(
        "PAIRSCREEN_WORKER_WAIT",
        "wait for a running worker to stop instead of exiting",
        FLAG,
        default=False,
        flag="--wait",
    )
    worker_wait_poll: float = setting(
        "PAIRSCREEN_WORKER_WAIT_POLL",
        "how often a waiting worker checks the lock",
        SECONDS,
        default=2.0,
    )
    deliver_every: float = setting(
        "PAIRSCREEN_DELIVER_EVERY",
        "the worker's outbox delivery interval",
        SECONDS,
        default=10.0,
        flag="--deliver-every",
    )
    screen_every_bars: int = setting(
        "PAIRSCREEN_SCREEN_EVERY_BARS",
        "the worker screens after every N closes of the universe's bar",
        AT_LEAST_ONE,
        default=1,
        flag="--screen-every-bars",
    )
    screen_delay: int = setting(
        "PAIRSCREEN_SCREEN_DELAY",
        "seconds after a bar's close before the worker syncs and screens (the source's lag)",
        COUNT,
        default=300,
        flag="--screen-delay",
    )
    screen_retry: float = setting(
        "PAIRSCREEN_SCREEN_RETRY",
        "seconds before the worker tries a failed screen again (before the next close)",
        SECONDS,
        default=900.0,
        flag="--screen-retry",
    )
    evidence_every: float = setting(
        "PAIRSCREEN_EVIDENCE_EVERY",
        "how often the worker evaluates the screen's rules and publishes /evidence",
        SECONDS,
        default=86400.0,
        flag="--evidence-every",
    )
    evidence_sample: int = setting(
        "PAIRSCREEN_EVIDENCE_SAMPLE",
        "pairs the worker's evaluation draws from the universe (all when fewer)",
        AT_LEAST_ONE,
        default=5000,
        flag="--evidence-sample",
    )
    evidence_portfolio: int = setting(
        "PAIRSCREEN_EVIDENCE_PORTFOLIO",
        "pairs in the portfolio of picks the worker's /evidence publishes, as `evaluate "
        "--publish --portfolio N` does (0: no portfolio)",
        COUNT,
        default=0,
        flag="--evidence-portfolio",
    )
    evidence_max_per_asset: int = setting(
        "PAIRSCREEN_EVIDENCE_MAX_PER_ASSET",
        "with a worker's portfolio, no asset in more than this many of its pairs, as "
        "`--max-per-asset K` (0: no limit)",
        COUNT,
        default=0,
        flag="--evidence-max-per-asset",
    )
    worker_lock_ttl: float = setting(
        "PAIRSCREEN_WORKER_LOCK_TTL",
        "how long the single-worker lock outlives a silent worker",
        SECONDS,
        default=60.0,
        flag="--lock-ttl",
    )
    # The outbox
    outbox_max_attempts: int = setting(
        "PAIRSCREEN_OUTBOX_MAX_ATTEMPTS",
        "delivery attempts before a notification fails",
        AT_LEAST_ONE,
        default=10,
    )
    outbox_backoff: float = setting(
        "PAIRSCREEN_OUTBOX_BACKOFF",
        "wait before the 2nd delivery attempt; doubles after each failure",
        SECONDS,
        default=30.0,
    )
    outbox_backoff_cap: float = setting(
        "PAIRSCREEN_OUTBOX_BACKOFF_CAP",
        "the longest wait between delivery attempts",
        SECONDS,
        default=3600.0,
    )
    outbox_lease: float = setting(
        "PAIRSCREEN_OUTBOX_LEASE",
        "how long a delivery claim holds (a crashed worker's rows return after it)",
        SECONDS,
        default=120.0,
    )
    # Environment variables a plugin option declares as its override (``PluginOption.env``,
    # e.g. ``PAIRSCREEN_SMTP_URL`` for ``[plugins.email] smtp_url``): every ``PAIRSCREEN_*``
    # variable that is not a setting's, read here with the rest of the environment and
    # applied by the plugin registry, which knows the declarations.
    plugin_variables: tuple[tuple[str, str], ...] = field(
        default=(), repr=False, metadata={"plugin_variables": True}
    )

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", default_database_url(self.data_dir))

    def plugin_variable(self, name: str) -> str | None:
        """The text of a plugin option's environment variable, None when unset or empty."""
        return dict(self.plugin_variables).get(name)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def in_flight_limits(self) -> dict[str, int]:
        return {"personal": self.in_flight_personal, "pro": self.in_flight_pro}

    @property
    def daily_limits(self) -> dict[str, int]:
        return {"personal": self.daily_limit_personal, "pro": self.daily_limit_pro}


def declarations() -> Iterator[tuple[Field[Any], Declaration]]:
    """Every setting with its declaration, in declaration order."""
    for f in fields(Settings):
        if "setting" in f.metadata:
            yield f, f.metadata["setting"]


def declaration(name: str) -> Declaration:
    return next(d for f, d in declarations() if f.name == name)


def _parse(declared: Declaration, text: str, label: str) -> Any:
    try:
        return declared.parser.convert(text)
    except ValueError:
        raise SettingsError(f"{label} must be {declared.parser.what}, got {text!r}") from None


def load_settings(
    environ: Mapping[str, str] | None = None,
    *,
    flags: Mapping[str, str] | None = None,
    universe: str | Path | None = None,
    **values: Any,
) -> Settings:
    """Settings from ``values``, else ``flags``, else the environment, else the defaults.

    ``values`` are keyword values by field name (text is parsed, anything else is taken as
    is; None means "not given"), ``universe`` is short for ``universe_path``; ``flags`` are
    the command line's texts by field name. A bad value raises :class:`SettingsError`.
    """
    env = os.environ if environ is None else environ
    if universe is not None:
        values.setdefault("universe_path", universe)
    variables = plugin_variables_of(env, values)
    unknown = set(values) - {f.name for f in fields(Settings)}
    if unknown:
        raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
    chosen: dict[str, Any] = {}
    for f, declared in declarations():
        given, from_flag, raw = values.get(f.name), (flags or {}).get(f.name), env.get(declared.env)
        if given is not None:
            chosen[f.name] = _parse(declared, given, f.name) if isinstance(given, str) else given
        elif from_flag is not None:
            chosen[f.name] = _parse(declared, from_flag, declared.flag or f.name)
        elif raw is not None and (raw or declared.parser.accepts_empty):
            chosen[f.name] = _parse(declared, raw, declared.env)
    return Settings(**chosen, plugin_variables=variables)


# Settings that were the core's and are now a built-in notifier's option (its
# ``[plugins.NAME]`` key, overridden by the same environment variable as before): a keyword
# of the former name still sets it for one release, with a notice naming the new place.
FORMER_SETTINGS: Mapping[str, tuple[str, str]] = {
    "smtp_url": ("PAIRSCREEN_SMTP_URL", "[plugins.email] smtp_url"),
    "mail_from": ("PAIRSCREEN_MAIL_FROM", "[plugins.email] mail_from"),
    "telegram_token": ("PAIRSCREEN_TELEGRAM_TOKEN", "[plugins.telegram] token"),
    "telegram_api": ("PAIRSCREEN_TELEGRAM_API", "[plugins.telegram] api"),
    "webhook_secret": ("PAIRSCREEN_WEBHOOK_SECRET", "[plugins.webhook] secret"),
    "discord_webhook_prefixes": (
        "PAIRSCREEN_DISCORD_WEBHOOK_PREFIXES",
        "[plugins.chat] discord_webhook_prefixes",
    ),
    "slack_webhook_prefixes": (
        "PAIRSCREEN_SLACK_WEBHOOK_PREFIXES",
        "[plugins.chat] slack_webhook_prefixes",
    ),
}
PLUGIN_VARIABLE_PREFIX = "PAIRSCREEN_"


def plugin_variables_of(
    env: Mapping[str, str], values: dict[str, Any]
) -> tuple[tuple[str, str], ...]:
    """The ``PAIRSCREEN_*`` variables that are no setting's (a plugin option may declare one
    as its override), empty ones left out, with a former setting's keyword in ``values``
    moved to its variable (and out of ``values``) with its notice."""
    own = {declared.env for _, declared in declarations()}
    found = {
        name: text
        for name, text in env.items()
        if name.startswith(PLUGIN_VARIABLE_PREFIX) and name not in own and text
    }
    for former, (variable, place) in FORMER_SETTINGS.items():
        given = values.pop(former, None)
        if given is None:
            continue
        moved("the setting", former, f"{place} (or {variable})")
        found[variable] = ",".join(given) if isinstance(given, (tuple, list)) else str(given)
    return tuple(sorted(found.items()))


def environ_of(settings: Settings) -> dict[str, str | None]:
    """The environment that :func:`load_settings` reads back as ``settings`` (None: unset)."""
    rendered: dict[str, str | None] = {}
    for f, declared in declarations():
        value = getattr(settings, f.name)
        rendered[declared.env] = None if value is None else declared.parser.render(value)
    rendered.update(settings.plugin_variables)
    return rendered


def export_settings(settings: Settings, environ: MutableMapping[str, str] | None = None) -> None:
    """Put ``settings`` in the environment, for child processes (uvicorn workers, the worker)."""
    target = os.environ if environ is None else environ
    for name, text in environ_of(settings).items():
        if text is None:
            target.pop(name, None)
        else:
            target[name] = text


def default_text(name: str) -> str:
    """A setting's default as people read it: its text, or what a computed default is."""
    f = Settings.__dataclass_fields__[name]
    declared: Declaration = f.metadata["setting"]
    if declared.shown_default is not None:
        return declared.shown_default
    if f.default is None:
        return "unset"
    return declared.parser.render(f.default) or "empty"


def markdown_table() -> str:
    """The settings table of ``docs/configuration.md``."""
    rows = [
        "| Environment variable | CLI flag | Default | Meaning |",
        "| --- | --- | --- | --- |",
    ]
    for f, declared in declarations():
        default = default_text(f.name)
        if declared.shown_default is None and f.default not in (None, ""):
            default = f"`{default}`"
        flag = f"`{declared.flag}`" if declared.flag else ""
        meaning = declared.help.replace("|", "\\|")
        rows.append(f"| `{declared.env}` | {flag} | {default} | {meaning} |")
    return "\n".join(rows) + "\n"


def components_markdown() -> str:
    """The ``[components]`` table of ``docs/configuration.md``: each key, what it chooses,
    the name used when nothing chooses, and the setting that overrides it."""
    rows = [
        "| Key | Chooses | Unset | Overridden by |",
        "| --- | --- | --- | --- |",
    ]
    for c in COMPONENTS:
        unset = f"`{c.builtin}`" if c.builtin else "required"
        rows.append(f"| `{c.key}` | {c.chooses} | {unset} | `{c.env}` |")
    return "\n".join(rows) + "\n"
