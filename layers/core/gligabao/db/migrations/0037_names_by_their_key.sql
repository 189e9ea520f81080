-- gb_entities_of_names(dataset, names): for each name of `names` (by its position, from 1) the id
-- of the dataset's entity of that normalized name, looked up by the unique key (dataset_id,
-- normalized_name), one probe a name; in the transaction user's dataset only.
--
-- A remember looked its names up in its own statement, under row-level security, whose condition
-- `dataset_id = ANY (the user's datasets)` sat beside the statement's `dataset_id = $1`. With both,
-- on tables whose statistics were gone or not yet gathered, the planner chose the index of name
-- prefixes with the two dataset conditions and filtered every entity of the dataset by name, for
-- each name: 999 rows a name, 12.7-14.4 ms for 50 names, on a copy of the realistic world of 10,000
-- facts (bench/realistic_world.py) whose entities' statistics were deleted; 0.6 ms by the key,
-- which the planner chose as soon as the condition of row-level security was not there. With the
-- owner's rights the lookup carries only its own conditions (as gb_entities_could_be, migration
-- 0015, and gb_live_edges_around, 0034); sequential scans off.
CREATE FUNCTION gb_entities_of_names(dataset bigint, names text[])
RETURNS TABLE (name_ord bigint, entity_id bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
SET enable_seqscan = off
AS $$
    SELECT n.ord, e.id
    FROM unnest(names) WITH ORDINALITY AS n(normalized_name, ord)
    CROSS JOIN LATERAL (SELECT e.id FROM gb_entities AS e
                        WHERE e.dataset_id = dataset AND e.normalized_name = n.normalized_name
                        OFFSET 0) AS e
    WHERE EXISTS (SELECT 1 FROM gb_datasets AS d
                  WHERE d.id = dataset
                    AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), ''))
$$;

REVOKE ALL ON FUNCTION gb_entities_of_names(bigint, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_entities_of_names(bigint, text[]) TO gligabao_app;
