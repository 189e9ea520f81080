"""The context statement of a filtered search (POST /v1/gb/search): the same builders as query's
(db/graph_reads.py), with the filters inside every path that finds a row, in the same one statement.

* **Facts** (the edge index, the similar facts, the expansion, the second hop) must satisfy every
  filter given: their relation, their validity overlapping the valid-time window (a fact without
  `valid_at` is in no window), their creation in the created-time window, a session among the
  given ones (gb_edge_sessions), an artifact holding the metadata (the one that first stated it
  or any that restated it), an end of one of the entity types; live ones only unless
  `include_expired`.
* **Seeds** (keyword, similarity and fallback ones): a session (gb_entity_sessions), an artifact
  holding the metadata (gb_entity_artifacts). The entities a search returns are then those of the
  entity types (memory/search.py); the ends of a kept fact come with it otherwise.
* **Passages**: a chunk of a session among the given ones, holding the metadata (a chunk has its
  text's), created in the window. Entity types, relations and the valid-time window are the
  graph's: a filter naming one of them keeps no passage.

Every condition's parameter is null when its filter is not given: one statement text for every
combination. The facts' condition is a function of migration 0033 (`gb_edge_passes`), so that the
statement stays under the 16 KB past which RDS Proxy pins a session
(tests/integration/test_statement_sizes.py).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb

from gligabao.db.graph_reads import (
    CONTEXT_SELECT,
    FACTS_VALID_AT,
    VECTOR_INDEXES,
    FactFilter,
    context_parameters,
    expansion_ctes,
    passages_ctes,
    seeds_ctes,
    similar_facts_ctes,
    similarity_search,
    with_ctes,
)
from gligabao.limits import Limits


@dataclass(frozen=True)
class RetrievalFilters:
    """What a search may return; None (or empty) where a filter is not given."""

    entity_types: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    metadata: dict | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    include_expired: bool = False

    @property
    def graph_only(self) -> bool:
        """A filter passages cannot satisfy (they have no type, relation or validity)."""
        return bool(self.entity_types or self.relations or self.valid_from or self.valid_to)

    def parameters(self) -> dict[str, object]:
        return {
            "f_types": list(self.entity_types) or None,
            "f_relations": list(self.relations) or None,
            "f_sessions": list(self.session_ids) or None,
            "f_metadata": Jsonb(self.metadata) if self.metadata else None,
            "f_valid_from": self.valid_from,
            "f_valid_to": self.valid_to,
            "f_created_from": self.created_from,
            "f_created_to": self.created_to,
            "f_include_expired": self.include_expired,
            "f_graph_only": self.graph_only,
        }


_IN_CREATED_WINDOW = """(%(f_created_from)s::timestamptz IS NULL OR {x}.created_at >= %(f_created_from)s::timestamptz)
             AND (%(f_created_to)s::timestamptz IS NULL OR {x}.created_at < %(f_created_to)s::timestamptz)"""

# The edge found ({g}id) passes the filters (migration 0033's gb_edge_passes, written once there:
# the statement tests it in six paths).
_FILTERED_EDGE = (
    "public.gb_edge_passes({g}id, %(f_relations)s::text[], %(f_valid_from)s::timestamptz,"
    " %(f_valid_to)s::timestamptz, %(f_created_from)s::timestamptz, %(f_created_to)s::timestamptz,"
    " %(f_sessions)s::text[], %(f_metadata)s::jsonb, %(f_types)s::text[])"
)
FILTERED_FACTS = FactFilter("({g}expired_at IS NULL OR %(f_include_expired)s::boolean)", _FILTERED_EDGE)
# A query asked `as_of` a time, filtered: the facts valid then (superseded ones included) that the
# filters let through.
FILTERED_FACTS_VALID_AT = FactFilter(FACTS_VALID_AT.condition, _FILTERED_EDGE)

# On the seed entity `e` (migration 0033's gb_entity_passes): mentioned in one of the sessions, by
# an artifact holding the metadata (remember links every entity a text mentions, known ones included, so the ends of a fact that
# passes these pass them too). Not its type nor its creation: a seed is the way to its facts, and
# "the places where Alice lived" start from Alice, a person known for years.
FILTERED_SEEDS = "public.gb_entity_passes(e.id, %(f_sessions)s::text[], %(f_metadata)s::jsonb)"

# On the chunk `a`.
FILTERED_CHUNKS = (
    """NOT %(f_graph_only)s::boolean
             AND """
    + _IN_CREATED_WINDOW.replace("{x}", "a")
    + """
             AND (%(f_sessions)s::text[] IS NULL OR a.session_id = ANY (%(f_sessions)s::text[]))
             AND (%(f_metadata)s::jsonb IS NULL OR a.metadata @> %(f_metadata)s::jsonb)"""
)


def filtered_context_statement(facts: FactFilter) -> str:
    return with_ctes(
        [
            *(similarity_search(index, facts) for index in VECTOR_INDEXES),
            similar_facts_ctes(facts),
            seeds_ctes(FILTERED_SEEDS),
            expansion_ctes(facts),
            passages_ctes(FILTERED_CHUNKS),
        ],
        CONTEXT_SELECT,
    )


FILTERED_CONTEXT_SQL = filtered_context_statement(FILTERED_FACTS)
FILTERED_CONTEXT_AS_OF_SQL = filtered_context_statement(FILTERED_FACTS_VALID_AT)


def send_filtered_context_rows(
    conn: psycopg.Connection,
    *,
    dataset_id: int,
    vector: list[float],
    keyword_seeds: list[int],
    limits: Limits,
    filters: RetrievalFilters,
    as_of: datetime | None = None,
    hop_terms: Sequence[str] = (),
    known_large: Collection[str] = (),
) -> psycopg.Cursor:
    """graph_reads.send_context_rows with `filters` in every path: the same rows, bands and order;
    with `as_of`, from the facts valid then (include_expired is then moot: superseded ones count)."""
    return conn.execute(
        FILTERED_CONTEXT_SQL if as_of is None else FILTERED_CONTEXT_AS_OF_SQL,
        {
            **context_parameters(
                dataset_id=dataset_id,
                vector=vector,
                keyword_seeds=keyword_seeds,
                limits=limits,
                as_of=as_of,
                hop_terms=hop_terms,
                known_large=known_large,
            ),
            **filters.parameters(),
        },
    )
