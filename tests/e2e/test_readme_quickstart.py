"""The README's quickstart, as written: its curl lines sent to the local API on the offline
providers (what `make serve` runs with no key), and the reply it shows is the reply it gets."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import reconfigure

README = Path(__file__).resolve().parents[2] / "README.md"


def quickstart() -> str:
    text = README.read_text()
    return text[text.index("## Quickstart") : text.index("## Use from an agent")]


def curl_lines(section: str) -> list[tuple[str, str, dict | None]]:
    """(method, path, body) of each `curl` of the section's shell blocks."""
    requests = []
    for line in section.splitlines():
        if not line.startswith("curl "):
            continue
        words = shlex.split(line)
        [url] = [w for w in words if w.startswith("localhost:")]
        body = json.loads(words[words.index("--json") + 1]) if "--json" in words else None
        requests.append(("POST" if body is not None else "GET", url.removeprefix("localhost:7878"), body))
    return requests


def shown_reply(section: str) -> str:
    return re.search(r"```json\n(.*?)```", section, re.DOTALL).group(1)


@pytest.fixture
def offline(db):
    reconfigure(llm_provider="offline", embedding_provider="offline")


def test_the_quickstart_curls_get_the_reply_the_readme_shows(api, offline):
    section = quickstart()
    replies = [api.request(method, path, body) for method, path, body in curl_lines(section)]

    assert [reply.status for reply in replies] == [200, 200, 200, 200]
    assert replies[0].json["providers"] == {"offline": {"configured": True}}
    answer = replies[-1].json
    shown = shown_reply(section)
    assert f'"answer": {json.dumps(answer["answer"])}' in shown
    [edge] = answer["evidence"]["edges"]
    for field in ("id", "source", "relation", "target", "valid_at"):
        assert f'"{field}": {json.dumps(edge[field])}' in shown, field
    assert "invalid_at" not in edge  # a live fact's reply leaves it out, as the README shows
    alice = next(e for e in answer["evidence"]["entities"] if e["name"] == "Alice")
    assert f'{{"id": {alice["id"]}, "name": "Alice", "type": "person"' in shown
    [paris] = re.findall(r"`GET /v1/gb/edges/(\d+)` shows its history", section)
    history = api.get(f"/v1/gb/edges/{paris}?user_id=u1")
    assert history.status == 200, history.json
    assert (history.json["target"], history.json["expired_at"] is not None) == ("Paris", True)
