"""The hooks a pairscreen plugin implements: this module is the plugin author's manual.

A plugin is a module (or object) with functions decorated ``@hookimpl`` and named after the
specs below. Every ``pairscreen_register_*`` hook returns a list of typed components; the
framework collects them into named registries that reject duplicate names, so one plugin may
contribute several metrics, sources or renderers; each component must satisfy the
Protocol its hook returns a list of (checked when the registry is built, a mismatch is an
error naming the plugin). Hooks evolve only by adding keyword arguments, so a plugin written
today keeps working: an implementation names only the arguments it uses. Every
``pairscreen_register_*`` hook is given the service's :class:`~pairscreen.Settings` as
``settings`` and the plugin's own options as ``options`` (opt-in like any argument), so a
plugin never reads the environment itself.

Every hook is called through pluggy once per implementing plugin, with all of the hook's
``wrapper=True`` (or ``hookwrapper=True``) implementations around each call: a wrapper sees,
and may change, one plugin's answer at a time, and the framework knows which plugin
contributed each component (a plugin contributes components of its own through a plain
implementation, not a wrapper).

Import what you need from the public contracts only (``pairscreen.contracts``; the
top-level package re-exports the same names)::

    from pairscreen.contracts import hookimpl, Metric, MetricField, PairPanel
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pluggy

from pairscreen.config import Settings
from pairscreen.contracts import (
    ChartRenderer,
    Command,
    Filter,
    MarketSource,
    Metric,
    Notifier,
    PegEventChange,
    PegSource,
    PluginOption,
    Scorer,
    Strategy,
)
from pairscreen.contracts.hooks import PROJECT_NAME as PROJECT_NAME
from pairscreen.contracts.hooks import hookimpl as hookimpl

hookspec = pluggy.HookspecMarker(PROJECT_NAME)


# ---------------------------------------------------------------------------
# The plugin's own settings
# ---------------------------------------------------------------------------


@hookspec
def pairscreen_plugin_options() -> list[PluginOption]:
    """Return the options this plugin takes, each with its default and what it is for.

    A universe file sets them in the plugin's own table, ``[plugins.<name>]`` (the name
    ``pairscreen plugins`` lists: the entry point's name, ``"local:<file>.py"``). A key the
    plugin does not declare, or a value of the wrong type, stops the service at start-up
    with a sentence naming the plugin. The plugin's ``pairscreen_register_*`` hooks get the
    values, defaults filled in, as ``options``.
    """


# ---------------------------------------------------------------------------
# Market data
# ---------------------------------------------------------------------------


@hookspec
def pairscreen_register_market_sources(
    settings: Settings, options: Mapping[str, Any]
) -> list[MarketSource]:
    """Return the market-data sources this plugin provides.

    A source is chosen by ``name`` in the universe file's ``[components] market_source =
    "..."``; its options are passed to :meth:`MarketSource.fetch_candles` as ``options``:
    the keys given in this plugin's ``[plugins.<name>]`` table when it declares options
    (``pairscreen_plugin_options``), else the universe's ``[market]`` table.
    Called once when the plugins load; every plugin's list is collected.
    """


# ---------------------------------------------------------------------------
# Screening: metrics, filters, strategies, score
# ---------------------------------------------------------------------------


@hookspec
def pairscreen_register_metrics(settings: Settings, options: Mapping[str, Any]) -> list[Metric]:
    """Return the metrics this plugin provides.

    Each metric computes its ``fields`` over a whole :class:`~pairscreen.contracts.PairPanel` (one
    row per pair) and returns one array per field. Its fields appear in ``metrics`` of
    ``/pair/{a}/{b}`` and of every survivor in ``/screen/latest``; a field name may be
    provided by only one metric. A metric that raises during a live ``/pair`` is logged with
    its name and its fields are left out of that response rather than failing it (a filter
    rule that needs one of them rejects the pair with a reason naming the failed metric);
    during ``screen run`` or ``evaluate`` it stops the command with the "plugin failed"
    status, since a screen or a replay missing a metric would be wrong, not partial.
    """


@hookspec
def pairscreen_register_filters(settings: Settings, options: Mapping[str, Any]) -> list[Filter]:
    """Return the screen filters this plugin provides (the built-in one is ``default``).

    A filter decides which pairs survive the screen and what ``filter_reason`` says for the
    others: its rules run in order over whole arrays and the first that fails gives the reason
    ``"<code>: <text>"``. The universe file's ``[components] filter = "<name>"`` picks the
    filter the service uses (``default`` unless set); the keys of its ``[screen]`` table
    override the filter's ``thresholds`` and must be among them. Every metric field a rule of
    the chosen filter lists in its ``inputs`` must be provided by some loaded metric, or the
    service does not start; a field whose metric fails on a batch makes that rule reject the
    pairs it sees, naming the failed metric, and the rule's ``check`` is not called.
    ``/screen/latest`` counts rejections per code of the filter's rules and shows its name and
    thresholds.
    """


@hookspec
def pairscreen_register_strategies(
    settings: Settings, options: Mapping[str, Any]
) -> list[Strategy]:
    """Return the backtest strategies this plugin provides.

    The service runs the strategy named in its settings (``accumulation`` by default) twice
    per pair: once starting in leg A and once starting in leg B.
    """


@hookspec
def pairscreen_register_scorers(settings: Settings, options: Mapping[str, Any]) -> list[Scorer]:
    """Return the survivor scores this plugin provides (the built-in one is ``score``).

    The service ranks survivors with the scorer the universe's ``[components] scorer`` names
    (``PAIRSCREEN_SCORER`` overrides it).
    """


# ---------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------


@hookspec
def pairscreen_register_chart_renderers(
    settings: Settings, options: Mapping[str, Any]
) -> list[ChartRenderer]:
    """Return the chart renderers this plugin provides.

    ``/pair/{a}/{b}/chart.png`` is drawn by the renderer named in the settings (``default``
    unless configured). Renderers are called from several threads at once and must not use
    global plotting state.
    """


# ---------------------------------------------------------------------------
# Peg monitoring
# ---------------------------------------------------------------------------


@hookspec
def pairscreen_register_peg_sources(
    settings: Settings, options: Mapping[str, Any]
) -> list[PegSource]:
    """Return the peg reference sources this plugin provides.

    The universe names, per tokenized asset, the sources to ask for its reference price.
    A source that raises or answers nothing is skipped and logged; an answer older than the
    source's ``max_age`` does not count.
    """


@hookspec
def pairscreen_peg_event_changed(event: PegEventChange) -> None:
    """Called once for every depeg event that opens or closes (all implementations run).

    The framework's own implementation (``DepegAlertsPlugin`` in
    ``pairscreen/notify/depeg_alerts.py``) queues the depeg e-mails in the outbox; a plugin's
    implementation runs beside it (to page someone, say) and cannot stop it: an
    implementation that raises is logged with its plugin's name and the others still run.
    """


# ---------------------------------------------------------------------------
# Notifications
# ---------------------------------------------------------------------------


@hookspec
def pairscreen_register_notifiers(settings: Settings, options: Mapping[str, Any]) -> list[Notifier]:
    """Return the notifiers this plugin provides, one per channel kind it delivers.

    The outbox worker hands every pending notification of a channel kind to the notifier
    of that ``name``; a :class:`~pairscreen.contracts.DeliveryError` schedules a retry. A
    notifier takes its servers and secrets from its plugin's ``options`` (the built-ins:
    ``[plugins.email] smtp_url``, ``[plugins.telegram] token``, ``[plugins.webhook] secret``
    ...), declared ``secret`` so that no listing shows them.

    A notifier that is also a :class:`~pairscreen.contracts.ChannelNotifier` (a ``channel``
    :class:`~pairscreen.contracts.ChannelSpec` and ``check_address``) offers its ``name`` as a
    channel kind users choose: ``PUT /me/channels/{kind}``, ``GET /me/channels/kinds``,
    ``pairscreen channels set --kind`` and the website's account form accept it, its address
    is checked by ``check_address`` and its ``secret`` part is never shown outside the CLI.
    The built-in kinds (``email``, ``telegram``, ``webhook``, ``discord``, ``slack``) are
    declared this way too. A kind is 1 to 20 lowercase letters, digits or underscores.
    """


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------


@hookspec
def pairscreen_register_commands(settings: Settings, options: Mapping[str, Any]) -> list[Command]:
    """Return the commands this plugin adds to ``pairscreen``.

    Each :class:`~pairscreen.contracts.Command` (a :class:`~pairscreen.contracts.CommandSpec` is the
    easy way to make one) runs as ``pairscreen <group> <name>``: the
    group is the plugin's namespace (one plugin per group) and must not be a core command
    (``serve``, ``channels`` ...), or the command line stops with a sentence naming the
    plugin. Called when a command line that may need it is built (``--help``, or a command
    that is not a core one), before it is parsed, so ``settings`` come
    from the environment alone and ``options`` are the plugin's declared defaults (no
    universe file is read yet); ``run`` gets the command's final settings. A command that
    raises prints one line naming the plugin and exits non-zero.
    """
