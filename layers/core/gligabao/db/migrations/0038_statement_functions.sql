-- The query's hot statements as functions whose plans each database connection keeps
-- (db/statement_functions.py). Written by `make statement-functions` from db/graph_reads.py:
-- edit the statements there, never here.

CREATE FUNCTION gb_keyword_seeds_855e29381c(text, text, text[], integer[], text[], text, integer, integer, integer, text[], bigint, integer, bigint, integer)
RETURNS TABLE (dataset_id bigint, dataset_created_at timestamp with time zone, id bigint, score integer)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $statement$
#variable_conflict use_column
BEGIN
RETURN QUERY 
        WITH dataset AS MATERIALIZED (
            SELECT id, created_at
            FROM gb_datasets
            WHERE user_id = $1 AND name = $2
        ),
        term AS MATERIALIZED (
            SELECT t.i, t.term,
                   ARRAY(SELECT g.gram FROM unnest($3::text[], $4::integer[]) AS g(gram, i)
                         WHERE g.i = t.i) AS grams
            FROM unnest($5::text[]) WITH ORDINALITY AS t(term, i)
        ),
        named AS MATERIALIZED (
            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.id IN (SELECT unnest((SELECT gb_entities_name_prefixed((SELECT id FROM dataset), $10::text[])))
                           UNION ALL
                           SELECT unnest(gb_entities_named((SELECT id FROM dataset), t.grams)) FROM term AS t)
              AND e.dataset_id = (SELECT id FROM dataset)
        ),
        recent AS MATERIALIZED (
            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score, l.description
            FROM (SELECT e.id, e.updated_at, e.normalized_name, e.description
                  FROM (SELECT entity_id FROM gb_entity_recency  -- the recency index, kept by triggers
                        WHERE dataset_id = (SELECT id FROM dataset)
                        ORDER BY updated_at DESC, entity_id DESC
                        LIMIT $11) AS r
                  JOIN gb_entities AS e ON e.id = r.entity_id) AS e
            CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
        ),
        near AS MATERIALIZED (
            SELECT id, updated_at, score, bool_or(in_window) AS in_window
            FROM (SELECT id, updated_at, score, false AS in_window FROM named
                  UNION ALL
                  SELECT id, updated_at, score, true FROM recent) AS both_kinds
            WHERE score > 0
            GROUP BY id, updated_at, score
        ),
        last_place AS MATERIALIZED (
            -- the score an older entity needs to take the last place: more than it, or as much
            -- when that one is older too (an older entity loses every tie with the window)
            SELECT score + CASE WHEN in_window THEN 1 ELSE 0 END AS to_take
            FROM near
            ORDER BY score DESC, updated_at DESC, id DESC
            OFFSET $12 - 1 LIMIT 1
        ),
        needed AS MATERIALIZED (
            -- the terms an older, unnamed entity's description must hold for that score (0: none)
            SELECT CASE
                WHEN (SELECT count(*) FROM recent) < $11 THEN 0  -- the window held the whole dataset
                WHEN $9::integer <= 0 THEN 0  -- a description never scores
                WHEN NOT EXISTS (SELECT 1 FROM last_place) THEN 1
                ELSE ((SELECT to_take FROM last_place) + $9::integer - 1)
                     / $9::integer
            END AS terms
        ),
        walks AS MATERIALIZED (
            -- per term: walk its newest holders when the window's share of them says the walk ends
            -- within half of `walk_rows`; 0: the gram index
            SELECT t.i,
                   CASE WHEN 2 * $12::bigint * count(r.id)
                             <= $13::bigint * count(r.id) FILTER (WHERE strpos(r.description, t.term) > 0)
                        THEN $13::integer ELSE 0 END AS walk
            FROM term AS t LEFT JOIN recent AS r ON true
            GROUP BY t.i
        ),
        older AS MATERIALIZED (
            SELECT * FROM (
            
            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) = 1
              AND e.id = ANY((SELECT array_agg(x.id) FROM term AS t JOIN walks AS w ON w.i = t.i
                 CROSS JOIN LATERAL unnest(gb_entities_recently_described(
                     (SELECT id FROM dataset), t.grams, $12::integer, t.term, w.walk)) AS x(id))::bigint[])
            UNION ALL

            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) IN (1, 2)
              AND e.id = ANY((SELECT array_agg(x.id) FROM term AS a JOIN term AS b ON a.i < b.i
                 CROSS JOIN LATERAL unnest(gb_entities_described((SELECT id FROM dataset), a.grams || b.grams)) AS x(id))::bigint[])
            UNION ALL

            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) >= 3
              AND e.id = ANY((SELECT array_agg(x.id) FROM term AS a JOIN term AS b ON a.i < b.i JOIN term AS c ON b.i < c.i
                 CROSS JOIN LATERAL unnest(gb_entities_described((SELECT id FROM dataset), a.grams || b.grams || c.grams))
                     AS x(id))::bigint[])
            ) AS found
            WHERE (SELECT terms FROM needed) BETWEEN 1 AND $14
        ),
        candidates AS (
            SELECT id, updated_at, score FROM near
            UNION
            SELECT id, updated_at, score FROM older WHERE score > 0
        )
        SELECT d.id AS dataset_id, d.created_at AS dataset_created_at, s.id, s.score
        FROM dataset AS d
        LEFT JOIN LATERAL (
            SELECT id, score FROM candidates
            ORDER BY score DESC, updated_at DESC, id DESC
            LIMIT $12
        ) AS s ON true
        ;
END
$statement$;
REVOKE ALL ON FUNCTION gb_keyword_seeds_855e29381c(text, text, text[], integer[], text[], text, integer, integer, integer, text[], bigint, integer, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_keyword_seeds_855e29381c(text, text, text[], integer[], text[], text, integer, integer, integer, text[], bigint, integer, bigint, integer) TO gligabao_app;

CREATE FUNCTION gb_keyword_seeds_by_pairs_498314a8c4(text, text, text[], integer[], text[], text, integer, integer, integer, text[], bigint, integer, bigint, integer)
RETURNS TABLE (dataset_id bigint, dataset_created_at timestamp with time zone, id bigint, score integer)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $statement$
#variable_conflict use_column
BEGIN
RETURN QUERY 
        WITH dataset AS MATERIALIZED (
            SELECT id, created_at
            FROM gb_datasets
            WHERE user_id = $1 AND name = $2
        ),
        term AS MATERIALIZED (
            SELECT t.i, t.term,
                   ARRAY(SELECT g.gram FROM unnest($3::text[], $4::integer[]) AS g(gram, i)
                         WHERE g.i = t.i) AS grams
            FROM unnest($5::text[]) WITH ORDINALITY AS t(term, i)
        ),
        named AS MATERIALIZED (
            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.id IN (SELECT unnest((SELECT gb_entities_name_prefixed((SELECT id FROM dataset), $10::text[])))
                           UNION ALL
                           SELECT unnest(gb_entities_named((SELECT id FROM dataset), t.grams)) FROM term AS t)
              AND e.dataset_id = (SELECT id FROM dataset)
        ),
        recent AS MATERIALIZED (
            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score, l.description
            FROM (SELECT e.id, e.updated_at, e.normalized_name, e.description
                  FROM (SELECT entity_id FROM gb_entity_recency  -- the recency index, kept by triggers
                        WHERE dataset_id = (SELECT id FROM dataset)
                        ORDER BY updated_at DESC, entity_id DESC
                        LIMIT $11) AS r
                  JOIN gb_entities AS e ON e.id = r.entity_id) AS e
            CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
        ),
        near AS MATERIALIZED (
            SELECT id, updated_at, score, bool_or(in_window) AS in_window
            FROM (SELECT id, updated_at, score, false AS in_window FROM named
                  UNION ALL
                  SELECT id, updated_at, score, true FROM recent) AS both_kinds
            WHERE score > 0
            GROUP BY id, updated_at, score
        ),
        last_place AS MATERIALIZED (
            -- the score an older entity needs to take the last place: more than it, or as much
            -- when that one is older too (an older entity loses every tie with the window)
            SELECT score + CASE WHEN in_window THEN 1 ELSE 0 END AS to_take
            FROM near
            ORDER BY score DESC, updated_at DESC, id DESC
            OFFSET $12 - 1 LIMIT 1
        ),
        needed AS MATERIALIZED (
            -- the terms an older, unnamed entity's description must hold for that score (0: none)
            SELECT CASE
                WHEN (SELECT count(*) FROM recent) < $11 THEN 0  -- the window held the whole dataset
                WHEN $9::integer <= 0 THEN 0  -- a description never scores
                WHEN NOT EXISTS (SELECT 1 FROM last_place) THEN 1
                ELSE ((SELECT to_take FROM last_place) + $9::integer - 1)
                     / $9::integer
            END AS terms
        ),
        walks AS MATERIALIZED (
            -- per term: walk its newest holders when the window's share of them says the walk ends
            -- within half of `walk_rows`; 0: the gram index
            SELECT t.i,
                   CASE WHEN 2 * $12::bigint * count(r.id)
                             <= $13::bigint * count(r.id) FILTER (WHERE strpos(r.description, t.term) > 0)
                        THEN $13::integer ELSE 0 END AS walk
            FROM term AS t LEFT JOIN recent AS r ON true
            GROUP BY t.i
        ),
        older AS MATERIALIZED (
            SELECT * FROM (
            
            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) = 1
              AND e.id = ANY((SELECT array_agg(x.id) FROM term AS t JOIN walks AS w ON w.i = t.i
                 CROSS JOIN LATERAL unnest(gb_entities_recently_described(
                     (SELECT id FROM dataset), t.grams, $12::integer, t.term, w.walk)) AS x(id))::bigint[])
            UNION ALL

            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) IN (1, 2)
              AND e.id = ANY((SELECT array_agg(x.id) FROM term AS a JOIN term AS b ON a.i < b.i
                 CROSS JOIN LATERAL unnest(gb_entities_described((SELECT id FROM dataset), a.grams || b.grams)) AS x(id))::bigint[])
            UNION ALL

            SELECT e.id, e.updated_at, (CASE WHEN strpos($6, e.normalized_name) > 0 THEN $7::integer ELSE 0 END
                + (SELECT coalesce(sum(
                       CASE WHEN strpos(e.normalized_name, t.term) > 0 THEN $8::integer ELSE 0 END
                       + CASE WHEN strpos(l.description, t.term) > 0
                              THEN $9::integer ELSE 0 END), 0)::integer
                   FROM unnest($5::text[]) AS t(term))) AS score
            FROM gb_entities AS e CROSS JOIN LATERAL (SELECT lower(e.description) AS description) AS l
            WHERE e.dataset_id = (SELECT id FROM dataset) AND (SELECT terms FROM needed) >= 3
              AND e.id = ANY((SELECT array_agg(x.id) FROM term AS a JOIN term AS b ON a.i < b.i
                 CROSS JOIN LATERAL unnest(gb_entities_described((SELECT id FROM dataset), a.grams || b.grams)) AS x(id))::bigint[])
            ) AS found
            WHERE (SELECT terms FROM needed) BETWEEN 1 AND $14
        ),
        candidates AS (
            SELECT id, updated_at, score FROM near
            UNION
            SELECT id, updated_at, score FROM older WHERE score > 0
        )
        SELECT d.id AS dataset_id, d.created_at AS dataset_created_at, s.id, s.score
        FROM dataset AS d
        LEFT JOIN LATERAL (
            SELECT id, score FROM candidates
            ORDER BY score DESC, updated_at DESC, id DESC
            LIMIT $12
        ) AS s ON true
        ;
END
$statement$;
REVOKE ALL ON FUNCTION gb_keyword_seeds_by_pairs_498314a8c4(text, text, text[], integer[], text[], text, integer, integer, integer, text[], bigint, integer, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_keyword_seeds_by_pairs_498314a8c4(text, text, text[], integer[], text[], text, integer, integer, integer, text[], bigint, integer, bigint, integer) TO gligabao_app;

CREATE FUNCTION gb_keyword_seeds_without_terms_6fe0e8bdc7(text, text, integer, text[], text, bigint)
RETURNS TABLE (dataset_id bigint, dataset_created_at timestamp with time zone, id bigint, score integer)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $statement$
#variable_conflict use_column
BEGIN
RETURN QUERY 
    WITH dataset AS MATERIALIZED (
        SELECT id, created_at
        FROM gb_datasets
        WHERE user_id = $1 AND name = $2
    )
    SELECT d.id AS dataset_id, d.created_at AS dataset_created_at, s.id, s.score
    FROM dataset AS d
    LEFT JOIN LATERAL (
        SELECT e.id, $3::integer AS score
        FROM gb_entities AS e
        WHERE e.id IN (SELECT unnest((SELECT gb_entities_name_prefixed((SELECT id FROM dataset), $4::text[]))))
          AND e.dataset_id = (SELECT id FROM dataset)
          AND strpos($5, e.normalized_name) > 0 AND $3::integer > 0
        ORDER BY e.updated_at DESC, e.id DESC
        LIMIT $6
    ) AS s ON true
;
END
$statement$;
REVOKE ALL ON FUNCTION gb_keyword_seeds_without_terms_6fe0e8bdc7(text, text, integer, text[], text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_keyword_seeds_without_terms_6fe0e8bdc7(text, text, integer, text[], text, bigint) TO gligabao_app;

CREATE FUNCTION gb_context_rows_6a665927bc(boolean, integer, bigint, vector, integer, double precision, bigint, boolean, integer, bigint, boolean, bigint, bigint, integer, bigint[], integer, integer, bigint, bigint, boolean, bigint, text[], bigint, integer, bigint, bigint, bigint, bigint, bigint, integer, integer, integer, integer, bigint, integer, bigint, integer)
RETURNS TABLE (band integer, rank bigint, id bigint, name text, type text, description text, source_id bigint, target_id bigint, relation text, artifact_id bigint, valid_at timestamp with time zone, invalid_at timestamp with time zone, created_at timestamp with time zone, expired_at timestamp with time zone, parent_id bigint, chunk_index integer, summary text, text text, similarity double precision, model_id text)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $statement$
#variable_conflict use_column
BEGIN
RETURN QUERY WITH entities_small AS MATERIALIZED(SELECT CASE WHEN $1 THEN false ELSE(SELECT count(*)<= $2 FROM(SELECT 1 FROM gb_entities WHERE dataset_id = $3 LIMIT $2 + 1)AS s)END AS yes),entities_approx AS MATERIALIZED(SELECT * FROM gb_nearest_entities($4,$5)WHERE NOT(SELECT yes FROM entities_small)),entities_approx_hits AS MATERIALIZED(SELECT r.id,r.distance FROM entities_approx AS r WHERE r.dataset_id = $3 AND 1 - r.distance >= $6 ORDER BY distance,id LIMIT $7),entities_exact_needed AS MATERIALIZED(SELECT(SELECT yes FROM entities_small)OR((SELECT count(*)FROM entities_approx_hits)< $7 AND coalesce((SELECT min(1 - distance)FROM entities_approx),1)>= $6)AS yes),entities_exact AS MATERIALIZED(SELECT id,distance FROM(SELECT r.id,r.embedding <=> $4 AS distance FROM gb_entities AS r WHERE r.dataset_id = $3 AND r.embedding IS NOT NULL OFFSET 0)AS scan WHERE(SELECT yes FROM entities_exact_needed)AND 1 - distance >= $6 ORDER BY distance,id LIMIT $7),entities_hits AS MATERIALIZED(SELECT id,1 - distance AS similarity FROM entities_exact WHERE(SELECT yes FROM entities_exact_needed)UNION ALL SELECT id,1 - distance FROM entities_approx_hits WHERE NOT(SELECT yes FROM entities_exact_needed)),entities_path AS(SELECT CASE WHEN(SELECT yes FROM entities_small)THEN 'exact' WHEN(SELECT yes FROM entities_exact_needed)THEN 'hnsw+exact' ELSE 'hnsw' END AS path),edges_small AS MATERIALIZED(SELECT CASE WHEN $8 THEN false ELSE(SELECT count(*)<= $2 FROM(SELECT 1 FROM gb_edges WHERE dataset_id = $3 LIMIT $2 + 1)AS s)END AS yes),edges_approx AS MATERIALIZED(SELECT * FROM gb_nearest_edges($4,$9)WHERE NOT(SELECT yes FROM edges_small)),edges_approx_hits AS MATERIALIZED(SELECT r.id,r.distance FROM edges_approx AS r WHERE r.dataset_id = $3 AND r.expired_at IS NULL AND 1 - r.distance >= $6 ORDER BY distance,id LIMIT $10),edges_exact_needed AS MATERIALIZED(SELECT(SELECT yes FROM edges_small)OR((SELECT count(*)FROM edges_approx_hits)< $10 AND coalesce((SELECT min(1 - distance)FROM edges_approx),1)>= $6)AS yes),edges_exact AS MATERIALIZED(SELECT id,distance FROM(SELECT r.id,r.embedding <=> $4 AS distance FROM gb_edges AS r WHERE r.dataset_id = $3 AND r.embedding IS NOT NULL AND r.expired_at IS NULL OFFSET 0)AS scan WHERE(SELECT yes FROM edges_exact_needed)AND 1 - distance >= $6 ORDER BY distance,id LIMIT $10),edges_hits AS MATERIALIZED(SELECT id,1 - distance AS similarity FROM edges_exact WHERE(SELECT yes FROM edges_exact_needed)UNION ALL SELECT id,1 - distance FROM edges_approx_hits WHERE NOT(SELECT yes FROM edges_exact_needed)),edges_path AS(SELECT CASE WHEN(SELECT yes FROM edges_small)THEN 'exact' WHEN(SELECT yes FROM edges_exact_needed)THEN 'hnsw+exact' ELSE 'hnsw' END AS path),chunks_small AS MATERIALIZED(SELECT CASE WHEN $11 THEN false ELSE(SELECT count(*)<= $2 FROM(SELECT 1 FROM gb_artifacts WHERE dataset_id = $3 AND kind = 'chunk' LIMIT $2 + 1)AS s)END AS yes),chunks_approx AS MATERIALIZED(SELECT * FROM gb_nearest_chunks($4,$5)WHERE NOT(SELECT yes FROM chunks_small)),chunks_approx_hits AS MATERIALIZED(SELECT r.id,r.distance FROM chunks_approx AS r WHERE r.dataset_id = $3 AND kind = 'chunk' AND 1 - r.distance >= $6 ORDER BY distance,id LIMIT $12),chunks_exact_needed AS MATERIALIZED(SELECT(SELECT yes FROM chunks_small)OR((SELECT count(*)FROM chunks_approx_hits)< $12 AND coalesce((SELECT min(1 - distance)FROM chunks_approx),1)>= $6)AS yes),chunks_exact AS MATERIALIZED(SELECT id,distance FROM(SELECT r.id,r.embedding <=> $4 AS distance FROM gb_artifacts AS r WHERE r.dataset_id = $3 AND r.embedding IS NOT NULL AND kind = 'chunk' OFFSET 0)AS scan WHERE(SELECT yes FROM chunks_exact_needed)AND 1 - distance >= $6 ORDER BY distance,id LIMIT $12),chunks_hits AS MATERIALIZED(SELECT id,1 - distance AS similarity FROM chunks_exact WHERE(SELECT yes FROM chunks_exact_needed)UNION ALL SELECT id,1 - distance FROM chunks_approx_hits WHERE NOT(SELECT yes FROM chunks_exact_needed)),chunks_path AS(SELECT CASE WHEN(SELECT yes FROM chunks_small)THEN 'exact' WHEN(SELECT yes FROM chunks_exact_needed)THEN 'hnsw+exact' ELSE 'hnsw' END AS path),summaries_small AS MATERIALIZED(SELECT yes FROM chunks_small),summaries_approx AS MATERIALIZED(SELECT * FROM gb_nearest_summaries($4,$5)WHERE NOT(SELECT yes FROM summaries_small)),summaries_approx_hits AS MATERIALIZED(SELECT r.id,r.distance FROM summaries_approx AS r WHERE r.dataset_id = $3 AND kind = 'chunk' AND 1 - r.distance >= $6 ORDER BY distance,id LIMIT $13),summaries_exact_needed AS MATERIALIZED(SELECT(SELECT yes FROM summaries_small)OR((SELECT count(*)FROM summaries_approx_hits)< $13 AND coalesce((SELECT min(1 - distance)FROM summaries_approx),1)>= $6)AS yes),summaries_exact AS MATERIALIZED(SELECT id,distance FROM(SELECT r.id,r.summary_embedding <=> $4 AS distance FROM gb_artifacts AS r WHERE r.dataset_id = $3 AND r.summary_embedding IS NOT NULL AND kind = 'chunk' OFFSET 0)AS scan WHERE(SELECT yes FROM summaries_exact_needed)AND 1 - distance >= $6 ORDER BY distance,id LIMIT $13),summaries_hits AS MATERIALIZED(SELECT id,1 - distance AS similarity FROM summaries_exact WHERE(SELECT yes FROM summaries_exact_needed)UNION ALL SELECT id,1 - distance FROM summaries_approx_hits WHERE NOT(SELECT yes FROM summaries_exact_needed)),summaries_path AS(SELECT CASE WHEN(SELECT yes FROM summaries_small)THEN 'exact' WHEN(SELECT yes FROM summaries_exact_needed)THEN 'hnsw+exact' ELSE 'hnsw' END AS path),similar_facts AS MATERIALIZED(SELECT g.id,row_number()OVER(ORDER BY h.similarity DESC,g.id)AS rank,h.similarity FROM edges_hits AS h CROSS JOIN LATERAL(SELECT g.id FROM gb_edges AS g WHERE g.id = h.id AND g.dataset_id = $3 AND g.expired_at IS NULL LIMIT 1)AS g),seed_candidates AS(SELECT id,$14::integer AS band,ord AS rank FROM unnest($15::bigint[])WITH ORDINALITY AS k(id,ord)UNION ALL SELECT id,$16::integer,row_number()OVER(ORDER BY similarity DESC,id)FROM entities_hits),matched_seeds AS MATERIALIZED(SELECT DISTINCT ON(e.id)e.id,c.band,c.rank FROM seed_candidates AS c CROSS JOIN LATERAL(SELECT e.id FROM gb_entities AS e WHERE e.id = c.id AND e.dataset_id = $3 LIMIT 1)AS e ORDER BY e.id,c.band,c.rank),fallback_seeds AS(SELECT id,$17::integer AS band,row_number()OVER(ORDER BY updated_at DESC,id DESC)AS rank FROM(SELECT r.entity_id AS id,r.updated_at FROM gb_entity_recency AS r WHERE r.dataset_id = $3 AND NOT EXISTS(SELECT 1 FROM matched_seeds)AND NOT EXISTS(SELECT 1 FROM similar_facts)ORDER BY r.updated_at DESC,r.entity_id DESC LIMIT $18)AS recent),seeds AS MATERIALIZED(SELECT id,band,rank FROM matched_seeds UNION ALL SELECT id,band,rank FROM fallback_seeds),around AS MATERIALIZED(SELECT id,created_at FROM(SELECT n.id,n.created_at,min(ARRAY[s.band::bigint,s.rank])AS seed FROM seeds AS s CROSS JOIN LATERAL((SELECT g.id,g.created_at FROM gb_edges AS g WHERE g.source_id = s.id AND g.expired_at IS NULL AND g.dataset_id + 0 = $3 ORDER BY g.created_at DESC,g.id DESC LIMIT $19)UNION ALL(SELECT g.id,g.created_at FROM gb_edges AS g WHERE g.target_id = s.id AND g.expired_at IS NULL AND g.dataset_id + 0 = $3 ORDER BY g.created_at DESC,g.id DESC LIMIT $19))AS n GROUP BY n.id,n.created_at)AS both_ends ORDER BY CASE WHEN $20 THEN seed END,created_at DESC,id DESC LIMIT $21),around_similarity AS MATERIALIZED(SELECT a.id,1 -(g.embedding <=> $4::vector)AS similarity FROM around AS a JOIN gb_edges AS g ON g.id = a.id WHERE a.id NOT IN(SELECT id FROM similar_facts)),first_hop AS MATERIALIZED(SELECT id,similarity FROM similar_facts UNION ALL SELECT id,similarity FROM around_similarity),hop_terms AS MATERIALIZED(SELECT t.term FROM unnest($22::text[])AS t(term)WHERE NOT EXISTS(SELECT 1 FROM seeds AS s JOIN gb_entities AS e ON e.id = s.id WHERE s.band = $14 AND s.rank <= $23 AND strpos(e.normalized_name,t.term)> 0)),hop_frontier AS MATERIALIZED(SELECT DISTINCT ON(ends.id)ends.id,g.used FROM(SELECT g.source_id,g.target_id,ARRAY(SELECT t.term FROM hop_terms AS t WHERE strpos(lower(replace(g.relation,'_',' ')|| ' ' || g.description),t.term)> 0 ORDER BY t.term)AS used FROM first_hop AS f JOIN gb_edges AS g ON g.id = f.id WHERE $24 > 0 ORDER BY EXISTS(SELECT 1 FROM seeds AS s WHERE s.band = $14 AND s.rank <= $23 AND s.id IN(g.source_id,g.target_id))DESC,f.similarity DESC NULLS LAST,g.id LIMIT $25)AS g CROSS JOIN LATERAL(VALUES(g.source_id),(g.target_id))AS ends(id)WHERE ends.id NOT IN(SELECT id FROM seeds WHERE band = $14 AND rank <= $23)ORDER BY ends.id,cardinality(g.used)DESC),second_hop AS MATERIALIZED(SELECT DISTINCT ON(r.id)r.id,r.far_end,r.used,r.matched,r.distance FROM hop_frontier AS f CROSS JOIN LATERAL(SELECT n.id,n.far_end,n.used,n.matched,g.embedding <=> $4::vector AS distance FROM(SELECT e.id,e.far_end,f.used || m.terms AS used,cardinality(m.terms)AS matched,e.created_at FROM((SELECT g.id,g.target_id AS far_end,g.relation,g.description,g.created_at FROM gb_edges AS g WHERE g.source_id = f.id AND g.expired_at IS NULL AND g.dataset_id + 0 = $3 ORDER BY g.created_at DESC,g.id DESC LIMIT $26)UNION ALL(SELECT g.id,g.source_id,g.relation,g.description,g.created_at FROM gb_edges AS g WHERE g.target_id = f.id AND g.expired_at IS NULL AND g.dataset_id + 0 = $3 ORDER BY g.created_at DESC,g.id DESC LIMIT $26))AS e JOIN gb_entities AS o ON o.id = e.far_end CROSS JOIN LATERAL(SELECT ARRAY(SELECT t.term FROM hop_terms AS t WHERE t.term <> ALL(f.used)AND strpos(lower(replace(e.relation,'_',' ')|| ' ' || e.description || ' ' || o.type || ' ' || o.description),t.term)> 0 ORDER BY t.term)AS terms)AS m ORDER BY cardinality(m.terms)DESC,e.created_at DESC,e.id DESC LIMIT $24)AS n JOIN gb_edges AS g ON g.id = n.id ORDER BY n.matched DESC,distance,n.id LIMIT $27)AS r ORDER BY r.id,r.matched DESC,r.distance),third_frontier AS MATERIALIZED(SELECT DISTINCT ON(h.far_end)h.far_end AS id,h.used FROM(SELECT far_end,used,matched FROM second_hop WHERE far_end NOT IN(SELECT id FROM hop_frontier)AND far_end NOT IN(SELECT id FROM seeds)ORDER BY cardinality(used)DESC,distance,id LIMIT $28)AS h ORDER BY h.far_end,h.matched DESC),third_hop AS MATERIALIZED(SELECT DISTINCT ON(r.id)r.id,r.distance FROM third_frontier AS f CROSS JOIN LATERAL(SELECT n.id,n.far_end,n.used,n.matched,g.embedding <=> $4::vector AS distance FROM(SELECT e.id,e.far_end,f.used || m.terms AS used,cardinality(m.terms)AS matched,e.created_at FROM((SELECT g.id,g.target_id AS far_end,g.relation,g.description,g.created_at FROM gb_edges AS g WHERE g.source_id = f.id AND g.expired_at IS NULL AND g.dataset_id + 0 = $3 ORDER BY g.created_at DESC,g.id DESC LIMIT $26)UNION ALL(SELECT g.id,g.source_id,g.relation,g.description,g.created_at FROM gb_edges AS g WHERE g.target_id = f.id AND g.expired_at IS NULL AND g.dataset_id + 0 = $3 ORDER BY g.created_at DESC,g.id DESC LIMIT $26))AS e JOIN gb_entities AS o ON o.id = e.far_end CROSS JOIN LATERAL(SELECT ARRAY(SELECT t.term FROM hop_terms AS t WHERE t.term <> ALL(f.used)AND strpos(lower(replace(e.relation,'_',' ')|| ' ' || e.description || ' ' || o.type || ' ' || o.description),t.term)> 0 ORDER BY t.term)AS terms)AS m ORDER BY cardinality(m.terms)DESC,e.created_at DESC,e.id DESC LIMIT $24)AS n JOIN gb_edges AS g ON g.id = n.id ORDER BY n.matched DESC,distance,n.id LIMIT $29)AS r WHERE r.id NOT IN(SELECT id FROM second_hop)ORDER BY r.id,r.distance),context_edges AS MATERIALIZED(SELECT g.id,g.source_id,g.target_id,g.relation,g.description,g.artifact_id,g.valid_at,g.invalid_at,g.created_at,g.expired_at,g.model_id,c.band,c.rank,c.similarity FROM(SELECT DISTINCT ON(id)id,band,rank,similarity FROM(SELECT id,$30::integer AS band,rank,similarity FROM similar_facts UNION ALL SELECT a.id,$31::integer,row_number()OVER(ORDER BY a.created_at DESC,a.id DESC),s.similarity FROM around AS a LEFT JOIN around_similarity AS s ON s.id = a.id UNION ALL SELECT id,$31::integer,$21 + row_number()OVER(ORDER BY distance,id),1 - distance FROM second_hop UNION ALL SELECT id,$31::integer,2 * $21 + row_number()OVER(ORDER BY distance,id),1 - distance FROM third_hop)AS e ORDER BY id,band,rank)AS c JOIN gb_edges AS g ON g.id = c.id),context_entities AS MATERIALIZED(SELECT DISTINCT ON(id)id,band,rank FROM(SELECT id,band,rank FROM seeds UNION ALL SELECT ends.id,$32::integer,2 * g.place + ends.side FROM(SELECT source_id,target_id,row_number()OVER(ORDER BY band,rank,id)AS place FROM context_edges)AS g CROSS JOIN LATERAL(VALUES(g.source_id,0),(g.target_id,1))AS ends(id,side))AS e ORDER BY id,band,rank),chunk_scores AS(SELECT id,max(similarity)AS score,bool_or(by_summary)AS by_summary FROM(SELECT id,similarity,false AS by_summary FROM chunks_hits UNION ALL SELECT id,similarity,true FROM summaries_hits)AS hits GROUP BY id),ranked_passages AS MATERIALIZED(SELECT id,by_summary,row_number()OVER(ORDER BY score DESC,id)AS rank FROM chunk_scores),passages AS(SELECT id,$33::integer AS band,rank,by_summary AS with_summary FROM ranked_passages WHERE rank <= $34 UNION ALL SELECT id,$35::integer,rank,true FROM(SELECT id,rank FROM ranked_passages WHERE rank > $34 AND by_summary ORDER BY rank LIMIT $36)AS summary_only)SELECT c.band,c.rank,e.id,e.name,e.type,e.description,NULL::bigint AS source_id,NULL::bigint AS target_id,NULL::text AS relation,NULL::bigint AS artifact_id,NULL::timestamptz AS valid_at,NULL::timestamptz AS invalid_at,NULL::timestamptz AS created_at,NULL::timestamptz AS expired_at,NULL::bigint AS parent_id,NULL::integer AS chunk_index,NULL::text AS summary,NULL::text AS text,CASE WHEN c.band < $32::integer THEN 1 -(e.embedding <=> $4::vector)END AS similarity,e.model_id FROM context_entities AS c JOIN gb_entities AS e ON e.id = c.id UNION ALL SELECT g.band,g.rank,g.id,NULL,NULL,g.description,g.source_id,g.target_id,g.relation,g.artifact_id,g.valid_at,g.invalid_at,g.created_at,g.expired_at,NULL,NULL,NULL,NULL,g.similarity,g.model_id FROM context_edges AS g UNION ALL SELECT p.band,p.rank,a.id,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,a.parent_id,a.chunk_index,CASE WHEN p.with_summary THEN a.summary END,CASE WHEN p.band = $33::integer THEN a.text END,greatest(1 -(a.embedding <=> $4::vector),1 -(a.summary_embedding <=> $4::vector)),NULL FROM passages AS p JOIN gb_artifacts AS a ON a.id = p.id UNION ALL SELECT $37::integer,0,NULL,i.name,i.path,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL FROM(SELECT 'entities' AS name,path FROM entities_path UNION ALL SELECT 'edges',path FROM edges_path UNION ALL SELECT 'chunks',path FROM chunks_path UNION ALL SELECT 'summaries',path FROM summaries_path)AS i ORDER BY band,rank,id,name;
END
$statement$;
REVOKE ALL ON FUNCTION gb_context_rows_6a665927bc(boolean, integer, bigint, vector, integer, double precision, bigint, boolean, integer, bigint, boolean, bigint, bigint, integer, bigint[], integer, integer, bigint, bigint, boolean, bigint, text[], bigint, integer, bigint, bigint, bigint, bigint, bigint, integer, integer, integer, integer, bigint, integer, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_context_rows_6a665927bc(boolean, integer, bigint, vector, integer, double precision, bigint, boolean, integer, bigint, boolean, bigint, bigint, integer, bigint[], integer, integer, bigint, bigint, boolean, bigint, text[], bigint, integer, bigint, bigint, bigint, bigint, bigint, integer, integer, integer, integer, bigint, integer, bigint, integer) TO gligabao_app;
