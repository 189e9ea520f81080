"""The names of the MCP server's tools, without the `mcp` SDK: `gligabao mcp --help` lists them
(the command line must start without the `[mcp]` extra, and quickly). The server registers exactly
these, in this order (gligabao.client.mcp_server; tests/e2e/test_mcp_server.py checks it)."""

from __future__ import annotations

TOOL_NAMES = ("remember", "query", "search", "forget", "correct", "session")
