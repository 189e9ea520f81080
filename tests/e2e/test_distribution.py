"""The package installs from a fresh virtual environment under its own distribution name,
`gligabao-memory` (the name `gligabao` on the package index is the gligabao server's client),
still imported as `gligabao`, with its license and extras in its metadata."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

INSTALL_SECONDS = 300
CHECK = """
import importlib.metadata as metadata, json, gligabao
meta = metadata.metadata("gligabao-memory")
try:
    other = metadata.version("gligabao")
except metadata.PackageNotFoundError:
    other = None
print(json.dumps({
    "version": metadata.version("gligabao-memory"),
    "imported": gligabao.__version__,
    "license": meta["License-Expression"],
    "extras": sorted(meta.get_all("Provides-Extra")),
    "other": other,
}))
"""


def source_copy(folder: Path) -> Path:
    """What the distribution is built from, away from the checkout (a build writes its egg-info)."""
    folder.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, folder / name)
    ignored = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "layers/core/gligabao", folder / "layers/core/gligabao", ignore=ignored)
    return folder


def test_a_fresh_environment_installs_gligabao_memory_imported_as_gligabao(tmp_path):
    source = source_copy(tmp_path / "source")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=INSTALL_SECONDS)
    # --no-deps: the distribution itself (its name, metadata and files), not the dependencies' wheels.
    install = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--no-deps", str(source)],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert install.returncode == 0, install.stderr

    out = subprocess.run(
        [str(venv / "bin/python"), "-I", "-c", CHECK],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    found = json.loads(out)

    assert found["version"] == found["imported"]
    assert found["license"] == "Apache-2.0"
    assert {"mcp", "eval", "local", "docs"} <= set(found["extras"])
    assert found["other"] is None
    assert (venv / "bin/gligabao").is_file()
