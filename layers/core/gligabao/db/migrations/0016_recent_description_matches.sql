-- The keyword statement's older entities (db/graph_reads.py, keyword_seeds) when one term of the
-- question is enough to make the seeds: only the most recently updated matches of each term.
--
-- Past the window of the most recently updated entities, an entity that is not named scores by
-- its description alone, the same for each term it holds. When the window and the named entities
-- hold fewer matches than the seeds, every entity whose description holds a term of the question
-- was scored: a common word brought thousands (4,808 for "product" among the million-edge
-- benchmark's 250,000 entities: 25 ms of a 31 ms statement). Those that hold one term tie, and a
-- tie goes to the most recently updated: whatever the scores, one holding a single term that is
-- not among the `take` most recent of its term's matches has `take` entities at least as good and
-- more recent above it. The entities holding two terms or more are still all found (by the pairs).
--
-- gb_entities_described (migration 0003) takes `take` and `term`: then only the `take` most
-- recently updated entities whose description holds `term` itself (the grams alone would also
-- let through "banana tank" for "bank", and a look-alike could take a holder's place). Without
-- `take`, every entity whose description holds the grams, as before. With the owner's rights, in
-- the transaction user's dataset only, ids only.
DROP FUNCTION gb_entities_described(bigint, text[]);

CREATE FUNCTION gb_entities_described(dataset bigint, grams text[], take integer DEFAULT NULL, term text DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN ARRAY(
        SELECT e.id FROM gb_entities AS e
        WHERE e.dataset_id = dataset
          AND gb_grams(e.dataset_id, lower(e.description)) @> gb_keys(dataset, grams)
          AND (term IS NULL OR strpos(lower(e.description), term) > 0)
          AND EXISTS (SELECT 1 FROM gb_datasets AS d
                      WHERE d.id = dataset
                        AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), ''))
        ORDER BY e.updated_at DESC, e.id DESC
        LIMIT take);
END
$$;

REVOKE ALL ON FUNCTION gb_entities_described(bigint, text[], integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_entities_described(bigint, text[], integer, text) TO gligabao_app;
