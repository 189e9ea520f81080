-- Forget: the cascade of a deleted artifact (a forgotten text, its chunks, a deleted dataset's
-- artifacts) finds its image row by index, not by a scan of the whole table per artifact. (The
-- cascades of a deleted entity find its edges through the timeline indexes of 0005, which lead
-- with source_id and target_id.)

CREATE INDEX gb_image_artifacts_artifact ON gb_image_artifacts (artifact_id);
