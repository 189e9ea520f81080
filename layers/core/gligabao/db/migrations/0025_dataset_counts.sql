-- The datasets list's counts, read from indexes.
--
-- `GET /v1/gb/datasets` counts each dataset's artifacts, queued and failed ones apart, and its live
-- facts: the endpoint a client polls for a batch's progress. It read a row of gb_edges for each
-- live fact and a row of gb_artifacts for each artifact (110 ms for the 100k benchmark's queried
-- dataset with 300,000 texts, against 25 ms with these indexes: bench/datasets_list.py). The live facts are counted from an index of them by dataset, and
-- only the artifacts not done are read, from an index of those; the artifacts themselves are
-- counted from the index by dataset, less the chunks (migration 0023's index).
CREATE INDEX gb_edges_live_dataset ON gb_edges (dataset_id) WHERE expired_at IS NULL;
CREATE INDEX gb_artifacts_unfinished ON gb_artifacts (dataset_id) INCLUDE (status, gives_up_at)
    WHERE status <> 'done';
