"""The memory explorer as shipped: its page's files in the package, none in the Lambda layer, and
how its proxy decides to sign (SigV4 for an API Gateway endpoint)."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
from botocore.credentials import Credentials

from gligabao.explore.server import STATIC
from gligabao.explore.signing import SigningUnavailable, bearer_signer, region_of, sigv4_signer, wants_signing

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers" / "core" / "gligabao"


def test_every_file_the_page_loads_is_in_the_package_data():
    page = (STATIC / "index.html").read_text()
    loaded = re.findall(r'(?:src|href)="/static/([^"]+)"', page)
    assert sorted(loaded) == ["explorer.css", "explorer.js"]
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "gligabao"
    ]
    for name in [*loaded, "index.html"]:
        assert (STATIC / name).is_file()
        relative = (STATIC / name).relative_to(PACKAGE).as_posix()
        assert any(fnmatch(relative, pattern) for pattern in patterns), relative


def test_the_page_loads_nothing_from_elsewhere_at_run_time():
    for path in STATIC.iterdir():
        text = path.read_text()
        assert not re.search(r"https?://(?!127\.0\.0\.1)", text), path.name  # no CDN, no font service
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


def test_an_api_gateway_url_names_its_region_and_is_signed_by_default():
    assert region_of("https://abc123.execute-api.eu-west-1.amazonaws.com") == "eu-west-1"
    assert wants_signing("https://abc123.execute-api.us-east-1.amazonaws.com/")
    assert not wants_signing("http://127.0.0.1:7878")
    assert not wants_signing("https://memory.example.com")  # a custom domain: --sign sigv4 --region


def test_the_signer_signs_for_execute_api_in_the_url_s_region():
    credentials = Credentials("AKIDEXAMPLE", "secret-example-key", "session-token-example")
    sign = sigv4_signer("https://abc.execute-api.eu-west-1.amazonaws.com", credentials=credentials)

    headers = sign(
        "GET", "https://abc.execute-api.eu-west-1.amazonaws.com/v1/gb/datasets?user_id=u1", {}, None
    )

    authorization = headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in authorization
    assert headers["X-Amz-Security-Token"] == "session-token-example"
    assert "secret-example-key" not in str(headers)


def test_a_bearer_token_is_read_from_its_file_for_every_call(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("first.jwt.token\n")
    sign = bearer_signer(token_file)
    assert sign("GET", "https://api.example/v1/gb/health", {"accept": "application/json"}, None) == {
        "accept": "application/json",
        "authorization": "Bearer first.jwt.token",
    }
    token_file.write_text("refreshed.jwt.token")
    assert sign("GET", "https://api.example/", {}, None)["authorization"] == "Bearer refreshed.jwt.token"


def test_a_missing_or_empty_token_file_is_said_at_start(tmp_path):
    with pytest.raises(SigningUnavailable, match="cannot be read"):
        bearer_signer(tmp_path / "absent")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(SigningUnavailable, match="is empty"):
        bearer_signer(tmp_path / "empty")
