"""The served contract is the file: ``openapi.yaml`` byte for byte, and the same as JSON.

A client generated from the served URL must see what a client generated from the file sees:
the named schemas (``PairSnapshot``, ``Screen`` …) as named models, not one anonymous model
per response, as when connexion served its resolved spec with every ``$ref`` inlined.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.contract import SPEC_PATH
from tests.support.live_server import serving
from tests.test_generated_client import CONFIG, PACKAGE, _generator

BASE = "/api/v1"


def test_served_yaml_is_the_file_byte_for_byte(client):
    r = client.client.get(f"{BASE}/openapi.yaml")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/yaml")
    assert r.content == SPEC_PATH.read_bytes()


def test_served_json_is_the_file_with_its_refs(client):
    r = client.client.get(f"{BASE}/openapi.json")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    served = json.loads(r.content)
    assert served == yaml.safe_load(SPEC_PATH.read_text())
    snapshot = served["paths"]["/pair/{a}/{b}"]["get"]["responses"]["200"]
    assert snapshot["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PairSnapshot"
    }


def test_the_documents_are_prepared_once_per_app(runtime, tmp_path):
    """Read when the app is built: a later change of the file is not served by that app."""
    from pairscreen.app import create_app

    spec = tmp_path / "openapi.yaml"
    shutil.copy(SPEC_PATH, spec)
    settings = dataclasses.replace(runtime.settings, openapi_path=spec)
    app = create_app(dataclasses.replace(runtime, settings=settings))
    spec.write_text(SPEC_PATH.read_text().replace("pairscreen API", "changed API"))
    with app.test_client() as c:
        first = c.get(f"{BASE}/openapi.yaml").content
        assert first == SPEC_PATH.read_bytes()
        assert c.get(f"{BASE}/openapi.yaml").content == first
        assert json.loads(c.get(f"{BASE}/openapi.json").content)["info"]["title"] == (
            "pairscreen API"
        )


def test_swagger_ui_reads_the_served_json(client):
    r = client.client.get(f"{BASE}/ui/")
    assert r.status_code == 200
    config = client.client.get(f"{BASE}/ui/swagger-ui-config.json")
    url = config.json()["url"] if config.status_code == 200 else r.text
    assert f"{BASE}/openapi.json" in url


def test_importing_the_app_raises_no_starlette_deprecation_warning():
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", "import pairscreen.app"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "StarletteDeprecationWarning" not in result.stderr, result.stderr


def _generate(source: list[str], out: Path) -> Path:
    """Generate the client from ``source`` (``--path FILE`` or ``--url URL``); its models."""
    out.mkdir()
    result = subprocess.run(
        [*_generator(), "generate", *source, "--config", str(CONFIG),
         "--meta", "none", "--output-path", str(out / PACKAGE)],
        capture_output=True, text=True, cwd=out, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, f"generation failed:\n{result.stdout}\n{result.stderr}"
    assert "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    return out / PACKAGE / "models"


def _models(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.glob("*.py"))}


@pytest.mark.slow
def test_a_client_generated_from_the_url_has_the_files_named_models(
    runtime, database_url, tmp_path
):
    from_file = _models(_generate(["--path", str(SPEC_PATH)], tmp_path / "file"))
    with serving(database_url) as server:
        from_url = _models(_generate(["--url", f"{server.base}/openapi.json"], tmp_path / "url"))
        log = server.log()
    assert "StarletteDeprecationWarning" not in log and "httpx2" not in log, log
    for name in ("pair_snapshot.py", "screen.py", "peg_status_type_0.py", "compact_pair_list.py"):
        assert name in from_file, sorted(from_file)
    assert sorted(from_url) == sorted(from_file)
    assert from_url == from_file
