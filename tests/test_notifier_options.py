"""The built-in notifiers' servers and secrets are their plugins' options: set in
``[plugins.email]``, ``[plugins.telegram]``, ``[plugins.webhook]``, ``[plugins.chat]``,
overridden by the same environment variables as before, hidden wherever options are shown,
and the former core settings still working for one release with one notice."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from pairscreen import clock, deprecation
from pairscreen.config import load_settings
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.options_table import builtin_options_markdown
from pairscreen.plugin_system.registry import PluginError, Plugins
from pairscreen.types import Notification
from tests.support.cli import newcomer_env, run_cli
from tests.support.receivers import SmtpCollector, free_port

DEMO_UNIVERSE = (Path(clock.__file__).resolve().parent / "demo_universe.toml").read_text()
PASSWORD = "hunter2-smtp"
TOKEN = "123456:telegram-token"


@pytest.fixture(autouse=True)
def fresh_notices() -> None:
    deprecation.forget()  # each test counts its own notices


def built_ins(environ: dict[str, str], tables: dict[str, dict[str, object]]) -> Plugins:
    settings = load_settings({"PAIRSCREEN_LOAD_PLUGINS": "", **environ})
    return Plugins(load_plugins(settings), settings, tables)


@pytest.fixture()
def smtp() -> Iterator[tuple[SmtpCollector, int]]:
    from aiosmtpd.controller import Controller

    handler, port = SmtpCollector(), free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


NOTE = Notification(
    id=1,
    idempotency_key="options.1.email",
    channel="email",
    address="alice@example.com",
    subject="subject",
    text="text",
)


def test_the_email_table_reaches_the_notifier_and_it_mails(smtp):
    handler, port = smtp
    plugins = built_ins(
        {},
        {"email": {"smtp_url": f"smtp://127.0.0.1:{port}", "mail_from": "table@example.com"}},
    )
    plugins.notifiers.get("email").deliver(NOTE)
    (got,) = handler.messages
    assert got.mail_from == "table@example.com" and got.rcpt_tos == ["alice@example.com"]


def test_the_environment_variable_beats_the_table(smtp):
    handler, port = smtp
    plugins = built_ins(
        {"PAIRSCREEN_SMTP_URL": f"smtp://127.0.0.1:{port}"},
        {"email": {"smtp_url": f"smtp://127.0.0.1:{free_port()}"}},
    )
    plugins.notifiers.get("email").deliver(NOTE)
    assert len(handler.messages) == 1  # the table's port has no server: the variable won
    chat = built_ins(
        {"PAIRSCREEN_SLACK_WEBHOOK_PREFIXES": "https://a.example/, https://b.example/"},
        {"chat": {"slack_webhook_prefixes": ["https://table.example/"]}},
    ).options["chat"]
    assert chat["slack_webhook_prefixes"] == ("https://a.example/", "https://b.example/")


def test_each_notifier_has_its_own_table():
    plugins = built_ins(
        {},
        {
            "telegram": {"token": TOKEN, "api": "http://bot.example"},
            "webhook": {"secret": "whsec"},
            "chat": {"discord_webhook_prefixes": ["https://discord.example/hooks/"]},
        },
    )
    telegram = plugins.notifiers.get("telegram")
    assert (telegram.token, telegram.api) == (TOKEN, "http://bot.example")  # type: ignore[attr-defined]
    assert plugins.notifiers.get("webhook").secret == "whsec"  # type: ignore[attr-defined]
    assert plugins.notifiers.get("discord").prefixes == ("https://discord.example/hooks/",)  # type: ignore[attr-defined]


def test_a_bad_value_is_one_line_that_does_not_repeat_a_secret():
    with pytest.raises(PluginError) as bad:
        len(built_ins({}, {"chat": {"slack_webhook_prefixes": "https://hooks.slack.com/"}}).options)
    assert str(bad.value) == (
        "[plugins.chat] slack_webhook_prefixes must be a list of strings, got "
        "'https://hooks.slack.com/'"
    )
    with pytest.raises(PluginError) as secret:
        len(built_ins({}, {"telegram": {"token": 123456}}).options)
    assert "123456" not in str(secret.value)
    assert str(secret.value).startswith("[plugins.telegram] token must be a string, got an int")
    with pytest.raises(PluginError) as unknown:
        len(built_ins({}, {"telegram": {"tokn": "x"}}).options)
    assert str(unknown.value) == (
        "[plugins.telegram] tokn: not an option of plugin 'telegram' (its options: token, api)"
    )


def test_secrets_are_hidden_in_the_listing_and_the_reference(tmp_path):
    universe = tmp_path / "universe.toml"
    universe.write_text(DEMO_UNIVERSE + f'\n[plugins.webhook]\nsecret = "{PASSWORD}"\n')
    env = {**newcomer_env(tmp_path), "PAIRSCREEN_TELEGRAM_TOKEN": TOKEN}
    as_json = run_cli("--universe", str(universe), "plugins", "--all", "--json", env=env)
    as_text = run_cli("--universe", str(universe), "plugins", "--all", env=env)
    for done in (as_json, as_text):
        assert done.returncode == 0, done.stderr
        assert PASSWORD not in done.stdout + done.stderr and TOKEN not in done.stdout
    listed = {p["name"]: p for p in json.loads(as_json.stdout)["plugins"]}
    (secret,) = listed["webhook"]["options"]
    assert (secret["value"], secret["secret"], secret["env"]) == (
        "(secret, set)",
        True,
        "PAIRSCREEN_WEBHOOK_SECRET",
    )
    token = next(o for o in listed["telegram"]["options"] if o["name"] == "token")
    assert token["value"] == "(secret, set)"
    assert "option secret = '(secret, set)' (string, default ''" in as_text.stdout
    assert (
        '| `[plugins.email]` | `smtp_url` | string | `""` (secret) | `PAIRSCREEN_SMTP_URL` |'
        in builtin_options_markdown()
    )


def test_the_former_setting_warns_once_and_works(caplog):
    quiet = {"PAIRSCREEN_LOAD_PLUGINS": ""}
    with caplog.at_level(logging.WARNING):
        settings = load_settings(quiet, smtp_url="smtp://mail.example:2525")
        again = load_settings(quiet, smtp_url="smtp://mail.example:2525")
    assert settings == again
    said = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert said == [
        "the setting: smtp_url is deprecated and still works for this release; write "
        "[plugins.email] smtp_url (or PAIRSCREEN_SMTP_URL) instead"
    ]
    plugins = Plugins(load_plugins(settings), settings)
    assert plugins.options["email"]["smtp_url"] == "smtp://mail.example:2525"
    assert plugins.notifiers.get("email").smtp_url == "smtp://mail.example:2525"  # type: ignore[attr-defined]
