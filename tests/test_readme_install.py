"""README command 1, as written, gives a working website: the new user's first minute.

The install part of the README's command 1 (read from README.md, so the test follows the
README) runs verbatim in a fresh copy of the checkout (what ``git clone`` would give: the
tracked files and the new ones git does not ignore), creating its own virtual environment;
``pip`` uses this machine's pip configuration and cache, as a person's would. That install is
``editable_mode=strict``: the package is a tree of symlinks to the copy. Then the README's
``pairscreen demo`` runs from that environment on a free port with a data dir of its own, and
every file the site's page, modules and stylesheet name (tests/support/site_files.py), and
Swagger UI's, must answer 200; the API answers the key the demo printed; in headless Chromium
the site signs in with that key and shows the screen, one row per survivor (skipped, saying
why, without Debian's chromium). Then a wheel of the copy (``pip wheel``), installed over it:
plain files in site-packages, the vendored plotly.js among them, every file served again.
The copy and its environment are removed at the end (about 600 MB).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from pairscreen import clock
from tests.support.chromium import artifact_path, headless_chromium, missing_reason
from tests.support.databases import TEST_DATABASE_URL
from tests.support.live_server import free_port
from tests.support.site_files import Fetched, crawl, failures

pytestmark = [
    pytest.mark.slow,
    # The README's demo is SQLite whatever the suite's database: once per CI run is enough.
    pytest.mark.skipif(bool(TEST_DATABASE_URL), reason="SQLite pass only"),
]

REPO = Path(__file__).resolve().parents[1]
PLOTLY = "/static/vendor/plotly.js-strict-dist-min/plotly-strict.min.js"
ESSENTIAL = ("/", "/static/css/site.css", "/static/js/app.js", PLOTLY)
STATIC_OF = "import pairscreen.web.site as s; print(s.static_dir())"


def installed_static(clone: Path) -> Path:
    """Where the copy's environment imports the site's files from (asked from outside the
    copy: run inside it, Python would import the checkout's own folder first)."""
    probe = [str(clone / ".venv" / "bin" / "python"), "-c", STATIC_OF]
    return Path(run(probe, clone.parent).strip())


def readme_command_one() -> tuple[str, list[str]]:
    """Command 1 of README.md's "Set up" block: (its install part, its demo command)."""
    setup = (REPO / "README.md").read_text().split("## Set up", 1)[1]
    block = re.search(r"```sh\n(.*?)```", setup, re.S)
    assert block, "README.md's Set up section has no sh block"
    lines = [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.startswith("#")]
    *install, demo = (part.strip() for part in lines[0].split("&&"))
    assert demo.startswith(".venv/bin/pairscreen demo"), lines[0]
    assert any(part.startswith(".venv/bin/pip install") for part in install), lines[0]
    return " && ".join(install), shlex.split(demo)


def fresh_copy(into: Path) -> Path:
    """The checkout as a clone of it would be, with this working tree's changes."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name, follow_symlinks=False)
    return into


def person_env() -> dict[str, str]:
    """This machine's environment without a virtual environment or pairscreen settings
    (pip's configuration and cache kept), on the suite's pinned clock, which the browser
    reads too."""
    dropped = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "DATABASE_URL", "XDG_DATA_HOME")
    kept = {
        k: v
        for k, v in os.environ.items()
        if k not in dropped and not k.startswith(("PAIRSCREEN_", "PYTEST_"))
    }
    return {**kept, clock.SHIFT_VARIABLE: os.environ.get(clock.SHIFT_VARIABLE, "")}


@contextmanager
def demo(clone: Path, command: list[str], data_dir: Path) -> Iterator[tuple[str, str]]:
    """The README's demo command from ``clone``, on a free port: (site root, its output)."""
    port = free_port()
    log = data_dir.with_suffix(".log")
    with log.open("w") as output:
        process = subprocess.Popen(
            [*command, "--port", str(port), "--data-dir", str(data_dir), "--quiet"],
            cwd=clone,
            env=person_env(),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its worker child stops with it
        )
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                pytest.fail(f"the demo exited ({process.returncode}):\n{log.read_text()}")
            try:
                if httpx.get(f"{root}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        yield root, log.read_text()
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C, as the README says
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def the_site_works(root: str, output: str) -> tuple[str, int]:
    """Every file of the site and of Swagger UI answers 200, and the API the demo's key:
    (that key, the survivors ``/pairs`` lists)."""

    def get(path: str) -> Fetched:
        r = httpx.get(f"{root}{path}", timeout=30)
        return Fetched(r.status_code, r.headers.get("content-type", ""), r.text)

    found = crawl(get, start=("/", "/api/v1/ui/"))
    assert not failures(found), failures(found)
    assert set(ESSENTIAL) <= set(found), sorted(found)
    assert any(p.startswith("/api/v1/ui/") and p.endswith(".js") for p in found), sorted(found)
    key = re.search(r"personal\s+\S+\s+key (rr_\w+)", output)
    assert key, output
    pairs = httpx.get(
        f"{root}/api/v1/pairs", headers={"Authorization": f"Bearer {key[1]}"}, timeout=30
    )
    assert pairs.status_code == 200 and pairs.json()["pairs"], pairs.text
    return key[1], len(pairs.json()["pairs"])


def the_screen_renders(root: str, key: str, survivors: int) -> None:
    """Signed in with ``key``, the site shows the screen's table, one row per survivor."""
    from selenium.webdriver.support.ui import WebDriverWait

    with headless_chromium() as driver:
        driver.set_window_size(1366, 900)
        driver.get(f"{root}/")
        wait = WebDriverWait(driver, 30)
        wait.until(lambda d: d.find_element("id", "key")).send_keys(key)
        driver.find_element("css selector", "#sign-in button").click()
        rows = "#survivors tbody tr"
        wait.until(lambda d: len(d.find_elements("css selector", rows)) == survivors)
        driver.save_screenshot(str(artifact_path("readme-install-screen-1366.png")))


def run(command: str | list[str], cwd: Path) -> str:
    done = subprocess.run(
        command,
        shell=isinstance(command, str),
        cwd=cwd,
        env=person_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh copy of the checkout, README command 1's install done in it."""
    install, _ = readme_command_one()
    clone = fresh_copy(tmp_path_factory.mktemp("readme") / "pairscreen")
    try:
        started = time.monotonic()
        run(install, clone)
        print(f"README install: {time.monotonic() - started:.1f} s")
        yield clone
    finally:
        shutil.rmtree(clone, ignore_errors=True)  # its .venv is most of a gigabyte


def test_readme_command_one_serves_every_file_and_renders_the_screen(installed, tmp_path):
    static = installed_static(installed)
    assert (static / "index.html").is_symlink(), f"not a strict editable install: {static}"
    browser_missing = missing_reason()
    started = time.monotonic()
    with demo(installed, readme_command_one()[1], tmp_path / "data") as (root, output):
        key, survivors = the_site_works(root, output)
        if browser_missing is None:
            the_screen_renders(root, key, survivors)
    print(f"demo, every file and the screen (strict editable): {time.monotonic() - started:.1f} s")
    if browser_missing is not None:
        pytest.skip(f"every file served; the screen not rendered: {browser_missing}")


def test_a_wheel_of_the_checkout_serves_every_file(installed, tmp_path):
    started = time.monotonic()
    run([".venv/bin/pip", "wheel", "-q", "--no-deps", ".", "-w", "dist"], installed)
    (wheel,) = (installed / "dist").glob("pairscreen-*.whl")
    assert f"pairscreen/web{PLOTLY}" in zipfile.ZipFile(wheel).namelist()
    run([".venv/bin/pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)], installed)
    static = installed_static(installed)
    assert "site-packages" in static.parts and not (static / "index.html").is_symlink()
    with demo(installed, readme_command_one()[1], tmp_path / "data") as (root, output):
        the_site_works(root, output)
    print(f"wheel, its install, demo and every file: {time.monotonic() - started:.1f} s")
