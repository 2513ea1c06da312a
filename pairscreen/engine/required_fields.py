"""The metric fields the framework itself reads, declared once and checked at start-up.

Every other metric field is a plugin's business: the core passes it through to ``metrics``
and to the filter and the scorer without naming it. A field listed here, or read by a rule
of the chosen screen filter, must be provided by some loaded metric (with the declared
type), or the service refuses to start with an error naming the field and its reader;
otherwise a missing plugin would surface much later as a ``KeyError`` in a request.
"""

from __future__ import annotations

from dataclasses import dataclass

from pairscreen.contracts.metrics import FieldType, MetricField
from pairscreen.plugin_system.registry import PluginError, Plugins


@dataclass(frozen=True)
class RequiredField:
    name: str
    type: FieldType
    needed_by: str


POSITION = RequiredField(
    "position", "number", "the /pairs list, the watchlist notifier and the pair chart"
)
ZONE = RequiredField("zone", "string", "the /pairs list and the pair chart")
CORE_FIELDS: tuple[RequiredField, ...] = (POSITION, ZONE)


def check_required_fields(plugins: Plugins, filter_name: str) -> None:
    """Raise :class:`PluginError` unless the loaded metrics provide every field the core and
    the filter ``filter_name`` read."""
    provided: dict[str, MetricField] = {f.name: f for m in plugins.metrics for f in m.fields}
    for required in CORE_FIELDS:
        declared = provided.get(required.name)
        if declared is None:
            raise PluginError(
                f"no metric provides the field {required.name!r}, which {required.needed_by} "
                "need; load a metric plugin that provides it"
            )
        if declared.type != required.type:
            raise PluginError(
                f"metric field {required.name!r} is declared {declared.type!r}, but "
                f"{required.needed_by} need a {required.type!r}"
            )
    screen_filter = plugins.filters.get(filter_name)
    for rule in screen_filter.rules:
        for name in rule.inputs:
            if name not in provided:
                raise PluginError(
                    f"no metric provides the field {name!r}, which rule {rule.code!r} of the "
                    f"screen filter {screen_filter.name!r} needs; load a metric plugin that "
                    "provides it or choose another filter in the universe's [screen] table"
                )
