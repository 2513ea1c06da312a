"""The command contract: a command a plugin adds to ``pairscreen``'s command line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import argparse

    from pairscreen.config import Settings

__all__ = ["Command", "CommandSpec"]


@runtime_checkable
class Command(Protocol):
    """A command a plugin adds to ``pairscreen``, in a group of its own: ``pairscreen <group>
    <name>``, listed by ``pairscreen --help`` and ``pairscreen <group> --help``.

    ``add_arguments`` adds the command's arguments to its parser (the global options are
    added for it); ``run`` gets the parsed arguments and the settings and returns the exit
    status (None: 0). Anything it raises ends the command with one line naming the plugin and
    a non-zero status. :class:`CommandSpec` builds one from two functions.
    """

    @property
    def group(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def help(self) -> str: ...

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace, settings: Settings) -> int | None: ...


@dataclass(frozen=True)
class CommandSpec:
    """A :class:`Command` made of functions: ``action`` runs it, ``arguments`` (optional)
    adds its arguments."""

    group: str
    name: str
    help: str
    action: Callable[[argparse.Namespace, Settings], int | None]
    arguments: Callable[[argparse.ArgumentParser], None] | None = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        if self.arguments is not None:
            self.arguments(parser)

    def run(self, args: argparse.Namespace, settings: Settings) -> int | None:
        return self.action(args, settings)
