"""The explorer's page on large graphs: how long the layout takes and how long a redraw takes.

A stand-in API (tests/explorer_browser.py, as the browser tests use) answers GET /v1/gb/datasets
and GET /v1/gb/graph with a synthetic graph of the size asked (hub entities, preferential
attachment, 5% of the edges superseded), in pages of 5,000 rows as the real export gives them; the
explorer's own server proxies the page's calls to it, and Debian's headless Chromium loads the
page at 1280x800. For each size it prints the time from navigation to the layout's end
(`#graph[data-layout=done]`), the layout's own time as the page measured it (d3-force's ticks
and the collision passes), the median time of a redraw (a pan, by keyboard: the labels are
placed again), a redraw with the superseded facts shown, the console errors (must be 0), and
writes a screenshot to var/explorer-<edges>.png to judge the readability.

    python bench/explorer.py [--sizes 500,2000,5000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "layers" / "core"))

from explorer_browser import launch_chromium, stand_in_api, synthetic_graph  # noqa: E402

from gligabao.explore.server import make_server  # noqa: E402

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
    api = stand_in_api({"main": (entities, edges)})
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
        layout_ms = page.evaluate("gbExplorer.state.layoutMs")
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
            "layout_ms": round(layout_ms) if layout_ms is not None else None,
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
