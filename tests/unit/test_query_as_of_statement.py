"""A question asked as of a time (SPEC section 6) runs its own statement and prompt; without
`as_of`, the statement, its parameters and the prompt are the seed's, unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from gligabao.ai.prompts.query import QUERY_AS_OF_SYSTEM, QUERY_SYSTEM, query_prompt
from gligabao.db import graph_reads
from gligabao.limits import DEFAULT_LIMITS
from gligabao.model import StoredEdge, StoredEntity

NOW = datetime(2026, 1, 1, tzinfo=UTC)
AS_OF = datetime(2022, 6, 1, tzinfo=UTC)
# As the statement sends it (graph_reads.compact_sql: no space beside parentheses).
VALID_AT_AS_OF = "valid_at <= %(as_of)s AND({g}invalid_at IS NULL OR {g}invalid_at > %(as_of)s)"


@dataclass
class Context:
    entities: list = field(default_factory=lambda: [StoredEntity(1, "Alice", "person", "")])
    edges: list = field(default_factory=list)
    passages: list = field(default_factory=list)


def parameters(as_of=None) -> dict:
    return graph_reads.context_parameters(
        dataset_id=1, vector=[0.0], keyword_seeds=[], limits=DEFAULT_LIMITS, as_of=as_of
    )


def test_without_as_of_the_statement_filters_the_live_facts_and_has_no_as_of_parameter():
    statement = graph_reads.context_statement()

    assert statement is not graph_reads._CONTEXT_AS_OF_SQL
    assert statement == graph_reads._CONTEXT_SQL
    assert "as_of" not in statement and "as_of" not in parameters()
    # the edge index (HNSW candidates and exact scan), the similar facts, both ends of the expansion
    assert statement.count("expired_at IS NULL") == 9  # and both ends of the ranked second and third hops


def test_with_as_of_every_live_filter_becomes_valid_at_as_of_and_as_of_is_the_only_new_parameter():
    statement = graph_reads.context_statement(graph_reads.FACTS_VALID_AT)

    assert "expired_at IS NULL" not in statement
    assert statement.count(VALID_AT_AS_OF.format(g="r.")) == 2  # the edge index: candidates, exact scan
    # similar facts, expansion, second hop (2), third hop (2)
    assert statement.count(VALID_AT_AS_OF.format(g="g.")) == 6
    assert set(parameters(AS_OF)) - set(parameters()) == {"as_of"}


def test_the_prompt_as_of_a_time_says_it_after_the_current_time_and_adds_its_rules():
    system, content = query_prompt(Context(), "Where did Alice work?", NOW, as_of=AS_OF)

    assert system == QUERY_AS_OF_SYSTEM and system.startswith(QUERY_SYSTEM + "\n")
    assert content.endswith(
        "<current_time>2026-01-01T00:00:00Z</current_time>\n<as_of>2022-06-01T00:00:00Z</as_of>\n"
        "<question>\nWhere did Alice work?\n</question>"
    )


def test_the_prompt_without_as_of_is_the_seeds():
    edge = StoredEdge(1, 1, 1, "knows", "", None, AS_OF, None, NOW)

    system, content = query_prompt(Context(edges=[edge]), "Who?", NOW)

    assert system == QUERY_SYSTEM
    assert "as_of" not in system and "<as_of>" not in content
    assert content == (
        "<graph>\n[entity 1] Alice (person)\n[edge 1] Alice(1) --knows--> Alice(1) [valid_at=2022-06-01T00:00:00Z]\n"
        "</graph>\n<current_time>2026-01-01T00:00:00Z</current_time>\n<question>\nWho?\n</question>"
    )
