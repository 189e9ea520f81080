"""The documentation site builds with `mkdocs build --strict` (as `make docs` and `make test` run
it), with the OpenAPI document of the routes in it; a broken link or a page left out of the
navigation fails the build."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from gligabao.api.app import openapi_document
from gligabao.api.routes import all_routers


def build(project: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "layers" / "core"), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(project / "mkdocs.yml")]
    return subprocess.run([*command, "-d", str(site)], capture_output=True, text=True, env=env, timeout=300)


def tags_sorted(document):
    """The document with each operation's tags in one order: the routes list an operation's tags
    from a set, whose order changes from one process to the next."""
    if isinstance(document, dict):
        return {k: sorted(v) if k == "tags" else tags_sorted(v) for k, v in document.items()}
    return [tags_sorted(item) for item in document] if isinstance(document, list) else document


def copy_of_the_docs(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    return project


def test_the_site_builds_strictly_with_the_routes_openapi_document(tmp_path):
    result = build(ROOT, tmp_path / "site")

    assert result.returncode == 0, result.stderr
    for page in ("index.html", "concepts/index.html", "coming-from-mem0/index.html", "api/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    served = json.loads((tmp_path / "site" / "openapi.json").read_text())
    assert tags_sorted(served) == tags_sorted(json.loads(json.dumps(openapi_document(all_routers()))))


def test_a_broken_link_fails_the_build(tmp_path):
    project = copy_of_the_docs(tmp_path)
    with (project / "docs" / "concepts.md").open("a") as page:
        page.write("\nSee [the lost page](no-such-page.md).\n")

    result = build(project, tmp_path / "site")

    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr


def test_a_page_left_out_of_the_navigation_fails_the_build(tmp_path):
    project = copy_of_the_docs(tmp_path)
    (project / "docs" / "orphan.md").write_text("# Orphan\n")

    result = build(project, tmp_path / "site")

    assert result.returncode != 0
    assert "orphan.md" in result.stderr
