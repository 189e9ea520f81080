"""The examples of the client and of the MCP server run against the local API (fake providers),
so they cannot rot: examples/client_quickstart.py and examples/mcp_agent.py."""

from __future__ import annotations

import importlib.util
import re

from conftest import ROOT
from query_helpers import reply_citing
from remember_helpers import prompt_of, rule_based_model

EDGE_LINE = re.compile(r"^\[edge (\d+)\] (.+?)\((\d+)\) --(\w+)--> (.+?)\((\d+)\)(.*)$")


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reader(body: dict) -> dict:
    """Extraction and resolution by the rules; a question answered from the live lives_in edge of
    the <graph> it is given, citing it."""
    prompt = prompt_of(body)
    if "<graph>" not in prompt:
        return rule_based_model(body)
    for line in prompt.splitlines():
        match = EDGE_LINE.match(line)
        if match and match.group(4) == "lives_in" and "invalid_at=" not in match.group(7):
            edge, source, _, _, target, _, _ = match.groups()
            return reply_citing(f"{source} lives in {target}.", edges=[int(edge)])
    return reply_citing("I don't know.")


def test_the_client_quickstart_runs_and_cleans_up(api, db, fake_anthropic, fake_openai, capsys):
    fake_anthropic.responder = reader

    example("client_quickstart").main(api.base_url)

    out = capsys.readouterr().out
    assert "answer  Alice lives in Rome." in out
    assert re.search(r"closed  \[edge \d+\] no longer holds from 2025", out)
    assert "history Alice lives_in Paris: 2023-05-01T09:00:00Z -> 2025" in out
    assert "gone    404:" in out
    assert re.search(r"fixed   \[edge \d+\] -> \[edge \d+\] holds from 2025-03-01T00:00:00Z", out)
    assert db.execute("SELECT count(*) FROM gb_datasets").fetchone()[0] == 0


def test_the_mcp_agent_example_runs_its_conversation(api, db, fake_anthropic, fake_openai, capfd):
    fake_anthropic.responder = reader

    example("mcp_agent").main(api.base_url)

    out = capfd.readouterr().out  # capfd: the server's stderr needs a real file
    assert "tools given to the model: remember, query, search, forget, correct, session" in out
    assert "Alice lives in Paris." in out.split("> query")[1]
    assert '"name": "agent"' in out
    assert "1 facts" in out.split("> forget")[1]
    assert db.execute("SELECT count(*) FROM gb_edges WHERE relation = 'lives_in'").fetchone()[0] == 0
