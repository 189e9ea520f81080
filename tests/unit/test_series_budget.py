"""A query's series take what of the token budget the graph, the passages and the nearby block
leave: the prompt never holds more than the budget."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import UTC, datetime
from types import SimpleNamespace

from gligabao.ai.prompts.query import query_prompt
from gligabao.limits import Limits
from gligabao.memory import timeseries
from gligabao.memory.query import series_lines
from gligabao.memory.ranking import estimated_tokens
from gligabao.memory.retrieval import Context
from gligabao.model import GeoAnchor, Nearby, NearbyEntity, StoredEntity

PARIS = GeoAnchor(3, "Paris", 48.8566, 2.3522, "city")
LINES = [f"[series {n}] Acme close (USD): 40 points, last 12.5 on 2025-05-03, trend up" for n in range(200)]
MEMORY = SimpleNamespace(database=SimpleNamespace(transaction=lambda *args, **kwargs: nullcontext()))


def tokens_before_the_time(content: str) -> int:
    return sum(estimated_tokens(line) for line in content.split("<current_time>")[0].splitlines())


def test_the_series_leave_room_for_the_nearby_block(monkeypatch):
    monkeypatch.setattr(timeseries, "context_series", lambda *args: [])
    monkeypatch.setattr(timeseries, "render_series_lines", lambda found: LINES)
    limits = Limits(context_token_budget=600)
    context = Context(dataset_id=1, entities=[StoredEntity(7, "London", "city", "")], holds_series=True)
    alone = series_lines(MEMORY, "u1", context, limits)
    town = StoredEntity(8, "Saint-Germain-en-Laye", "city", "a town west of Paris")
    context.nearby = Nearby(50.0, (PARIS,), tuple(NearbyEntity(town, 48.9, 2.1, n, PARIS) for n in range(30)))

    context.series_lines = series_lines(MEMORY, "u1", context, limits)
    _, content = query_prompt(context, "What is near Paris?", datetime(2025, 5, 4, tzinfo=UTC))

    assert 0 < len(context.series_lines) < len(alone) < len(LINES)
    assert tokens_before_the_time(content) <= limits.context_token_budget
