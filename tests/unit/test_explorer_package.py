"""The memory explorer as shipped: its page's files in the package, none in the Lambda layer, and
how its proxy authenticates (the Python client's SigV4 or bearer token, chosen as `gligabao mcp`
chooses)."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from gligabao.client.auth import BearerToken, SigV4
from gligabao.explore.auth import AuthUnavailable, described, proxy_auth
from gligabao.explore.server import STATIC

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers" / "core" / "gligabao"


VENDORED = json.loads((STATIC / "vendor.json").read_text())["files"]


def test_every_file_the_page_loads_is_in_the_package_data():
    page = (STATIC / "index.html").read_text()
    loaded = re.findall(r'(?:src|href)="/static/([^"]+)"', page)
    assert sorted(loaded) == sorted(["explorer.css", "explorer.js", *(entry["file"] for entry in VENDORED)])
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "gligabao"
    ]
    licences = [entry["license_file"] for entry in VENDORED]
    for name in [*loaded, "index.html", "vendor.json", *licences]:
        assert (STATIC / name).is_file()
        relative = (STATIC / name).relative_to(PACKAGE).as_posix()
        assert any(fnmatch(relative, pattern) for pattern in patterns), relative


def test_the_page_loads_only_its_own_scripts_the_library_before_the_page_s_own():
    page = (STATIC / "index.html").read_text()
    scripts = re.findall(r"<script\b[^>]*>", page)
    sources = [re.search(r'src="([^"]+)"', tag)[1] for tag in scripts]
    assert sources == [*(f"/static/{entry['file']}" for entry in VENDORED), "/static/explorer.js"]
    assert all(" defer" in tag for tag in scripts)  # deferred scripts run in the order written


def test_each_vendored_file_is_the_pinned_release_s_own_with_its_licence_beside_it():
    assert [entry["package"] for entry in VENDORED] == ["d3-dispatch", "d3-quadtree", "d3-timer", "d3-force"]
    for entry in VENDORED:
        content = (STATIC / entry["file"]).read_bytes()
        assert hashlib.sha256(content).hexdigest() == entry["sha256"], entry["file"]
        version = re.escape(entry["version"])
        assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", entry["version"])  # pinned, not a range
        assert content.startswith(f"// https://d3js.org/{entry['package']}/ v{entry['version']} ".encode())
        assert re.fullmatch(
            rf"https://registry\.npmjs\.org/{entry['package']}/-/{entry['package']}-{version}\.tgz",
            entry["tarball"],
        )
        assert re.fullmatch(r"sha512-[A-Za-z0-9+/]{86}==", entry["integrity"])
        assert entry["license"] == "ISC"
        assert "Permission to use, copy, modify" in (STATIC / entry["license_file"]).read_text()


def test_the_page_loads_nothing_from_elsewhere_at_run_time():
    vendored = {entry["file"] for entry in VENDORED}
    for path in STATIC.iterdir():
        if path.name == "vendor.json":
            continue  # where the vendored files came from: read by people, never by the page
        text = path.read_text()
        if path.name in vendored:
            text = text.split("\n", 1)[1]  # the library's first line is a comment naming its home page
        assert not re.search(r"https?://(?!127\.0\.0\.1)", text), path.name  # no CDN, no font service
        assert "import(" not in text, path.name
    assert "<script>" not in (STATIC / "index.html").read_text()  # no inline script: the CSP forbids it


def test_the_lambda_layer_leaves_the_explorer_out():
    layer_build = (ROOT / "layers" / "core" / "Makefile").read_text()
    assert 'rm -rf "$(TARGET)/gligabao/explore"' in layer_build
    # and nothing a function runs imports it (only the command line does)
    importers = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if "gligabao.explore" in path.read_text() and not path.is_relative_to(PACKAGE / "explore")
    ]
    assert importers == ["local/cli.py"]


@pytest.fixture
def aws_environment(monkeypatch):
    """botocore's credential chain reads only what a test puts in the environment."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


def test_the_authentication_is_inferred_as_the_mcp_command_infers_it(aws_environment):
    aws_environment.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    aws_environment.setenv("AWS_SECRET_ACCESS_KEY", "secret-example-key")

    assert proxy_auth("http://127.0.0.1:7878") is None
    jwt = proxy_auth("https://memory.example.com", token="a.jwt.token")
    assert isinstance(jwt, BearerToken) and described(jwt) == "with the bearer token of GB_API_TOKEN"
    iam = proxy_auth("https://abc123.execute-api.eu-west-1.amazonaws.com")
    assert isinstance(iam, SigV4) and described(iam) == "SigV4-signed for eu-west-1"
    custom = proxy_auth("https://memory.example.com", mode="iam", region="us-west-2")
    assert described(custom) == "SigV4-signed for us-west-2"
    assert proxy_auth("https://abc123.execute-api.eu-west-1.amazonaws.com", mode="none") is None


def test_what_the_proxy_cannot_authenticate_with_is_said_at_start(aws_environment):
    with pytest.raises(AuthUnavailable, match="no AWS credentials"):
        proxy_auth("https://abc123.execute-api.eu-west-1.amazonaws.com")
    aws_environment.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    aws_environment.setenv("AWS_SECRET_ACCESS_KEY", "secret-example-key")
    aws_environment.delenv("AWS_DEFAULT_REGION", raising=False)
    aws_environment.delenv("AWS_REGION", raising=False)
    with pytest.raises(AuthUnavailable, match="no region"):
        proxy_auth("https://memory.example.com", mode="iam")
    with pytest.raises(AuthUnavailable, match="GB_API_TOKEN"):
        proxy_auth("https://memory.example.com", mode="jwt")
