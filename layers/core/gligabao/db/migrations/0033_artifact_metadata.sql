-- The caller's own labels on what it remembers: a flat JSON object (string, number and boolean
-- values; api/metadata_models.py checks the keys, the values and the size before anything is
-- stored).
--
-- A chunk carries its text's, so a passage matches a filter as its text does. A constant default
-- adds the column without rewriting the table. No index: the filters (db/retrieval_filters.py)
-- test `metadata @> filter` on the artifacts of the candidate rows a search or a page already
-- holds, each found by its primary key, never by scanning artifacts for a label.
ALTER TABLE gb_artifacts
    ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb
        CONSTRAINT gb_artifacts_metadata_object CHECK (pg_catalog.jsonb_typeof(metadata) = 'object');

-- Whether an edge passes a search's filters (db/retrieval_filters.py), each null when not given:
-- its relation, its validity overlapping [valid_from, valid_to) (an edge without valid_at is in
-- no window), its creation in [created_from, created_to), a session of the list (gb_edge_sessions),
-- an artifact holding the metadata among those that stated it, an end of one of the types. The
-- search statement tests it in each of its six paths that find an edge: written once here, it keeps
-- the statement under the 16 KB past which RDS Proxy pins a session. Invoker's rights: row-level
-- security applies to every table it reads.
CREATE FUNCTION public.gb_edge_passes(
    p_edge bigint, p_relations text[], p_valid_from timestamptz, p_valid_to timestamptz,
    p_created_from timestamptz, p_created_to timestamptz, p_sessions text[], p_metadata jsonb, p_types text[]
) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT EXISTS (
        SELECT 1 FROM public.gb_edges AS fe
        WHERE fe.id = p_edge
          AND (p_relations IS NULL OR fe.relation = ANY (p_relations))
          AND ((p_valid_from IS NULL AND p_valid_to IS NULL)
               OR (fe.valid_at IS NOT NULL
                   AND (p_valid_to IS NULL OR fe.valid_at < p_valid_to)
                   AND (p_valid_from IS NULL OR fe.invalid_at IS NULL OR fe.invalid_at > p_valid_from)))
          AND (p_created_from IS NULL OR fe.created_at >= p_created_from)
          AND (p_created_to IS NULL OR fe.created_at < p_created_to)
          AND (p_sessions IS NULL
               OR EXISTS (SELECT 1 FROM public.gb_edge_sessions AS fs
                          WHERE fs.edge_id = fe.id AND fs.session_id = ANY (p_sessions)))
          AND (p_metadata IS NULL
               OR EXISTS (SELECT 1 FROM public.gb_artifacts AS fa
                          WHERE fa.metadata @> p_metadata
                            AND (fa.id = fe.artifact_id
                                 OR fa.id IN (SELECT fl.artifact_id FROM public.gb_edge_artifacts AS fl
                                              WHERE fl.edge_id = fe.id))))
          AND (p_types IS NULL
               OR EXISTS (SELECT 1 FROM public.gb_entities AS ft
                          WHERE ft.id IN (fe.source_id, fe.target_id) AND ft.type = ANY (p_types))))
$$;

REVOKE ALL ON FUNCTION public.gb_edge_passes(bigint, text[], timestamptz, timestamptz, timestamptz, timestamptz,
                                              text[], jsonb, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.gb_edge_passes(bigint, text[], timestamptz, timestamptz, timestamptz, timestamptz,
                                                 text[], jsonb, text[]) TO gligabao_app;

-- Whether an entity may seed a filtered search: mentioned in one of the sessions
-- (gb_entity_sessions) and by an artifact holding the metadata (gb_entity_artifacts), each null
-- when not given. Tested twice by the statement (the seeds, the fallback ones).
CREATE FUNCTION public.gb_entity_passes(p_entity bigint, p_sessions text[], p_metadata jsonb) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT (p_sessions IS NULL
            OR EXISTS (SELECT 1 FROM public.gb_entity_sessions AS fs
                       WHERE fs.entity_id = p_entity AND fs.session_id = ANY (p_sessions)))
       AND (p_metadata IS NULL
            OR EXISTS (SELECT 1 FROM public.gb_entity_artifacts AS fl
                       JOIN public.gb_artifacts AS fa ON fa.id = fl.artifact_id
                       WHERE fl.entity_id = p_entity AND fa.metadata @> p_metadata))
$$;

REVOKE ALL ON FUNCTION public.gb_entity_passes(bigint, text[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.gb_entity_passes(bigint, text[], jsonb) TO gligabao_app;
