-- The live edges of an entity, newest first, read in the order the write path and retrieval take
-- them: (created_at DESC, id DESC), with the id that tells apart the facts of one remember (they
-- share its transaction's created_at).
--
-- The indexes of migration 0001 held (created_at DESC) only. With statistics the planner read them
-- in that order and sorted each run of equal times; without (a dataset just imported, which
-- autovacuum has not analyzed yet) it took the entity's live edges through a bitmap scan of any
-- index led by the entity (gb_edges_live_pair) and sorted them all, for an entity most facts are
-- about every one of its facts instead of the newest 1,000 (docs/performance.md, "The write path
-- as the graph grows"). In the exact order, the ordered walk needs no sort and is the cheaper plan
-- with statistics or without.
--
-- Built beside the old ones, which are dropped only then, so that the table is locked against
-- reads only for the drop at the end, not for the build.
CREATE INDEX gb_edges_live_source_newest ON gb_edges (source_id, created_at DESC, id DESC)
    WHERE expired_at IS NULL;
CREATE INDEX gb_edges_live_target_newest ON gb_edges (target_id, created_at DESC, id DESC)
    WHERE expired_at IS NULL;
DROP INDEX gb_edges_live_source;
DROP INDEX gb_edges_live_target;
ALTER INDEX gb_edges_live_source_newest RENAME TO gb_edges_live_source;
ALTER INDEX gb_edges_live_target_newest RENAME TO gb_edges_live_target;
