"""Debian's headless Chromium driven by selenium through Debian's chromedriver.

Nothing is downloaded: the browser and the driver are the Debian packages ``chromium`` and
``chromium-driver`` (``.ci/run`` installs them when missing). The flags keep Chromium off the
network (this machine's network is closed; without them it retries Google's hosts).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.pinned_clock import date_shift_script

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",  # WebGL in software (the map's scattergl) without a GPU
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1800",
)


def missing_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return (
            f"{CHROMIUM} is absent: install Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver; .ci/run does it as root)"
        )
    if not CHROMEDRIVER.exists():
        return f"{CHROMEDRIVER} is absent: install Debian's chromium-driver"
    return None


@contextmanager
def headless_chromium(downloads: Path | None = None) -> Iterator:
    """A selenium ``webdriver.Chrome`` on Debian's Chromium with a fresh profile; files the
    pages download are saved to ``downloads`` without asking, when given."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = Path(tempfile.mkdtemp(prefix="pairscreen-chromium-"))
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    if downloads is not None:
        options.add_experimental_option(
            "prefs",
            {"download.default_directory": str(downloads), "download.prompt_for_download": False},
        )
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    shifted = date_shift_script()
    if shifted is not None:  # the page's clock reads the suite's pinned today too
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": shifted})
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def artifact_path(name: str) -> Path:
    """Where a test saves an artifact (the repository's gitignored ``test-artifacts/``)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name
