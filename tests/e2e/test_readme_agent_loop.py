"""The agent loop of README.md ("Use from an agent"), run as written against the local API with the
fake providers, for a brand-new user over two turns: the first turn has no memory yet (no error),
the second turn's context holds what the first remembered."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

import gligabao.client
from gligabao.client import LOCAL_API_URL, Memory

SECTION = "## Use from an agent"


def readme_agent_loop() -> str:
    """The first Python block of the README's section "Use from an agent"."""
    readme = (ROOT / "README.md").read_text()
    assert SECTION in readme, f"README.md has no section {SECTION!r}"
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block, f"no ```python block in README.md's {SECTION!r}"
    return block.group(1)


class FakeLlm:
    """The `llm` the loop is given: records each call's prompts, answers a fixed reply."""

    def __init__(self) -> None:
        self.calls: list[dict[str, str]] = []

    def __call__(self, *, system: str, user: str) -> str:
        self.calls.append({"system": system, "user": user})
        return "Noted."


@pytest.fixture
def readme_loop(api, monkeypatch):
    """The README's block executed as written, its `Memory(LOCAL_API_URL, ...)` served by the test's
    local API (its port is not 7878)."""

    class LocalMemory(Memory):
        def __init__(self, url: str = LOCAL_API_URL, *args, **kwargs):
            assert url == LOCAL_API_URL, "the README's loop talks to `make serve`"
            super().__init__(api.base_url, *args, **kwargs)

    monkeypatch.setattr(gligabao.client, "Memory", LocalMemory)
    source = readme_agent_loop()
    namespace: dict = {}
    exec(compile(source, "README.md", "exec"), namespace)
    yield namespace, source
    namespace["memory"].close()


def test_the_readme_agent_loop_runs_for_a_new_user_and_remembers_across_turns(readme_loop, db, models):
    namespace, source = readme_loop
    turn, memory, llm = namespace["turn"], namespace["memory"], FakeLlm()
    assert "memory.context(" in source and "memory.remember(" in source
    assert memory.datasets().datasets == []  # a brand-new user: no memory at all

    first = turn("I met a colleague today. Alice works at Acme.", "chat-1", llm)
    second = turn("Where does Alice work?", "chat-1", llm)

    assert first == second == "Noted."
    assert [call["user"] for call in llm.calls] == [
        "I met a colleague today. Alice works at Acme.",
        "Where does Alice work?",
    ]
    assert "Acme" not in llm.calls[0]["system"]  # the first turn had an empty memory
    assert "Alice(" in llm.calls[1]["system"] and "--works_at--> Acme(" in llm.calls[1]["system"]
    assert "Alice works at Acme." in llm.calls[1]["system"]
    session = memory.session("chat-1")
    assert len(session.artifacts) == 2  # both turns remembered, in the turn's session
