"""An agent's side of `gligabao mcp`: launch the MCP server over stdio with the official SDK, see
the tools a model is given, and make the calls a model would make in a conversation.

    make serve                                 # the local API, with the provider keys set
    .venv/bin/python examples/mcp_agent.py [API_URL]

A desktop client launches the same command from its configuration (the README's `mcpServers`
block); an agent framework passes `session.list_tools()` to its model and `call_tool` its choices.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

import gligabao
from gligabao.client import LOCAL_API_URL

USER = "mcp-agent-user"


def server_command(url: str) -> StdioServerParameters:
    # `gligabao mcp --api URL --user-id USER --dataset agent`, run with the gligabao this script imports
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "gligabao.local.cli", "mcp", "--api", url, "--user-id", USER, "--dataset", "agent"],
        env={"PYTHONPATH": str(Path(gligabao.__file__).resolve().parents[1])},
    )


def as_llm_tools(tools) -> list[dict]:
    """The MCP tools in the shape LLM APIs take (Anthropic's `tools`; OpenAI's wraps the same)."""
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


async def conversation(url: str) -> None:
    async with Client(server_command(url), read_timeout_seconds=120) as client:
        tools = as_llm_tools((await client.list_tools()).tools)
        print("tools given to the model:", ", ".join(tool["name"] for tool in tools))

        # The user: "I'm Alice, I work at Acme in Paris." -> the model stores it.
        stored = await client.call_tool(
            "remember", {"text": "Alice works at Acme. Alice lives in Paris.", "session_id": "chat-1"}
        )
        print("\n> remember\n" + stored.content[0].text)

        # Later, another conversation: "Where do I live?" -> the model asks memory first.
        answer = await client.call_tool(
            "query", {"question": "Where does Alice live?", "session_id": "chat-2"}
        )
        print("\n> query\n" + answer.content[0].text)

        print("\n> session\n" + (await client.call_tool("session", {"session_id": "chat-1"})).content[0].text)

        datasets = await client.read_resource("gligabao://datasets")
        print("\n> resource gligabao://datasets\n" + datasets.contents[0].text)

        # "Forget where I live." -> the model finds the fact's id in what it read, and forgets it.
        lives_in = next(line for line in stored.content[0].text.splitlines() if "lives_in" in line)
        edge_id = int(lives_in.split("[edge ")[1].split("]")[0])
        forgotten = await client.call_tool("forget", {"kind": "edge", "id": edge_id})
        print("\n> forget\n" + forgotten.content[0].text)


def main(url: str = LOCAL_API_URL) -> None:
    anyio.run(conversation, url)


if __name__ == "__main__":
    main(*sys.argv[1:2])
