"""A route's tree of `Depends()` is built once per function, not on every request (api/app.py,
build_dependency_trees_once); the dependencies themselves still run per request, overridable."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Annotated

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Depends
from aws_lambda_powertools.event_handler import depends as powertools_depends

import gligabao.api.app  # noqa: F401  (builds the trees once)
from gligabao.local.server import build_event

RUNS: list[int] = []


def seven() -> int:
    RUNS.append(1)
    return 7


def doubled(value: Annotated[int, Depends(seven)]) -> int:
    return 2 * value


def value(found: Annotated[int, Depends(doubled)]) -> dict:
    return {"value": found}


def get(app: APIGatewayHttpResolver, path: str) -> dict:
    event = build_event(SimpleNamespace(path=path, method="ANY"), {}, "GET", path, "", {}, b"", "127.0.0.1")
    return json.loads(app.resolve(event, None)["body"])


def test_a_routes_dependency_tree_is_built_once_and_its_dependencies_run_every_time():
    app = APIGatewayHttpResolver()
    app.get("/value")(value)
    RUNS.clear()
    replies = [get(app, "/value")]
    first = powertools_depends.build_dependency_tree.cache_info()
    replies += [get(app, "/value") for _ in range(2)]
    after = powertools_depends.build_dependency_tree.cache_info()

    assert replies == [{"value": 14}] * 3 and len(RUNS) == 3
    assert after.misses == first.misses  # built by the first request only
    assert after.hits - first.hits == 2
    app.dependency_overrides[seven] = lambda: 5
    assert get(app, "/value") == {"value": 10}
