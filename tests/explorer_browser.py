"""Debian's headless Chromium for the explorer's browser tests (Playwright's own browser download
is not used: `make test` installs the chromium package), and synthetic graphs served by a stand-in
API for the tests and bench/explorer.py."""

from __future__ import annotations

import json
import os
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parent.parent


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def screenshot_path() -> Path:
    """Where the screenshot test writes the explorer's picture: var/ (ignored by git) unless
    EXPLORER_SCREENSHOT names a path (`make explorer-screenshot` gives docs/explorer.png)."""
    chosen = os.environ.get("EXPLORER_SCREENSHOT")
    return (ROOT / chosen) if chosen else ROOT / "var" / "explorer.png"


TYPES = ["person", "organization", "place", "project", "topic", "event"]
RELATIONS = ["knows", "works_at", "lives_in", "leads", "mentions", "attended", "part_of"]
GRAPH_PAGE_ROWS = 5000  # as the real export pages it


def synthetic_graph(
    edge_count: int, entity_count: int | None = None, seed: int = 7, types: list[str] = TYPES
) -> tuple[list[dict], list[dict]]:
    """A graph as GET /v1/gb/graph gives it: hub entities (preferential attachment), 5% of the
    facts superseded; `entity_count` defaults to 0.6 entities a fact."""
    rng = random.Random(seed)
    entity_count = entity_count or max(10, int(edge_count * 0.6))
    entities = [
        {
            "id": i + 1,
            "name": f"Entity {i + 1}",
            "type": types[rng.randrange(len(types))],
            "created_at": "2025-01-01T00:00:00Z",
            "updated_at": "2025-01-01T00:00:00Z",
        }
        for i in range(entity_count)
    ]
    ends: list[int] = [1, 2]
    edges = []
    for i in range(edge_count):
        source = rng.choice(ends) if rng.random() < 0.7 else rng.randrange(1, entity_count + 1)
        target = rng.randrange(1, entity_count + 1)
        if target == source:
            target = target % entity_count + 1
        ends += [source, target]
        second = 1 + i * 60
        edge = {
            "id": i + 1,
            "source_id": source,
            "target_id": target,
            "source": f"Entity {source}",
            "target": f"Entity {target}",
            "relation": rng.choice(RELATIONS),
            "artifact_id": i + 1,
            "valid_at": "2024-01-01T00:00:00Z",
            "created_at": f"2025-01-{1 + second // 86400:02d}T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:00Z",
        }
        if rng.random() < 0.05:
            edge["expired_at"] = "2025-03-01T00:00:00Z"
        edges.append(edge)
    return entities, edges


def stand_in_api(datasets: dict[str, tuple[list[dict], list[dict]]]) -> ThreadingHTTPServer:
    """A small HTTP server standing in for the API: GET /v1/gb/datasets lists `datasets` (name ->
    entities, edges; any user), GET /v1/gb/graph pages a dataset's rows, and an OpenAPI document
    without the retrieval-only flag. Stop it with shutdown()."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path == "/v1/gb/datasets":
                body = {"datasets": [_listed(name, *graph) for name, graph in datasets.items()]}
            elif url.path == "/v1/gb/graph" and query.get("dataset", [""])[0] in datasets:
                entities, edges = datasets[query["dataset"][0]]
                rows = [("entities", e) for e in entities] + [("edges", e) for e in edges]
                start = int(query.get("cursor", ["0"])[0])
                page = rows[start : start + GRAPH_PAGE_ROWS]
                more = start + GRAPH_PAGE_ROWS < len(rows)
                body = {
                    "entities": [row for kind, row in page if kind == "entities"],
                    "edges": [row for kind, row in page if kind == "edges"],
                    "next_cursor": str(start + GRAPH_PAGE_ROWS) if more else None,
                }
            elif url.path == "/v1/gb/ontologies":
                body = {"ontologies": []}
            elif url.path == "/v1/gb/openapi.json":
                body = {"components": {"schemas": {}}}
            else:
                return self._send(404, {"error": f"{url.path} is not in the stand-in API"})
            self._send(200, body)

        def _send(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _listed(name: str, entities: list[dict], edges: list[dict]) -> dict:
    live = sum(1 for edge in edges if not edge.get("expired_at"))
    return {
        "name": name,
        "created_at": "2025-01-01T00:00:00Z",
        "artifacts": 0,
        "entities": len(entities),
        "edges": live,
    }
