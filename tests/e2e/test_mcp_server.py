"""`gligabao mcp` end to end: the official SDK's client launches the command over stdio, as a
desktop client would, against the local API; tools, resources and errors as a model sees them."""

from __future__ import annotations

import json
import re
import sys

import anyio
import pytest
from conftest import ROOT
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from query_helpers import reply_citing

TOOLS = {"remember", "query", "search", "correct", "forget", "session"}


def mcp_command(api_url: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "gligabao.local.cli", "mcp", "--api", api_url, *extra],
        env={"PYTHONPATH": str(ROOT / "layers" / "core")},
    )


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content)


def run(session):
    """Run `session(client)` against a fresh `gligabao mcp` for user u1 (through the env)."""

    def go(api_url: str, *extra: str, env: dict[str, str] | None = None):
        params = mcp_command(api_url, *extra)
        params.env.update(env or {"GB_USER_ID": "u1"})

        async def main():
            async with Client(params, read_timeout_seconds=60) as client:
                return await session(client)

        return anyio.run(main)

    return go


def test_a_model_lists_the_tools_remembers_queries_reads_its_session_and_forgets(api, db, models):
    fake_anthropic, _ = models

    async def session(client):
        tools = (await client.list_tools()).tools
        stored = await client.call_tool(
            "remember", {"text": "Alice works at Acme.", "session_id": "chat-1", "dataset": "work"}
        )
        edge_id = int(re.search(r"\[edge (\d+)\]", text_of(stored)).group(1))
        fake_anthropic.queue(reply_citing("Alice works at Acme.", edges=[edge_id]))
        answered = await client.call_tool("query", {"question": "Where does Alice work?", "dataset": "work"})
        read_back = await client.call_tool("session", {"session_id": "chat-1", "dataset": "work"})
        resources = (await client.list_resources()).resources
        datasets = await client.read_resource("gligabao://datasets")
        work = await client.read_resource("gligabao://datasets/work")
        forgotten = await client.call_tool("forget", {"kind": "edge", "id": edge_id})
        return tools, stored, edge_id, answered, read_back, resources, datasets, work, forgotten

    tools, stored, edge_id, answered, read_back, resources, datasets, work, forgotten = run(session)(
        api.base_url
    )

    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:  # each says when to call it and what comes back
        assert "Call it" in tool.description and "Returns" in tool.description, tool.name
    assert "user_id" not in json.dumps(
        [tool.input_schema for tool in tools]
    )  # the command's, not the model's
    assert not stored.is_error
    assert "[entity" in text_of(stored) and "Alice works_at Acme" in text_of(stored)
    assert text_of(answered).startswith("Alice works at Acme.")
    assert f"[edge {edge_id}] Alice works_at Acme" in text_of(answered)
    assert "Session chat-1 (dataset work)" in text_of(read_back) and "Alice works at Acme." in text_of(
        read_back
    )
    assert {str(r.uri) for r in resources} == {"gligabao://datasets", "gligabao://datasets/work"}
    listed = json.loads(datasets.contents[0].text)
    assert listed["user_id"] == "u1" and [d["name"] for d in listed["datasets"]] == ["work"]
    assert {k: listed["datasets"][0][k] for k in ("artifacts", "queued", "failed")} == {
        "artifacts": 1,
        "queued": 0,
        "failed": 0,
    }
    graph = json.loads(work.contents[0].text)["graph"]
    assert sorted(e["name"] for e in graph["entities"]) == ["Acme", "Alice"]
    assert "deleted 0 texts, 0 chunks, 0 entities, 1 facts" in text_of(forgotten)
    assert db.execute("SELECT count(*) FROM gb_edges").fetchone()[0] == 0
    assert db.execute("SELECT DISTINCT user_id FROM gb_datasets").fetchall() == [("u1",)]


def test_the_search_tool_finds_scored_facts_filtered_by_relation_with_no_llm_call(api, db, models):
    fake_anthropic, _ = models

    async def session(client):
        await client.call_tool("remember", {"text": "Alice works at Acme. Alice lives in Paris."})
        calls = len(fake_anthropic.messages)
        everything = await client.call_tool("search", {"query": "Alice"})
        work_only = await client.call_tool(
            "search", {"query": "Alice", "relations": ["works_at"], "limit": 5}
        )
        bad = await client.call_tool("search", {"query": "Alice", "metadata": {"a b": 1}})
        return calls, everything, work_only, bad

    calls, everything, work_only, bad = run(session)(api.base_url)

    assert not everything.is_error and not work_only.is_error
    assert "Alice works_at Acme" in text_of(everything) and "Alice lives_in Paris" in text_of(everything)
    assert re.search(r"\[edge \d+\] Alice works_at Acme.* score -?\d\.\d{3} \S*keyword", text_of(work_only))
    assert "lives_in" not in text_of(work_only)
    assert bad.is_error and "400" in text_of(bad)
    assert len(fake_anthropic.messages) == calls  # no LLM call for a search


def test_errors_reach_the_model_with_the_apis_status_and_text(api, db, models):
    async def session(client):
        missing = await client.call_tool("forget", {"kind": "entity", "id": 12345})
        blank = await client.call_tool("remember", {"text": "   "})
        bad_kind = await client.call_tool("forget", {"kind": "dataset", "id": 1})
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("gligabao://datasets/nope")
        return missing, blank, bad_kind, unknown.value

    missing, blank, bad_kind, unknown = run(session)(api.base_url, "--dataset", "main")

    assert missing.is_error and "404" in text_of(missing) and "entity" in text_of(missing)
    assert blank.is_error and "(400): text must not be empty" in text_of(blank)
    assert bad_kind.is_error
    assert "nope" in str(unknown)
    assert db.execute("SELECT count(*) FROM gb_artifacts").fetchone()[0] == 0


def test_the_command_refuses_to_start_without_a_user(api):
    import subprocess

    params = mcp_command(api.base_url)
    finished = subprocess.run(
        [params.command, *params.args], env=params.env, capture_output=True, text=True, timeout=60
    )

    assert finished.returncode == 2
    assert "--user-id" in finished.stderr


def test_with_http_the_same_tools_are_served_over_streamable_http(api, db, models):
    import socket
    import subprocess
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    params = mcp_command(api.base_url, "--user-id", "u1", "--http", "--port", str(port))
    server = subprocess.Popen([params.command, *params.args], env=params.env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)

        async def main():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                tools = (await client.list_tools()).tools
                stored = await client.call_tool("remember", {"text": "Alice works at Acme."})
                return tools, stored

        tools, stored = anyio.run(main)
    finally:
        server.terminate()
        server.wait(timeout=30)

    assert {tool.name for tool in tools} == TOOLS
    assert not stored.is_error and "Alice works_at Acme" in text_of(stored)


def test_a_model_corrects_a_fact_then_ends_it(api, db, models):
    async def session(client):
        stored = await client.call_tool("remember", {"text": "Alice works at Acme."})
        edge_id = int(re.search(r"\[edge (\d+)\]", text_of(stored)).group(1))
        corrected = await client.call_tool("correct", {"id": edge_id, "target": "Globex", "reason": "moved"})
        new_id = int(re.search(r"\[edge (\d+)\]", text_of(corrected)).group(1))
        ended = await client.call_tool("correct", {"id": new_id, "invalid_at": "2030-01-01T00:00:00Z"})
        again = await client.call_tool("correct", {"id": edge_id, "description": "Alice runs Acme."})
        return edge_id, corrected, new_id, ended, again

    edge_id, corrected, new_id, ended, again = run(session)(api.base_url)

    assert not corrected.is_error and new_id != edge_id
    assert f"Corrected fact {edge_id}" in text_of(corrected) and "Alice works_at Globex" in text_of(corrected)
    assert f"Ended fact {new_id}" in text_of(ended) and "→ 2030-01-01T00:00:00Z" in text_of(ended)
    assert again.is_error and "(409)" in text_of(again) and "superseded" in text_of(again)
    live = db.execute("SELECT count(*) FROM gb_edges WHERE expired_at IS NULL").fetchone()[0]
    assert live == 1


def test_the_help_of_the_command_lists_the_tools_the_server_serves(api):
    import subprocess

    async def session(client):
        return [tool.name for tool in (await client.list_tools()).tools]

    def tools_in_help(*args: str) -> str | None:
        helped = subprocess.run(
            [sys.executable, "-m", "gligabao.local.cli", *args],
            env=mcp_command(api.base_url).env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert helped.returncode == 0, helped.stderr
        listed = re.search(r"\(tools ([^)]*)\)", " ".join(helped.stdout.split()))
        return listed.group(1) if listed else None

    served = run(session)(api.base_url)

    assert set(served) == TOOLS
    assert tools_in_help("mcp", "--help") == ", ".join(served)  # gligabao mcp --help
    assert tools_in_help("--help") == ", ".join(served)  # gligabao --help, the line of mcp


def test_the_search_tools_limit_counts_facts_entities_and_passages_together(api, db, models):
    async def session(client):
        await client.call_tool(
            "remember", {"text": "Alice works at Acme. Alice lives in Paris. Bob knows Alice."}
        )
        return [await client.call_tool("search", {"query": "Alice", "limit": limit}) for limit in (3, 10)]

    three, ten = run(session)(api.base_url)

    def items(result) -> list[str]:
        return [line for line in text_of(result).splitlines() if line.startswith("- ")]

    def scores(lines: list[str]) -> list[float]:
        return [float(re.search(r" score (-?\d+\.\d+)", line).group(1)) for line in lines]

    assert len(items(three)) == 3
    assert len(items(ten)) == 7  # 3 facts and 4 entities: fewer than 10 exist
    assert items(three) == items(ten)[:3]  # the best 3 of every kind together
    assert scores(items(ten)) == sorted(scores(items(ten)), reverse=True)
    assert any("[edge " in line for line in items(ten)) and any("[entity " in line for line in items(ten))
