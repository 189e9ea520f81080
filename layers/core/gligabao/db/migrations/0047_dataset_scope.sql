-- The rows a transaction sees: those of the user's datasets, and only of the dataset the
-- transaction is about when it names one (`gligabao.dataset`, set with the user for the
-- transaction only, db/connection.py).
--
-- Until now each policy read the ids of all the user's datasets into an array, and tested every
-- row against that array one element at a time (an array built at run time is not hashed). Both
-- grew with the number of the user's datasets, once per table a statement names (the query's
-- context statement names them 52 times): a user of 10,000 datasets took 22 ms over a context
-- statement of 1.4 ms, and a query 37 ms over 16 ms. A transaction naming its dataset now reads
-- one row of gb_datasets (its unique index on user and name) and tests each row against one id.
-- Naming a dataset only narrows what the user sees: the user is still required, so a dataset of
-- another user of that name is never seen.
CREATE FUNCTION public.gb_visible_datasets() RETURNS bigint[]
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT ARRAY(
        SELECT id FROM public.gb_datasets
        WHERE user_id = NULLIF(current_setting('gligabao.user_id', true), '')
          AND name = NULLIF(current_setting('gligabao.dataset', true), '')
        UNION ALL
        SELECT id FROM public.gb_datasets
        WHERE user_id = NULLIF(current_setting('gligabao.user_id', true), '')
          AND NULLIF(current_setting('gligabao.dataset', true), '') IS NULL)
$$;
GRANT EXECUTE ON FUNCTION public.gb_visible_datasets() TO gligabao_app;

-- `(SELECT ...)::bigint[]`: an InitPlan, evaluated once per statement and table, as the array was
-- (the cast: `ANY (SELECT ...)` would compare each id with the whole array).
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['gb_artifacts', 'gb_entities', 'gb_edges', 'gb_image_artifacts', 'gb_trajectories',
                             'gb_entity_recency', 'gb_entity_descriptions',
                             'gb_series', 'gb_series_points', 'gb_series_anchors'] LOOP
        EXECUTE format(
            'ALTER POLICY %I ON public.%I USING (dataset_id = ANY ((SELECT public.gb_visible_datasets())::bigint[]))',
            t || '_of_the_user', t);
    END LOOP;
END $$;

ALTER POLICY gb_edge_statements_of_the_user ON public.gb_edge_statements
    USING (dataset_id = ANY ((SELECT public.gb_visible_datasets())::bigint[])
           AND EXISTS (SELECT 1 FROM public.gb_edges g
                       WHERE g.id = gb_edge_statements.edge_id AND g.dataset_id = gb_edge_statements.dataset_id));
ALTER POLICY gb_edge_conflicts_of_the_user ON public.gb_edge_conflicts
    USING (dataset_id = ANY ((SELECT public.gb_visible_datasets())::bigint[])
           AND EXISTS (SELECT 1 FROM public.gb_edges g
                       WHERE g.id = gb_edge_conflicts.edge_id AND g.dataset_id = gb_edge_conflicts.dataset_id)
           AND EXISTS (SELECT 1 FROM public.gb_edges g
                       WHERE g.id = gb_edge_conflicts.other_edge_id AND g.dataset_id = gb_edge_conflicts.dataset_id));
