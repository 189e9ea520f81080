"""The gligabao server's own Python client (issue 39, point 4): `gligabao` 0.7.0 from the package
index, installed into a virtual environment of its own (its import package is this package's, `gligabao`),
runs against the local API with the fake providers. It remembers an episode, a text with models
and reasoning per stage under the server's stage names, and an image given as bytes and as a path;
timeseries are stored and attached, and web search (off unless the deployment enables it) reaches it
as the GligabaoError it raises.

The client has no query, graph, delete or eval method (only `remember` and `attach_timeseries`), so
what it remembered is read back here with the suite's own HTTP client. The environment is made
once and kept under var/, by version: only the first run pays for the install. An index that
cannot be reached fails the test: CI has one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT, reconfigure
from image_files import image_file
from query_helpers import ask
from remember_helpers import stage_of

REFERENCE_CLIENT = "gligabao==0.7.0"
VENV = ROOT / "var" / "reference-client-venv" / REFERENCE_CLIENT.split("==")[1]
CALLS = ROOT / "tests" / "reference_client_calls.py"
INSTALL_SECONDS = 300


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


@pytest.fixture(scope="session")
def reference_python() -> Path:
    """The python of a virtual environment holding only the reference client, made once."""
    if (VENV / "installed").exists():
        return venv_python(VENV)
    VENV.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix="building-", dir=VENV.parent))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(building)], check=True, timeout=INSTALL_SECONDS)
        install = subprocess.run(
            [str(venv_python(building)), "-m", "pip", "install", "-q", REFERENCE_CLIENT],
            capture_output=True,
            text=True,
            timeout=INSTALL_SECONDS,
        )
        if install.returncode != 0:
            pytest.fail(f"pip install {REFERENCE_CLIENT} failed:\n{install.stdout}\n{install.stderr}")
        (building / "installed").write_text(REFERENCE_CLIENT + "\n")
        # A venv's scripts name its folder: it is made where it stays, so move it before any use.
        shutil.rmtree(VENV, ignore_errors=True)
        building.rename(VENV)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return venv_python(VENV)


def run_reference_client(python: Path, base_url: str, folder: Path) -> dict:
    png, jpeg = folder / "chart.png", folder / "photo.jpg"
    png.write_bytes(image_file("image/png"))
    jpeg.write_bytes(image_file("image/jpeg"))
    # -I: neither this checkout, nor PYTHONPATH, nor the user's site-packages can shadow the client.
    done = subprocess.run(
        [str(python), "-I", str(CALLS), base_url, str(png), str(jpeg)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_reference_client_remembers_through_the_local_api(
    reference_python, api, local_api_server, db, models, tmp_path
):
    fake_anthropic, _ = models
    reconfigure(allowed_models="claude-haiku-5-5, claude-sonnet-4-6", max_reasoning="medium")

    results = run_reference_client(reference_python, local_api_server, tmp_path)

    # It is the reference client, not this package.
    assert results["version"] == "0.7.0"
    assert str(VENV) in results["module"]

    # An episode: stored and answered as one.
    episode = results["episode"]["reply"]
    assert (episode["user_id"], episode["kind"]) == ("u1", "episode")
    assert [e["name"] for e in episode["entities"]] == ["Alice", "Acme"]
    memory_kind = db.execute("SELECT memory_kind FROM gb_artifacts WHERE id = %s", [episode["artifact_id"]])
    assert memory_kind.fetchone() == ("episode",)

    # Models and reasoning per stage, under the server's stage names.
    staged = results["staged"]["reply"]
    assert (staged["kind"], staged["valid_at"]) == ("knowledge", "2025-01-31T09:00:00Z")
    extracted = {e["name"]: e["model_id"] for e in staged["entities"]}
    assert extracted == {"Alice": "claude-haiku-5-5", "Initech": "claude-sonnet-4-6"}  # Alice was known
    assert [(e["relation"], e["model_id"]) for e in staged["edges"]] == [("works_at", "claude-sonnet-4-6")]
    inferences = db.execute(  # the episode's ran on the defaults: the configured model, no thinking
        "SELECT stage, model, reasoning FROM gb_inferences"
        " WHERE stage IN ('extract', 'resolve') AND reasoning <> 'none'"
    ).fetchall()
    assert sorted(inferences) == [
        ("extract", "claude-sonnet-4-6", "low"),
        ("resolve", "claude-haiku-5-5", "medium"),
    ]

    # An image as bytes (bare base64 on the wire), its stage's model chosen; and as a path.
    image = results["image_bytes"]["reply"]
    assert (image["user_id"], image["dataset"], image["description"]) == (
        "u1",
        "charts",
        "A image/png picture",
    )
    photo_reply = results["image_path"]["reply"]
    assert (photo_reply["dataset"], photo_reply["description"]) == ("photos", "A image/jpeg picture")
    image_models = [body["model"] for body in fake_anthropic.messages if stage_of(body) == "image"]
    assert image_models == ["claude-sonnet-4-6", "claude-haiku-5-5"]  # chosen, then the default
    stored = db.execute("SELECT count(*) FROM gb_image_artifacts").fetchone()
    assert stored == (2,)

    # Timeseries: stored with a text, and attached to what a dataset holds; web search is off unless
    # the deployment enables it, which the client reports as our error.
    [series] = results["timeseries"]["reply"]["series"]
    assert (series["key"], series["points"], series["anchors"][0]["type"]) == ("AAPL.close", 1, "artifact")
    [attached] = results["attach_timeseries"]["reply"]["series"]
    assert (attached["key"], attached["point_count"], attached["stats"]["last"]) == ("ACME.close", 2, 11.0)
    assert [a["type"] for a in attached["anchors"]] == ["entity"]
    assert results["attach_without_points"]["status"] == 400
    assert "points are required" in results["attach_without_points"]["error"]
    assert results["attach_to_no_dataset"]["status"] == 404
    assert results["web_search"] == {
        "error": "web_search: not enabled on this deployment (GB_WEB_SEARCH)",
        "status": 400,
    }
    assert results["model_not_allowed"] == {
        "error": "models: model 'claude-opus-4-5' is not allowed here"
        " (allowed: claude-haiku-5-5, claude-sonnet-4-6)",
        "status": 400,
    }

    # What it remembered is there to query, in its dataset.
    answer = ask(api, "Where does Alice work?")
    assert answer.status == 200, answer.json
    assert answer.json["answer"] == "From memory."
    graph = api.get("/v1/gb/datasets/main/graph?user_id=u1")
    assert graph.status == 200, graph.json
