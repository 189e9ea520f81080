"""Helpers of the forget tests: the orphan checker every forget test runs afterwards, and a fully
linked graph arranged the way remember stores one (every edge linked to the artifacts that state
it, both endpoints to the same artifacts, first stated by the lowest of them)."""

from __future__ import annotations

import psycopg
from query_helpers import Graph

# Every row that points nowhere, or that nothing holds, as a readable line. Foreign keys make
# some of these impossible today; the checker asks anyway, so that a migration dropping a
# cascade, or a forget deleting in the wrong order, is caught by the first test that runs it.
ORPHANS = """
SELECT 'entity link to nothing: ' || ea.entity_id || ' -> artifact ' || ea.artifact_id
FROM gb_entity_artifacts ea
WHERE NOT EXISTS (SELECT 1 FROM gb_entities e WHERE e.id = ea.entity_id)
   OR NOT EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = ea.artifact_id)
UNION ALL
SELECT 'edge link to nothing: ' || ga.edge_id || ' -> artifact ' || ga.artifact_id
FROM gb_edge_artifacts ga
WHERE NOT EXISTS (SELECT 1 FROM gb_edges g WHERE g.id = ga.edge_id)
   OR NOT EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = ga.artifact_id)
UNION ALL
SELECT 'link across datasets: entity ' || e.id || ' -> artifact ' || a.id
FROM gb_entity_artifacts ea JOIN gb_entities e ON e.id = ea.entity_id JOIN gb_artifacts a ON a.id = ea.artifact_id
WHERE e.dataset_id <> a.dataset_id
UNION ALL
SELECT 'link across datasets: edge ' || g.id || ' -> artifact ' || a.id
FROM gb_edge_artifacts ga JOIN gb_edges g ON g.id = ga.edge_id JOIN gb_artifacts a ON a.id = ga.artifact_id
WHERE g.dataset_id <> a.dataset_id
UNION ALL
SELECT 'session link to no entity: ' || s.entity_id || ' ' || s.session_id
FROM gb_entity_sessions s WHERE NOT EXISTS (SELECT 1 FROM gb_entities e WHERE e.id = s.entity_id)
UNION ALL
SELECT 'session link to no edge: ' || s.edge_id || ' ' || s.session_id
FROM gb_edge_sessions s WHERE NOT EXISTS (SELECT 1 FROM gb_edges g WHERE g.id = s.edge_id)
UNION ALL
SELECT 'image row of no artifact: ' || i.id
FROM gb_image_artifacts i WHERE NOT EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = i.artifact_id)
UNION ALL
SELECT 'chunk without its text: ' || c.id
FROM gb_artifacts c
WHERE c.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = c.parent_id)
UNION ALL
SELECT 'edge with a missing endpoint: ' || g.id
FROM gb_edges g
WHERE NOT EXISTS (SELECT 1 FROM gb_entities e WHERE e.id = g.source_id)
   OR NOT EXISTS (SELECT 1 FROM gb_entities e WHERE e.id = g.target_id)
UNION ALL
SELECT 'edge first stated by a missing artifact: ' || g.id || ' -> ' || g.artifact_id
FROM gb_edges g
WHERE g.artifact_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = g.artifact_id)
UNION ALL
SELECT 'edge superseded by a missing edge: ' || g.id || ' -> ' || g.superseded_by
FROM gb_edges g
WHERE g.superseded_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM gb_edges s WHERE s.id = g.superseded_by)
UNION ALL
SELECT 'edge no artifact supports: ' || g.id
FROM gb_edges g
WHERE g.artifact_id IS NULL AND NOT EXISTS (SELECT 1 FROM gb_edge_artifacts ga WHERE ga.edge_id = g.id)
UNION ALL
SELECT 'edge first stated by an artifact not linked to it: ' || g.id || ' -> ' || coalesce(g.artifact_id::text, 'none')
FROM gb_edges g
WHERE EXISTS (SELECT 1 FROM gb_edge_artifacts ga WHERE ga.edge_id = g.id)
  AND NOT EXISTS (SELECT 1 FROM gb_edge_artifacts ga WHERE ga.edge_id = g.id AND ga.artifact_id = g.artifact_id)
UNION ALL
SELECT 'entity nothing holds: ' || e.id || ' ' || e.name
FROM gb_entities e
WHERE NOT EXISTS (SELECT 1 FROM gb_entity_artifacts ea WHERE ea.entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM gb_edges g WHERE g.source_id = e.id OR g.target_id = e.id)
"""


def orphans(db: psycopg.Connection) -> list[str]:
    """Every link or provenance row pointing nowhere, every entity no artifact or edge holds, every
    chunk without its text; empty when the graph is whole."""
    return [row[0] for row in db.execute(ORPHANS).fetchall()]


def vectors_of(db: psycopg.Connection) -> dict[str, int]:
    """How many vectors each of the four indexes holds."""
    row = db.execute(
        """SELECT (SELECT count(embedding) FROM gb_entities), (SELECT count(embedding) FROM gb_edges),
                  (SELECT count(embedding) FROM gb_artifacts),
                  (SELECT count(summary_embedding) FROM gb_artifacts)"""
    ).fetchone()
    return dict(zip(("entities", "edges", "chunks", "summaries"), row, strict=True))


class LinkedGraph(Graph):
    """A graph whose rows are linked as remember links them."""

    def mentions(self, artifact_id: int, entity_id: int, session_id: str | None = None) -> None:
        self.db.execute(
            "INSERT INTO gb_entity_artifacts VALUES (%s, %s) ON CONFLICT DO NOTHING", [entity_id, artifact_id]
        )
        if session_id:
            self.db.execute(
                "INSERT INTO gb_entity_sessions VALUES (%s, %s) ON CONFLICT DO NOTHING",
                [entity_id, session_id],
            )

    def states(self, artifact_id: int, edge_id: int, session_id: str | None = None) -> None:
        """`artifact_id` states the edge: linked to it, and mentioning its endpoints."""
        self.db.execute(
            "INSERT INTO gb_edge_artifacts VALUES (%s, %s) ON CONFLICT DO NOTHING", [edge_id, artifact_id]
        )
        if session_id:
            self.db.execute(
                "INSERT INTO gb_edge_sessions VALUES (%s, %s) ON CONFLICT DO NOTHING", [edge_id, session_id]
            )
        source_id, target_id = self.db.execute(
            "SELECT source_id, target_id FROM gb_edges WHERE id = %s", [edge_id]
        ).fetchone()
        self.mentions(artifact_id, source_id, session_id)
        self.mentions(artifact_id, target_id, session_id)

    def fact(
        self,
        artifact_id: int,
        source_id: int,
        target_id: int,
        relation: str,
        *,
        session_id: str | None = None,
        **edge,
    ) -> int:
        """An edge first stated by `artifact_id`, linked to it with its endpoints."""
        edge_id = self.edge(source_id, target_id, relation, artifact_id=artifact_id, **edge)
        self.states(artifact_id, edge_id, session_id)
        return edge_id
