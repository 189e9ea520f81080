"""Step 5 of remember: which stored entity each entity of the text is (no LLM).

An entity of the text is a stored one of the dataset when its normalized name matches, else
when its vector has a cosine of at least `entity_match_similarity` with a stored entity's whose
name could be the same (the best such). Names could be the same when one is a short form of the
other: each of its words begins a word of the other ("Acme" / "Acme Robotics", "A. Chen" /
"Alice Chen") or it is the other's initials ("IBM"). So two entities with different names that
vectors cannot tell apart ("violin" / "cello", both "a musical instrument"; namesakes "Alice
Chen" / "Alice Park") stay two: a wrong match would move one's facts onto the other, a missed one
only leaves a second entity. `GB_ENTITY_NAME_GUARD=off` matches by the vector alone, as SPEC
section 5 step 5 has it. A matched entity keeps its id and name; an empty description (or
unknown type) is filled and updated_at is bumped. The others are created.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import psycopg

from gligabao.db import graph_writes
from gligabao.memory.extraction import TextEntity
from gligabao.model import StoredEntity


def send_stored_entities(
    conn: psycopg.Connection,
    dataset_id: int,
    entities: Sequence[TextEntity],
    vectors: Sequence[Sequence[float]],
    matches: Sequence[int | None],
    *,
    model_id: str | None = None,
) -> Callable[[], dict[str, StoredEntity]]:
    """Send the update of the matched entities (`matches`, from match_entities) and the creation
    of the others (with `model_id`, the model that extracted them); the returned function reads them (normalized name -> the stored entity), so
    that statements sent meanwhile share its round trip in pipeline mode."""
    if not entities:
        return dict
    # Several names of the text may be one stored entity ("Alice", "Alice Smith"): one row each.
    rows: list[graph_writes.EntityRow] = []
    row_of: dict[str, int] = {}
    row_of_stored_id: dict[int, int] = {}
    for entity, vector, match in zip(entities, vectors, matches, strict=True):
        stored_id = match
        if stored_id is not None and stored_id in row_of_stored_id:
            row_of[entity.normalized_name] = row_of_stored_id[stored_id]
            continue
        row_of[entity.normalized_name] = len(rows)
        if stored_id is not None:
            row_of_stored_id[stored_id] = len(rows)
        rows.append(
            graph_writes.EntityRow(
                stored_id, entity.name, entity.normalized_name, entity.type, entity.description, vector
            )
        )
    cursor = graph_writes.send_upsert_entities(conn, dataset_id, rows, model_id)

    def stored_entities() -> dict[str, StoredEntity]:
        stored = cursor.fetchall()
        return {name: stored[index] for name, index in row_of.items()}

    return stored_entities
