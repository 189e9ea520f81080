-- A dataset's chunks, by an index of their own.
--
-- Each question's passage searches first count the dataset's chunks (up to the exact-scan limit),
-- and a dataset with few of them has them scanned exactly. Both read gb_artifacts by dataset, where
-- a chunk sits among the dataset's texts: an agent that remembers many short messages (unchunked
-- texts) gave every question a walk through all of them (bench/query.py --texts 300000: p50 77 ms
-- at 100k edges, against 39-50 with this index). This partial index holds the chunks alone: the count reads at most the limit's entries,
-- and the exact scan only the chunks' rows.
CREATE INDEX gb_artifacts_chunks ON gb_artifacts (dataset_id, id) WHERE kind = 'chunk';
