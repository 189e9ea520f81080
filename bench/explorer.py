"""The explorer's page on large graphs: how long the layout takes and how long a redraw takes.

A stand-in API (a small HTTP server here) answers GET /v1/gb/datasets and GET /v1/gb/graph with
a synthetic graph of the size asked (hub entities, preferential attachment, 5% of the edges
superseded), in pages of 5,000 rows as the real export gives them; the explorer's own server
proxies the page's calls to it, and Debian's headless Chromium (tests/explorer_browser.py) loads
the page at 1280x800. For each size it prints the time from navigation to the layout's end
(`#graph[data-layout=done]`), the median time of a redraw (a pan, by keyboard), a redraw with
the superseded facts shown, the console errors (must be 0), and writes a screenshot to
var/explorer-<edges>.png to judge the readability.

    python bench/explorer.py [--sizes 500,2000,5000]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "layers" / "core"))

from explorer_browser import launch_chromium  # noqa: E402

from gligabao.explore.server import make_server  # noqa: E402

TYPES = ["person", "organization", "place", "project", "topic", "event"]
RELATIONS = ["knows", "works_at", "lives_in", "leads", "mentions", "attended", "part_of"]
PAGE_ROWS = 5000


def synthetic_graph(edge_count: int, seed: int = 7) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    entity_count = max(10, int(edge_count * 0.6))
    entities = [
        {
            "id": i + 1,
            "name": f"Entity {i + 1}",
            "type": TYPES[rng.randrange(len(TYPES))],
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


def stand_in_api(entities: list[dict], edges: list[dict]) -> ThreadingHTTPServer:
    rows = [("entities", e) for e in entities] + [("edges", e) for e in edges]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path == "/v1/gb/datasets":
                body = {
                    "datasets": [
                        {
                            "name": "main",
                            "created_at": "2025-01-01T00:00:00Z",
                            "artifacts": 0,
                            "entities": len(entities),
                            "edges": len(edges),
                        }
                    ]
                }
            elif url.path == "/v1/gb/graph":
                start = int(query.get("cursor", ["0"])[0])
                page = rows[start : start + PAGE_ROWS]
                body = {
                    "entities": [row for kind, row in page if kind == "entities"],
                    "edges": [row for kind, row in page if kind == "edges"],
                    "next_cursor": str(start + PAGE_ROWS) if start + PAGE_ROWS < len(rows) else None,
                }
            elif url.path == "/v1/gb/openapi.json":
                body = {"components": {"schemas": {}}}
            else:
                self.send_response(404)
                self.end_headers()
                return
            raw = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


REDRAW = """async ([key, times]) => {
  const canvas = document.getElementById('graph');
  canvas.focus();
  const spent = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    canvas.dispatchEvent(new KeyboardEvent('keydown', {key: key, bubbles: true}));
    spent.push(performance.now() - started);
    await new Promise(requestAnimationFrame);
  }
  return spent;
}"""


def measure(browser, edge_count: int) -> dict:
    entities, edges = synthetic_graph(edge_count)
    api = stand_in_api(entities, edges)
    explorer = make_server(f"http://127.0.0.1:{api.server_address[1]}", "127.0.0.1", 0)
    threading.Thread(target=explorer.serve_forever, daemon=True).start()
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        started = time.perf_counter()
        page.goto(f"http://127.0.0.1:{explorer.server_address[1]}/?user=bench&dataset=main")
        page.wait_for_selector("#graph[data-layout=done]", timeout=300_000)
        layout_s = time.perf_counter() - started
        pan_ms = statistics.median(page.evaluate(REDRAW, ["ArrowLeft", 15]))
        page.check("#superseded")
        pan_all_ms = statistics.median(page.evaluate(REDRAW, ["ArrowRight", 15]))
        page.evaluate("document.getElementById('graph').focus()")
        page.keyboard.press("0")
        shot = ROOT / "var" / f"explorer-{edge_count}.png"
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot))
        return {
            "edges": edge_count,
            "entities": len(entities),
            "load_and_layout_s": round(layout_s, 2),
            "redraw_ms_p50": round(pan_ms, 1),
            "redraw_with_superseded_ms_p50": round(pan_all_ms, 1),
            "console_errors": len(errors),
            "screenshot": str(shot.relative_to(ROOT)),
        }
    finally:
        context.close()
        explorer.shutdown()
        api.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="500,2000,5000", help="edges of each graph, comma-separated")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for size in (int(s) for s in args.sizes.split(",")):
                print(json.dumps(measure(browser, size)), flush=True)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
