"""Bring your own facts: remember entities and edges your own pipeline extracted (or exported from
another store), in the extraction's own shape. No extraction call is made; the rest is a text's:
one embeddings request, resolution against what is known (the same entity, a restated or a
contradicted fact), supersession, provenance (the artifact holds the facts as given), sessions.

    make serve              # the local API on http://127.0.0.1:7878, with the provider keys set
    .venv/bin/python examples/bring_your_own_facts.py [API_URL]
"""

from __future__ import annotations

import sys

from gligabao.client import LOCAL_API_URL, BadRequestError, Memory

IMPORTED = {
    "entities": [
        {"name": "Alice", "type": "person", "description": "engineer"},
        {"name": "Acme", "type": "organization"},
        {"name": "Paris", "type": "city"},
    ],
    "edges": [
        {"source": "Alice", "target": "Acme", "relation": "works_at", "valid_at": "2023-01-01T00:00:00Z"},
        {
            "source": "Alice",
            "target": "Paris",
            "relation": "lives_in",
            "description": "Alice lives in Paris.",
        },
    ],
}
MOVED = {
    "entities": [{"name": "Alice"}, {"name": "Rome", "type": "city"}],
    "edges": [
        {"source": "Alice", "target": "Rome", "relation": "lives_in", "valid_at": "2025-01-31T00:00:00Z"}
    ],
}


def main(url: str = LOCAL_API_URL) -> None:
    with Memory(url, user_id="facts-user", dataset="imported") as memory:
        first = memory.remember_facts(IMPORTED, session_id="import-1", reference_time="2024-06-01T00:00:00Z")
        for edge in first.edges:
            print(
                f"stored  [edge {edge.id}] {edge.source} {edge.relation} {edge.target} (from {edge.valid_at})"
            )

        second = memory.remember_facts(MOVED, session_id="import-2")
        alice = next(entity for entity in second.entities if entity.name == "Alice")
        print(f"known   Alice is entity {alice.id}, created now: {alice.created}")
        for old in second.superseded:
            print(f"closed  [edge {old.id}] no longer holds from {old.invalid_at}")

        artifact = memory.artifact(first.artifact_id)
        print(f"artifact {artifact.id} of kind {artifact.kind}: {artifact.text[:60]}...")

        try:
            memory.remember_facts(
                {"entities": [{"name": "Bob"}], "edges": [{**MOVED["edges"][0], "source": "Eve"}]}
            )
        except BadRequestError as error:  # a bad shape stores nothing and calls no model
            print(f"refused {error.status}: {error.error}")
        memory.delete_dataset("imported")


if __name__ == "__main__":
    main(*sys.argv[1:2])
