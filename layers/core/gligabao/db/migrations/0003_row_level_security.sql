-- Tenant isolation in the database itself: row-level security on every table of user data,
-- keyed on the transaction's user (`set_config('gligabao.user_id', ..., true)`, which every unit
-- of work sends with its BEGIN). A transaction without it sees no row and can write none.
--
-- The service connects as gligabao_app: it owns nothing, is no superuser, has no BYPASSRLS,
-- and gets DML on the gb_ tables only. The tables stay owned by the role that migrates (the
-- embedded PostgreSQL's superuser locally, the cluster's master user on AWS), which keeps seeing
-- every row: RLS is enabled but not forced, so a later data migration does the same on Aurora
-- (where the owner is no superuser) as in the tests, and the keyword helpers below can use their
-- indexes. The password of gligabao_app is set from outside (its own secret on AWS, the admin
-- connection in tests); locally the embedded PostgreSQL trusts its Unix socket.
--
-- A table created by a later migration is granted to gligabao_app by the default privileges
-- below, but must enable row-level security and create its own policy.

DO $$
BEGIN
    CREATE ROLE gligabao_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
EXCEPTION
    -- the role is cluster-wide: another database of the cluster (or a concurrent migrator) made it
    WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

GRANT USAGE ON SCHEMA public TO gligabao_app;
REVOKE CREATE ON SCHEMA public FROM gligabao_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON
    gb_datasets, gb_artifacts, gb_entities, gb_edges, gb_entity_artifacts, gb_edge_artifacts,
    gb_entity_sessions, gb_edge_sessions, gb_image_artifacts, gb_inferences, gb_trajectories
    TO gligabao_app;
GRANT SELECT ON gb_schema_migrations TO gligabao_app;  -- the health check reads the version
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO gligabao_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO gligabao_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO gligabao_app;

-- The user's rows. NULLIF: after a first transaction the setting exists in the session with ''.
ALTER TABLE gb_datasets ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_datasets_of_the_user ON gb_datasets
    USING (user_id = NULLIF(current_setting('gligabao.user_id', true), ''));

ALTER TABLE gb_inferences ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_inferences_of_the_user ON gb_inferences
    USING (user_id = NULLIF(current_setting('gligabao.user_id', true), ''));

-- The rows of the user's datasets. `= ANY(ARRAY(SELECT ...))` is an InitPlan: the user's dataset
-- ids are read once per statement (one index lookup), and the condition can use the dataset
-- indexes; `IN (SELECT ...)` would be a hashed SubPlan tested on every row.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['gb_artifacts', 'gb_entities', 'gb_edges', 'gb_image_artifacts', 'gb_trajectories'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY %I ON %I USING (dataset_id = ANY (ARRAY('
            '    SELECT id FROM gb_datasets'
            '    WHERE user_id = NULLIF(current_setting(''gligabao.user_id'', true), ''''))))',
            t || '_of_the_user', t);
    END LOOP;
END $$;

-- The links: both ends must be the user's (a write can never tie the user's entity to another
-- user's artifact; the foreign keys alone would not stop it). Each end is one primary-key lookup
-- through that table's own policy.
ALTER TABLE gb_entity_artifacts ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_entity_artifacts_of_the_user ON gb_entity_artifacts
    USING (EXISTS (SELECT 1 FROM gb_entities e WHERE e.id = entity_id)
           AND EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = artifact_id));

ALTER TABLE gb_edge_artifacts ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_edge_artifacts_of_the_user ON gb_edge_artifacts
    USING (EXISTS (SELECT 1 FROM gb_edges g WHERE g.id = edge_id)
           AND EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = artifact_id));

ALTER TABLE gb_entity_sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_entity_sessions_of_the_user ON gb_entity_sessions
    USING (EXISTS (SELECT 1 FROM gb_entities e WHERE e.id = entity_id));

ALTER TABLE gb_edge_sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_edge_sessions_of_the_user ON gb_edge_sessions
    USING (EXISTS (SELECT 1 FROM gb_edges g WHERE g.id = edge_id));

-- Keyword search under row-level security. PostgreSQL applies a policy before any condition of
-- the query that is not LEAKPROOF, and such a condition can then no longer use an index: the
-- gram (GIN, `@>`) and name prefix (`left()`) indexes of migration 0002 would be unusable for
-- gligabao_app, and every entity of the dataset would be scored (600 ms instead of 4 ms at 10k
-- edges). Only a superuser can mark a function LEAKPROOF, which the cluster's master user is not.
-- These functions therefore look the candidates up with the owner's rights, in the given dataset
-- only if it is the transaction user's, and return ids only: the query then reads the rows
-- through the policies (an id of another user's row would still read nothing).
CREATE FUNCTION gb_entities_named(dataset bigint, grams text[]) RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN ARRAY(
        SELECT e.id FROM gb_entities AS e
        WHERE e.dataset_id = dataset
          AND gb_grams(e.dataset_id, e.normalized_name) @> gb_keys(dataset, grams)
          AND EXISTS (SELECT 1 FROM gb_datasets AS d
                      WHERE d.id = dataset
                        AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), '')));
END
$$;

CREATE FUNCTION gb_entities_described(dataset bigint, grams text[]) RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN ARRAY(
        SELECT e.id FROM gb_entities AS e
        WHERE e.dataset_id = dataset
          AND gb_grams(e.dataset_id, lower(e.description)) @> gb_keys(dataset, grams)
          AND EXISTS (SELECT 1 FROM gb_datasets AS d
                      WHERE d.id = dataset
                        AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), '')));
END
$$;

CREATE FUNCTION gb_entities_name_prefixed(dataset bigint, prefixes text[]) RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN ARRAY(
        SELECT e.id FROM gb_entities AS e
        WHERE e.dataset_id = dataset AND left(e.normalized_name, 6) = ANY(prefixes)
          AND EXISTS (SELECT 1 FROM gb_datasets AS d
                      WHERE d.id = dataset
                        AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), '')));
END
$$;

REVOKE ALL ON FUNCTION gb_entities_named(bigint, text[]), gb_entities_described(bigint, text[]),
    gb_entities_name_prefixed(bigint, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_entities_named(bigint, text[]), gb_entities_described(bigint, text[]),
    gb_entities_name_prefixed(bigint, text[]) TO gligabao_app;
