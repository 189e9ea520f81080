-- Forget: what deleting an entity or an artifact looks up, by index rather than by a scan of
-- the whole table per deleted row. The cascade of a deleted entity finds its edges by
-- source_id and target_id (the live-edge indexes of 0001 do not cover superseded edges), forget
-- asks whether an entity is still touched by any edge, and the cascade of a deleted artifact
-- finds its image row.

CREATE INDEX gb_edges_source ON gb_edges (source_id);
CREATE INDEX gb_edges_target ON gb_edges (target_id);
CREATE INDEX gb_image_artifacts_artifact ON gb_image_artifacts (artifact_id);
