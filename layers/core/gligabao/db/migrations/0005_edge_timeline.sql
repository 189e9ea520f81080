-- Reading memory back: what superseded what, an entity's whole timeline, a session a page at a time.
--
-- superseded_by: the edge whose fact contradicted this one (set by remember when it supersedes;
-- NULL for a live edge, an edge only closed by a restatement, and edges superseded before this
-- migration). Forgetting the superseder keeps the superseded edge, without the link.
ALTER TABLE gb_edges ADD COLUMN superseded_by bigint REFERENCES gb_edges (id) ON DELETE SET NULL;
-- The foreign key's own lookups: deleting an edge (or a dataset) finds what it superseded here
-- instead of scanning the table once per deleted edge.
CREATE INDEX gb_edges_superseded_by ON gb_edges (superseded_by) WHERE superseded_by IS NOT NULL;

-- Every edge touching an entity, live and superseded, in the timeline's order (valid_at, then id;
-- an edge without valid_at first): a page of the timeline is an index range scan on each side.
-- They also serve the cascades of a deleted entity, which the live-only indexes of 0001 do not.
CREATE INDEX gb_edges_source_timeline
    ON gb_edges (source_id, (coalesce(valid_at, '-infinity'::timestamptz)), id);
CREATE INDEX gb_edges_target_timeline
    ON gb_edges (target_id, (coalesce(valid_at, '-infinity'::timestamptz)), id);

-- A session's lists, read a page at a time in id order: the session indexes of 0001 carry the id
-- too (they still serve every lookup by session alone).
CREATE INDEX gb_entity_sessions_session_entity ON gb_entity_sessions (session_id, entity_id);
DROP INDEX gb_entity_sessions_session;
CREATE INDEX gb_edge_sessions_session_edge ON gb_edge_sessions (session_id, edge_id);
DROP INDEX gb_edge_sessions_session;
CREATE INDEX gb_artifacts_session_id ON gb_artifacts (session_id, id) WHERE session_id IS NOT NULL;
DROP INDEX gb_artifacts_session;
