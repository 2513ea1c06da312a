"""Plugins add what users choose and run: a third-party channel kind (``ntfy``, from
``tests/plugins/hook_ntfy_channel.py``) set by a user over HTTP and by the operator's CLI and
delivered to through the outbox; the plugin's own command; ``pairscreen plugins --hook/--all``
with hooks and versions; ``PAIRSCREEN_TRACE_PLUGINS``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pairscreen import clock
from pairscreen.db.connection import database
from pairscreen.db.models import Channel, Outbox
from pairscreen.notify import watchlist
from pairscreen.notify.outbox import deliver_pending
from pairscreen.notify.run import run_notifications
from pairscreen.plugin_system.registry import PluginError
from pairscreen.runtime import Runtime
from tests.conftest import make_client
from tests.support.cli import newcomer_env, run_cli
from tests.support.plugin_files import PLUGINS_DIR, plugin_file, runtime_with
from tests.support.positions import InMemoryCandles, set_position
from tests.support.receivers import HttpReceiver, free_port
from tests.test_third_party_plugin import install_distribution

BASE = "/api/v1"
PLUGIN = "hook_ntfy_channel"
LOCAL = f"local:{PLUGIN}.py"
TOPIC = "/pairs-alerts-k3y"  # the topic is the secret
BUILT_IN_KINDS = ["email", "telegram", "webhook", "discord", "slack"]


@pytest.fixture()
def receiver() -> Iterator[HttpReceiver]:
    r = HttpReceiver().start()
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture()
def plugins_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    shutil.copy(PLUGINS_DIR / f"{PLUGIN}.py", folder)
    return folder


def put(client, key: str, kind: str, body: object):  # type: ignore[no-untyped-def]
    return client.request(
        "PUT", f"{BASE}/me/channels/{kind}", headers={"Authorization": f"Bearer {key}"}, json=body
    )


def test_a_users_ntfy_channel_set_over_http_receives_a_watchlist_notification(
    runtime: Runtime, keys, receiver: HttpReceiver
) -> None:
    rt = runtime_with(runtime, PLUGIN)
    c = make_client(rt)
    with c.client:
        kinds = c.get(f"{BASE}/me/channels/kinds", keys.personal).json()["kinds"]
        assert [k["name"] for k in kinds] == [*BUILT_IN_KINDS, "ntfy"]
        assert kinds[-1] == {
            "name": "ntfy",
            "label": "ntfy",
            "address_hint": "a topic URL: https://ntfy.sh/your-secret-topic",
            "secret": "url_path",
            "self_service": True,
        }
        assert {k["name"]: k["self_service"] for k in kinds}["webhook"] is False
        assert c.get(f"{BASE}/me/channels/kinds", keys.no_tier).status_code == 403
        assert c.get(f"{BASE}/me/channels/kinds").status_code == 401
        r = put(c, keys.personal, "ntfy", {"address": receiver.url + TOPIC})
        assert r.status_code == 200, r.text
        assert r.json() == {
            "kind": "ntfy",
            "address": "http://127.0.0.1/…",
            "enabled": True,
            "depeg_alerts": False,
        }
        shown = c.get(f"{BASE}/me", keys.personal)
        assert {ch["kind"]: ch["address"] for ch in shown.json()["channels"]}["ntfy"] == (
            "http://127.0.0.1/…"
        )
        assert TOPIC not in shown.text and TOPIC not in r.text
    with database.connection_context():
        assert Channel.get(Channel.kind == "ntfy").address == receiver.url + TOPIC
        rt.candles = InMemoryCandles(rt.candles.get())
        watchlist.add_item(rt.universe, "personal@example.com", "ETH/BTC")
        set_position(rt, "ETH", "BTC", 0.15)
        at = clock.now().replace(microsecond=0)
        assert run_notifications(rt, at=at).notifications == 2  # e-mail and ntfy
        deliver_pending(rt, now=at, worker_id="w")
        statuses = {o.channel: o.status for o in Outbox.select()}
    assert statuses["ntfy"] == "sent"
    (delivered,) = receiver.requests
    assert delivered.path == TOPIC
    assert delivered.headers["Title"].startswith("ETH/BTC entered the bottom zone")
    assert delivered.headers["X-Idempotency-Key"].endswith(".ntfy")
    assert delivered.body.decode().startswith("ETH/BTC")


@pytest.mark.parametrize(
    ("kind", "body", "says"),
    [
        ("pager", {"enabled": True}, "No channel kind 'pager': the kinds are email, telegram"),
        ("ntfy", {"address": "https://ntfy.sh/x"}, "the kinds are email, telegram, webhook"),
        ("PAGER", {"enabled": True}, "kind"),
        ("kinds", {"enabled": True}, ""),
    ],
)
def test_an_unregistered_kind_is_a_plain_text_400_naming_the_registered_ones(
    client, keys, kind: str, body: object, says: str
) -> None:
    """Without the plugin, ``ntfy`` is no kind; the contract's pattern refuses the rest."""
    r = put(client, keys.personal, kind, body)
    assert r.status_code in (400, 405), r.text
    assert r.headers["content-type"].startswith("text/plain") and says in r.text
    if kind == "ntfy":
        assert r.text.rstrip().endswith("(GET /me/channels/kinds describes them).")


def test_the_plugins_address_check_refuses_in_a_sentence_without_the_secret(
    runtime: Runtime, keys
) -> None:
    rt = runtime_with(runtime, PLUGIN)
    c = make_client(rt)
    with c.client:
        r = put(c, keys.personal, "ntfy", {"address": "https://ntfy.example/a/b/secret-topic"})
        assert r.status_code == 400, r.text
        assert r.text.strip() == (
            "An ntfy channel takes a topic URL (https://host/topic), got https://ntfy.example/…."
        )
        long = put(c, keys.personal, "ntfy", {"address": "https://ntfy.sh/" + "s" * 64 + "x"})
        assert long.status_code == 400 and "s" * 20 not in long.text


def test_a_kind_that_breaks_the_rules_stops_the_start(runtime: Runtime) -> None:
    from pairscreen import ChannelSpec, hookimpl
    from pairscreen.bootstrap import build_runtime

    module = plugin_file(PLUGIN)

    class Shouting(module.Ntfy):  # type: ignore[name-defined,misc]
        name = "NTFY"

    class Vague(module.Ntfy):  # type: ignore[name-defined,misc]
        name = "vague"
        channel = ChannelSpec("Vague", "anything", secret="some")  # type: ignore[arg-type]

    class Plugin:
        def __init__(self, notifier: object) -> None:
            self.notifier = notifier

        @hookimpl
        def pairscreen_register_notifiers(self) -> list[object]:
            return [self.notifier]

    for notifier, says in (
        (Shouting(), "channel kind 'NTFY'; a kind is 1 to 20 lowercase"),
        (Vague(), "a channel is a ChannelSpec whose secret is one of none, url_path, all"),
    ):
        with pytest.raises(PluginError, match=says):
            build_runtime(runtime.settings, migrate=False, extra_plugins=(Plugin(notifier),))


def test_channels_set_kind_from_the_cli(cli, keys, plugins_dir, monkeypatch) -> None:
    monkeypatch.setenv("PAIRSCREEN_PLUGINS_DIR", str(plugins_dir))
    url = "https://ntfy.sh/desk-alerts-0042"
    code, out, err = cli(
        "channels", "set", "personal@example.com", "--kind", "ntfy", "--address", url
    )
    assert code == 0, err
    assert f"ntfy      {url}  enabled" in out  # the operator sees it whole
    code, out, err = cli("channels", "list", "personal@example.com", "--json")
    assert {r["kind"]: r["address"] for r in json.loads(out)}["ntfy"] == url
    code, out, err = cli("channels", "disable", "personal@example.com", "ntfy")
    assert code == 0 and f"ntfy      {url}  disabled" in out
    for argv, message in (
        (("--kind", "pager", "--address", "x"), "channel kind must be one of email, telegram"),
        (("--kind", "ntfy"), "--kind and --address go together"),
        (("--kind", "ntfy", "--address", "ftp://x/y"), "an ntfy channel takes a topic URL"),
    ):
        code, out, err = cli("channels", "set", "personal@example.com", *argv)
        assert code == 2 and err.count("\n") == 1 and message in err, err


def test_hook_pairscreen_register_commands_runs_a_plugin_command(
    tmp_path: Path, plugins_dir: Path, receiver: HttpReceiver
) -> None:
    """``hook_ntfy_channel``'s ``pairscreen ntfy ping``: listed in --help, runs, and fails
    in one line naming the plugin."""
    env = {**newcomer_env(tmp_path), "PAIRSCREEN_PLUGINS_DIR": str(plugins_dir)}
    shown = run_cli("--help", env=env)
    assert shown.returncode == 0 and "commands of the plugin local:hook_ntfy_channel.py" in (
        shown.stdout
    )
    assert "ping" in run_cli("ntfy", "--help", env=env).stdout
    done = run_cli("ntfy", "ping", receiver.url + TOPIC, env=env)
    assert (done.returncode, done.stdout) == (0, "ntfy answered 200\n"), done.stderr
    (request,) = receiver.requests
    assert request.path == TOPIC and request.body == b"A test message from pairscreen."
    down = run_cli("ntfy", "ping", f"http://127.0.0.1:{free_port()}/t", env=env)
    assert down.returncode == 6 and down.stderr.count("\n") == 1
    assert down.stderr.startswith(
        f"pairscreen: error: plugin '{LOCAL}' failed: command 'ntfy ping' raised URLError"
    )
    usage = run_cli("ntfy", "ping", env=env)
    assert usage.returncode == 2 and "the following arguments are required: url" in usage.stderr


def test_a_plugin_command_named_like_a_core_one_is_refused_at_start(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "grabby.py").write_text(
        "from pairscreen import CommandSpec, hookimpl\n\n\n"
        "@hookimpl\ndef pairscreen_register_commands():\n"
        "    return [CommandSpec('channels', 'wipe', 'gone', lambda args, settings: 0)]\n"
    )
    env = {**newcomer_env(tmp_path), "PAIRSCREEN_PLUGINS_DIR": str(folder)}
    refused = (
        "pairscreen: error: plugin 'local:grabby.py' adds the command group 'channels', which "
        "is a command of pairscreen itself; a plugin's commands need a group name of their "
        "own\n"
    )
    # wherever the plugins' commands are read: the help that lists them, a group that is
    # not a core command's
    for argv in (("--help",), ("grabby", "wipe"), ("--data-dir", str(tmp_path), "nosuch")):
        done = run_cli(*argv, env=env)
        assert (done.returncode, done.stderr) == (2, refused), argv
    # a core command line does not load the plugins' commands to be parsed (start-up cost)
    # (a newcomer has no database yet: that is what stops it, status 3)
    core = run_cli("users", "list", env=env)
    assert core.returncode == 3 and "there is no database" in core.stderr, core.stderr


def listing(*argv: str, env: dict[str, str]) -> list[dict]:  # type: ignore[type-arg]
    done = run_cli("plugins", "--json", *argv, env=env)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["plugins"])


def test_plugins_hides_built_ins_unless_all_and_filters_by_hook(
    tmp_path: Path, plugins_dir: Path
) -> None:
    env = {**newcomer_env(tmp_path), "PAIRSCREEN_PLUGINS_DIR": str(plugins_dir)}
    (ours,) = listing(env=env)
    assert ours == {
        "name": LOCAL,
        "origin": f"local file {plugins_dir / (PLUGIN + '.py')}",
        "version": None,
        "hooks": ["pairscreen_register_commands", "pairscreen_register_notifiers"],
        "notifiers": [
            {
                "name": "ntfy",
                "channel": {"label": "ntfy", "secret": "url_path", "self_service": True},
            }
        ],
        "commands": ["ntfy ping"],
    }
    everything = {p["name"]: p for p in listing("--all", env=env)}
    assert everything["bands"]["version"] == "0.1.0"
    assert everything["chat"]["hooks"] == [
        "pairscreen_plugin_options",
        "pairscreen_register_notifiers",
    ]
    assert "pairscreen.notify.depeg_alerts.DepegAlertsPlugin" in everything
    notifiers = [p["name"] for p in listing("--all", "--hook", "register_notifiers", env=env)]
    assert notifiers == [
        "email",
        "telegram",
        "webhook",
        "chat",
        LOCAL,
    ]
    assert listing("--hook", "pairscreen_register_metrics", env=env) == []
    text = run_cli("plugins", "--hook", "register_commands", env=env)
    assert text.returncode == 0
    assert text.stdout == (
        f"{LOCAL}  (local file {plugins_dir / (PLUGIN + '.py')})\n"
        "  notifier ntfy: channel kind (ntfy, secret url_path, users set it)\n"
        "  command pairscreen ntfy ping\n"
        "  hooks: pairscreen_register_commands, pairscreen_register_notifiers\n"
    )
    none = run_cli("plugins", "--hook", "register_metrics", env=env)
    assert none.stdout == (
        "no plugins implementing pairscreen_register_metrics besides the built-ins "
        "(--all lists them)\n"
    )
    wrong = run_cli("plugins", "--hook", "register_everything", env=env)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert "--hook register_everything: no such hook; the hooks are pairscreen_" in wrong.stderr


def test_an_entry_point_plugin_is_listed_with_its_distribution_version(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    source = (PLUGINS_DIR / f"{PLUGIN}.py").read_text()
    install_distribution(site, "pairscreen_ntfy", source, "ntfy")
    env = {**newcomer_env(tmp_path), "PYTHONPATH": str(site), "PAIRSCREEN_LOAD_PLUGINS": "ntfy"}
    (ours,) = listing(env=env)
    assert (ours["name"], ours["version"]) == ("ntfy", "1.0")
    assert ours["origin"] == "entry point pairscreen_ntfy 1.0"


def test_trace_plugins_logs_each_hook_call_with_its_time(tmp_path: Path, plugins_dir: Path) -> None:
    env = {**newcomer_env(tmp_path), "PAIRSCREEN_PLUGINS_DIR": str(plugins_dir)}
    quiet = run_cli("plugins", env=env)
    assert quiet.returncode == 0 and "pairscreen.plugins.trace" not in quiet.stderr
    traced = run_cli("plugins", env={**env, "PAIRSCREEN_TRACE_PLUGINS": "1"})
    assert traced.returncode == 0, traced.stderr
    lines = [line for line in traced.stderr.splitlines() if "pairscreen.plugins.trace" in line]
    ours = [line for line in lines if "hook pairscreen_register_notifiers: " + LOCAL in line]
    assert ours, traced.stderr
    assert ours[0].split(" in ")[-1].endswith(" ms")
    float(ours[0].split(" in ")[-1].removesuffix(" ms"))
    assert any("hook pairscreen_register_metrics: bands" in line for line in lines)
    wrong = run_cli("plugins", env={**env, "PAIRSCREEN_TRACE_PLUGINS": "maybe"})
    assert wrong.returncode == 2 and "PAIRSCREEN_TRACE_PLUGINS must be one of" in wrong.stderr


def test_command_groups_belong_to_one_plugin_and_commands_are_well_named(runtime: Runtime) -> None:
    from pairscreen import CommandSpec, hookimpl
    from pairscreen.plugin_system.loader import load_plugins
    from pairscreen.plugin_system.registry import Plugins

    class Adds:
        def __init__(self, *commands: CommandSpec) -> None:
            self.commands = commands

        @hookimpl
        def pairscreen_register_commands(self) -> list[CommandSpec]:
            return list(self.commands)

    def commands_of(*plugins: Adds) -> list[tuple[str, str]]:
        loaded = Plugins(load_plugins(runtime.settings, extra=plugins), runtime.settings)
        return [(c.group, c.name) for _, c in loaded.commands]

    def spec(group: str, name: str) -> CommandSpec:
        return CommandSpec(group, name, "a command", lambda args, settings: 0)

    assert commands_of(Adds(spec("ntfy", "ping"), spec("ntfy", "topics"))) == [
        ("ntfy", "ping"),
        ("ntfy", "topics"),
    ]

    class Other(Adds):  # another plugin (plugins are told apart by name)
        pass

    with pytest.raises(PluginError, match="the command group 'ntfy' is taken by plugin"):
        commands_of(Adds(spec("ntfy", "ping")), Other(spec("ntfy", "topics")))
    with pytest.raises(PluginError, match="registers the command 'ntfy ping' twice"):
        commands_of(Adds(spec("ntfy", "ping"), spec("ntfy", "ping")))
    for group, name in (("Ntfy", "ping"), ("ntfy", "ping now"), ("", "ping")):
        with pytest.raises(PluginError, match="group and name are lowercase words"):
            commands_of(Adds(spec(group, name)))
    with pytest.raises(PluginError, match="as a command"):
        commands_of(Adds("not a command"))  # type: ignore[arg-type]
