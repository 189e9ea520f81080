"""Run by the python of the reference client's own virtual environment (the `gligabao` 0.7.0
distribution of the gligabao server, not this package): the calls its README shows, through its
public API only, against the base URL given. Prints one JSON object of what each call answered.

Usage: python -I reference_client_calls.py BASE_URL PNG_FILE JPEG_FILE (the PNG is sent as bytes,
the JPEG as its path)"""

import json
import sys
from importlib.metadata import version

from gligabao import Client, GligabaoError


def outcome(call):
    """The decoded reply, or the error the client raised, as the client reports it."""
    try:
        return {"reply": call()}
    except GligabaoError as error:
        return {"error": str(error), "status": error.status}


def main(base_url: str, png_path: str, jpeg_path: str) -> None:
    gb = Client(base_url, timeout=60)
    models = {"extract_graph": "claude-sonnet-4-6", "resolve_edges": "claude-haiku-5-5"}
    reasoning = {"extract_graph": "low", "summarize_chunk": "none", "resolve_edges": "medium"}
    with open(png_path, "rb") as f:
        image = f.read()
    results = {
        "version": version("gligabao"),
        "module": Client.__module__ + ":" + sys.modules["gligabao"].__file__,
        "episode": outcome(lambda: gb.remember("u1", "Alice works at Acme.", kind="episode")),
        "staged": outcome(
            lambda: gb.remember(
                "u1",
                "Alice works at Initech.",
                reference_time="2025-01-31T09:00:00Z",
                kind="knowledge",
                models=models,
                reasoning=reasoning,
            )
        ),
        "image_bytes": outcome(
            lambda: gb.remember(
                "u1", image=image, dataset="charts", models={"extract_image": "claude-sonnet-4-6"}
            )
        ),
        "image_path": outcome(lambda: gb.remember("u1", image=jpeg_path, dataset="photos")),
        "web_search": outcome(lambda: gb.remember("u1", "Apple is a company.", web_search=True)),
        "timeseries": outcome(
            lambda: gb.remember(
                "u1",
                "Apple fell.",
                timeseries=[{"key": "AAPL.close", "points": [("2025-01-31T00:00:00Z", 1.0)]}],
            )
        ),
        "attach_timeseries": outcome(
            lambda: gb.attach_timeseries(
                "u1",
                [
                    {
                        "key": "ACME.close",
                        "unit": "USD",
                        "points": [("2025-01-30T00:00:00Z", 10.0), ("2025-01-31T00:00:00Z", 11.0)],
                        "anchors": [{"entity": {"name": "Acme"}}],
                    }
                ],
            )
        ),
        "attach_without_points": outcome(
            lambda: gb.attach_timeseries(
                "u1", [{"key": "AAPL.close", "points": [], "anchors": [{"entity_id": 1}]}]
            )
        ),
        "attach_to_no_dataset": outcome(
            lambda: gb.attach_timeseries(
                "u1", [{"key": "X", "points": [("2025-01-31T00:00:00Z", 1.0)]}], dataset="nowhere"
            )
        ),
        "model_not_allowed": outcome(
            lambda: gb.remember("u1", "Bob works at Acme.", models={"extract_graph": "claude-opus-4-5"})
        ),
    }
    print(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:])
