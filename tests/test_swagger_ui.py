"""Swagger UI at ``/api/v1/ui``, used the way a person explores the API.

Headless Debian Chromium (``tests/support/chromium.py``) opens the UI of a live server,
executes ``/me`` without a key (the UI shows the 401), authorises with a Personal key through
the Authorize dialog, and executes ``/me`` and ``/pairs``: both show 200 with the caller's
account and the latest screen's pairs. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json

import pytest

from tests.support.chromium import artifact_path, headless_chromium, missing_reason
from tests.support.live_server import live_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or ""),
]

WAIT_SECONDS = 30


def _operation_block(driver, wait, path: str):  # type: ignore[no-untyped-def]
    """The opblock of ``GET path``, expanded, with "Try it out" switched on."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    block = wait.until(
        ec.presence_of_element_located(
            (
                By.XPATH,
                f"//span[contains(@class,'opblock-summary-path') and @data-path='{path}']"
                "/ancestor::div"
                "[contains(concat(' ', normalize-space(@class), ' '), ' opblock ')][1]",
            )
        )
    )
    if "is-open" not in (block.get_attribute("class") or ""):
        block.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
    try_out = wait.until(lambda d: block.find_elements(By.CSS_SELECTOR, "button.try-out__btn"))[0]
    if "cancel" not in (try_out.get_attribute("class") or ""):
        try_out.click()
    return block


def _execute(driver, wait, block) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Click Execute; the (status, body) the UI shows for the live response."""
    from selenium.webdriver.common.by import By

    for old in block.find_elements(By.CSS_SELECTOR, "button.btn-clear"):
        old.click()  # forget the previous answer, so the next one is surely new
    wait.until(lambda d: not block.find_elements(By.CSS_SELECTOR, ".live-responses-table"))
    block.find_element(By.CSS_SELECTOR, "button.execute").click()
    status = wait.until(
        lambda d: [
            s
            for s in block.find_elements(
                By.CSS_SELECTOR, ".live-responses-table .response .response-col_status"
            )
            if s.text.strip()
        ]
    )[0]
    body = block.find_element(
        By.CSS_SELECTOR, ".live-responses-table .response-col_description .microlight"
    )
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", status)
    return status.text.strip(), body.get_attribute("textContent") or ""


def _authorize(driver, wait, key: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "button.btn.authorize"))).click()
    field = wait.until(
        ec.visibility_of_element_located(
            (By.CSS_SELECTOR, ".modal-ux input[aria-label='auth-bearer-value']")
        )
    )
    field.send_keys(key)
    driver.find_element(By.CSS_SELECTOR, ".modal-ux button.modal-btn.auth.authorize").click()
    # Once authorised the dialog says so and masks the value.
    wait.until(
        ec.presence_of_element_located(
            (By.XPATH, "//div[contains(@class,'modal-ux')]//h6[normalize-space()='Authorized']")
        )
    )
    driver.find_element(By.CSS_SELECTOR, ".modal-ux button.btn-done").click()
    wait.until(ec.invisibility_of_element_located((By.CSS_SELECTOR, ".modal-ux")))


def test_swagger_ui_authorises_and_executes_me_and_pairs(runtime, keys, database_url):
    from selenium.webdriver.support.ui import WebDriverWait

    with live_server(database_url) as base, headless_chromium() as driver:
        import httpx

        expected_pairs = httpx.get(
            f"{base}/pairs", headers={"Authorization": f"Bearer {keys.personal}"}, timeout=30
        ).json()
        wait = WebDriverWait(driver, WAIT_SECONDS)
        driver.get(f"{base}/ui/")
        assert "Swagger UI" in driver.title

        me = _operation_block(driver, wait, "/me")
        status, body = _execute(driver, wait, me)
        assert status == "401", f"/me without a key showed {status}: {body}"

        _authorize(driver, wait, keys.personal)

        status, body = _execute(driver, wait, me)
        assert status == "200", f"/me showed {status}: {body}"
        account = json.loads(body)
        assert account["email"] == "personal@example.com"
        assert account["tier"] == "personal"
        driver.save_screenshot(str(artifact_path("swagger-ui-me.png")))

        pairs = _operation_block(driver, wait, "/pairs")
        status, body = _execute(driver, wait, pairs)
        assert status == "200", f"/pairs showed {status}: {body}"
        shown = json.loads(body)
        assert shown["count"] == expected_pairs["count"] == len(shown["pairs"])
        assert [p["pair"] for p in shown["pairs"]] == [p["pair"] for p in expected_pairs["pairs"]]
        path = artifact_path("swagger-ui-pairs.png")
        driver.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
