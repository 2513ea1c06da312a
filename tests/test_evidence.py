"""The track record in the product: ``evaluate --publish`` stores the evaluation of the
screen's rules, ``/evidence`` serves it (contract-checked, ``ETag``/``304``, a sentence
before anything is published), and the worker refreshes it with a bounded sample."""

from __future__ import annotations

import json

from pairscreen.db.connection import database
from pairscreen.db.models import Evidence, JobRun
from tests.conftest import make_client

BASE = "/api/v1"


def test_before_anything_is_published_evidence_says_how_to_publish(client, keys):
    r = client.get(f"{BASE}/evidence", keys.personal)
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/plain")
    assert "No evaluation of the screen's rules has been published yet" in r.text
    assert "pairscreen evaluate --publish" in r.text
    assert client.get(f"{BASE}/evidence", keys.no_tier).status_code == 403
    assert client.get(f"{BASE}/evidence").status_code == 401


def test_publish_then_evidence_serves_it_with_its_range_sample_and_warnings(cli, runtime, keys):
    code, out, err = cli(
        "evaluate", "--every", "45", "--horizon", "30,90", "--sample", "40", "--publish",
        "--json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert "published evidence #" in err and "40 pairs (sample of" in err
    printed = json.loads(out)
    assert [s["name"] for s in printed["rule_sets"]] == ["screen"]
    assert printed["pairs_screened"] == 40 and printed["sampled"] is True
    client = make_client(runtime)
    with client.client:
        r = client.get(f"{BASE}/evidence", keys.personal)  # validated against openapi.yaml
        assert r.status_code == 200, r.text
        body = r.json()
        assert (body["from"], body["to"]) == (printed["from"], printed["to"])
        assert body["as_of_days"] == len(printed["rule_sets"][0]["per_date"])
        assert body["sample"] == {
            "pairs": 40,
            "of_pairs": printed["pairs_in_universe"],
            "sampled": True,
        }
        assert body["rules"]["thresholds"] == printed["rule_sets"][0]["thresholds"]
        assert body["comparisons"] == printed["comparisons"] == 2
        assert body["warnings"] == printed["warnings"]
        assert body["data_through"] == printed["data_through"] is not None
        assert body["calibration"] == printed["calibration"]
        assert [p["name"] for p in body["periods"]] == ["after", "chosen_on"]
        for served, local in zip(
            body["horizons"], printed["rule_sets"][0]["horizons"], strict=True
        ):
            for name in ("reversion", "hold_value", "hold_other_leg"):
                assert served[name] == local[name]
            assert served["warnings"] == local["warnings"]
            diff = served["reversion"]["difference"]
            # A row the observation rules refuse is left out of the Holm family.
            if diff["reading"] == "too_few_observations":
                assert diff["p_holm"] is None
            else:
                assert diff["p_holm"] >= diff["p_value"]
            assert (diff["reading"] == "too_few_observations") == bool(served["warnings"])
        etag = r.headers["etag"]
        again = client.get(f"{BASE}/evidence", keys.personal, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        # A second publication is the new latest; its ETag differs.
        code, _out, err = cli("evaluate", "--every", "60", "--publish", "--quiet")
        assert code == 0, err
        newer = client.get(f"{BASE}/evidence", keys.personal, headers={"If-None-Match": etag})
        assert newer.status_code == 200 and newer.headers["etag"] != etag
        assert newer.json()["every_days"] == 60 and newer.json()["sample"]["sampled"] is False


def test_publish_refuses_rule_files_and_a_bad_sample(cli, runtime, tmp_path):
    rules = tmp_path / "loose.toml"
    rules.write_text('[screen]\nfilter = "default"\nhurst_below = 0.6\n')
    code, _out, err = cli("evaluate", "--publish", "--rules", str(rules))
    assert code == 2 and "--publish stores the evaluation of the screen's current rules" in err
    assert err.count("\n") == 1
    code, _out, err = cli("evaluate", "--sample", "0")
    assert code == 2 and "--sample must be at least 1 pair" in err
    with database.connection_context():
        assert Evidence.select().count() == 0


def test_the_worker_refreshes_the_evidence_on_its_schedule(runtime):
    from pairscreen.worker import EVIDENCE_JOB, Worker, WorkerOptions

    worker = Worker(runtime, WorkerOptions(evidence_sample=30))
    with database.connection_context():
        summary = worker._evidence()
        row = Evidence.select().order_by(Evidence.id.desc()).first()
        ran = JobRun.get_by_id(EVIDENCE_JOB)
    assert summary.startswith(f"evidence #{row.id}: ") and "30 pairs (sample of" in summary
    body = json.loads(row.payload)
    assert body["sample"]["pairs"] == 30 and body["sample"]["sampled"] is True
    assert ran.finished_at >= row.published_at


def test_the_worker_publishes_a_portfolio_when_its_settings_ask(cli, runtime, keys):
    """``PAIRSCREEN_EVIDENCE_PORTFOLIO`` / ``_MAX_PER_ASSET`` put on ``/evidence`` the line
    ``evaluate --publish --portfolio N --max-per-asset K`` publishes, for the same run."""
    from pairscreen.cli.notify import _evidence_portfolio
    from pairscreen.config import load_settings
    from pairscreen.worker import Worker, WorkerOptions

    environ = {"PAIRSCREEN_EVIDENCE_PORTFOLIO": "5", "PAIRSCREEN_EVIDENCE_MAX_PER_ASSET": "2"}
    spec = _evidence_portfolio(load_settings(environ))
    assert spec is not None and (spec.size, spec.max_per_asset) == (5, 2)
    worker = Worker(runtime, WorkerOptions(evidence_sample=30, evidence_portfolio=spec))
    with database.connection_context():
        assert worker._evidence().startswith("evidence #")
    client = make_client(runtime)
    with client.client:
        r = client.get(f"{BASE}/evidence", keys.personal)  # validated against openapi.yaml
        assert r.status_code == 200, r.text
        served = r.json()
    assert served["portfolio_strategy"] == "accumulation"
    assert [p["horizon_days"] for p in served["portfolio"]] == [30, 90]
    for line in served["portfolio"]:
        assert (line["size"], line["max_per_asset"]) == (5, 2)
        assert line["portfolio"]["as_of_days"] > 0 and line["random"]["draws"] == 200
        assert 0 < line["mean_picks"] <= 5
    code, out, err = cli(
        "evaluate", "--sample", "30", "--publish", "--portfolio", "5", "--max-per-asset", "2",
        "--json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    printed = json.loads(out)["portfolio"]
    for line in printed:
        line.pop("per_date_picks")
    assert served["portfolio"] == printed


def test_the_worker_portfolio_settings_refuse_a_limit_without_a_portfolio():
    import pytest

    from pairscreen.cli.common import CommandError
    from pairscreen.cli.notify import _evidence_portfolio
    from pairscreen.config import load_settings

    assert _evidence_portfolio(load_settings({})) is None
    unlimited = _evidence_portfolio(load_settings({"PAIRSCREEN_EVIDENCE_PORTFOLIO": "3"}))
    assert unlimited is not None and (unlimited.size, unlimited.max_per_asset) == (3, None)
    with pytest.raises(CommandError, match="--evidence-portfolio N"):
        _evidence_portfolio(load_settings({"PAIRSCREEN_EVIDENCE_MAX_PER_ASSET": "2"}))
