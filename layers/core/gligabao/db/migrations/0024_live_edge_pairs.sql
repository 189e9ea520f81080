-- The live edges of a source, target and relation, by an index of their own.
--
-- Before it resolves a remember's facts, the store looks up the live edges the new facts restate
-- (the same source, target and relation). Those were read through the index of the source's live
-- edges, which lists every fact of the source: an entity most facts are about (an agent's user)
-- made each remember read all of them: 55 ms for 50 new facts about one with 20,000 facts, against
-- 8 ms with this index (bench/fact_candidates.py).
CREATE INDEX gb_edges_live_pair ON gb_edges (source_id, target_id, relation) WHERE expired_at IS NULL;
