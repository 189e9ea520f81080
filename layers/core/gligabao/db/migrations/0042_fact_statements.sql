-- A fact's history (memory/history.py): what each text said of it, and which facts contradict.
--
-- gb_edge_statements: one row each time a text (a caller's facts, an image, a correction, a
-- restore) states a fact: the period it gave (`valid_at` unknown or `invalid_at` open: NULL),
-- when it was said (`said_at`, the text's reference time; a correction's, when it was made) and how
-- far it holds now (`ends_at`, NULL while open; `cut`: a contradicting fact's start, or a
-- correction, ended it: that fact's row `cut_by`, NULL once forgotten; a statement of unknown start
-- cut with no end left holds not at all). Kind 'correction': a correction replaced the fact over that
-- period (it ends the statements of the fact said before it there, `cut_by` the fact it became).
-- An edge's period and supersession are derived from its statements; the statement belongs to
-- the edge it is now a piece of, and goes with it, and with the artifact that said it.
--
-- gb_edge_conflicts: the judgements about two facts: the resolve stage said they contradict (or a
-- restore that keeps both said they do not). Kept with the two edges judged; what counts for two
-- facts is their latest said judgement, whichever of their edges it names.
CREATE TABLE public.gb_edge_statements (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id   bigint NOT NULL REFERENCES public.gb_datasets (id) ON DELETE CASCADE,
    edge_id      bigint NOT NULL REFERENCES public.gb_edges (id) ON DELETE CASCADE,
    artifact_id  bigint REFERENCES public.gb_artifacts (id) ON DELETE CASCADE,
    kind         text NOT NULL DEFAULT 'said' CHECK (kind IN ('said', 'correction')),
    valid_at     timestamptz,
    invalid_at   timestamptz,
    said_at      timestamptz NOT NULL,
    ends_at      timestamptz,
    cut          boolean NOT NULL DEFAULT false,
    cut_by       bigint REFERENCES public.gb_edges (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CHECK (valid_at IS NULL OR invalid_at IS NULL OR invalid_at >= valid_at),
    CHECK (valid_at IS NULL OR ends_at IS NULL OR ends_at >= valid_at)
);
CREATE INDEX gb_edge_statements_edge ON public.gb_edge_statements (edge_id);
CREATE INDEX gb_edge_statements_artifact ON public.gb_edge_statements (artifact_id) WHERE artifact_id IS NOT NULL;
CREATE INDEX gb_edge_statements_cut_by ON public.gb_edge_statements (cut_by) WHERE cut_by IS NOT NULL;

CREATE TABLE public.gb_edge_conflicts (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id     bigint NOT NULL REFERENCES public.gb_datasets (id) ON DELETE CASCADE,
    edge_id        bigint NOT NULL REFERENCES public.gb_edges (id) ON DELETE CASCADE,
    other_edge_id  bigint NOT NULL REFERENCES public.gb_edges (id) ON DELETE CASCADE,
    contradicts    boolean NOT NULL,
    said_at        timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK (edge_id <> other_edge_id)
);
CREATE INDEX gb_edge_conflicts_edge ON public.gb_edge_conflicts (edge_id);
CREATE INDEX gb_edge_conflicts_other_edge ON public.gb_edge_conflicts (other_edge_id);

-- Every row of a fact (source, relation, target), live or not, and every fact of a source's
-- relation (the candidates a new fact of that slot is judged against, superseded ones included). It
-- takes the place of migration 0024's index of the live ones, which nothing reads any more (the
-- code before this migration finds them through this one).
CREATE INDEX gb_edges_fact ON public.gb_edges (source_id, relation, target_id);
DROP INDEX public.gb_edges_live_pair;

-- The user's rows only, their edges in the same dataset (as gb_prepared_texts, migration 0021):
-- a write can never tie a statement or a judgement to another dataset's edge. Granted here as in
-- 0030, whichever role ran 0003.
ALTER TABLE public.gb_edge_statements ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_edge_statements_of_the_user ON public.gb_edge_statements
    USING (dataset_id = ANY (ARRAY(SELECT id FROM public.gb_datasets
                                   WHERE user_id = NULLIF(current_setting('gligabao.user_id', true), '')))
           AND EXISTS (SELECT 1 FROM public.gb_edges g
                       WHERE g.id = gb_edge_statements.edge_id AND g.dataset_id = gb_edge_statements.dataset_id));
ALTER TABLE public.gb_edge_conflicts ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_edge_conflicts_of_the_user ON public.gb_edge_conflicts
    USING (dataset_id = ANY (ARRAY(SELECT id FROM public.gb_datasets
                                   WHERE user_id = NULLIF(current_setting('gligabao.user_id', true), '')))
           AND EXISTS (SELECT 1 FROM public.gb_edges g
                       WHERE g.id = gb_edge_conflicts.edge_id AND g.dataset_id = gb_edge_conflicts.dataset_id)
           AND EXISTS (SELECT 1 FROM public.gb_edges g
                       WHERE g.id = gb_edge_conflicts.other_edge_id AND g.dataset_id = gb_edge_conflicts.dataset_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON public.gb_edge_statements, public.gb_edge_conflicts TO gligabao_app;
GRANT USAGE, SELECT ON SEQUENCE public.gb_edge_statements_id_seq, public.gb_edge_conflicts_id_seq,
    public.gb_edges_id_seq TO gligabao_app;

-- The statements of the edges stored before: one per artifact that stated an edge (its provenance
-- links), said when that artifact was, with the edge's period as the old code left it. An end that
-- only a supersession gave (the superseder's start) was not said: the statement is open, cut there.
-- An inverted period (the old code could store one) has no end of its own: it holds nowhere. A
-- superseded edge that kept an end of its own was superseded without being cut: 0043 decides.
-- Migration 0043 applies the rule to what the old code got wrong.
INSERT INTO public.gb_edge_statements (dataset_id, edge_id, artifact_id, valid_at, invalid_at, said_at,
                                       ends_at, cut, cut_by)
SELECT e.dataset_id, e.id, l.artifact_id, p.valid_at, p.stated_end, l.said_at,
       CASE WHEN e.invalid_at IS NULL THEN NULL
            WHEN p.valid_at IS NULL THEN e.invalid_at
            ELSE greatest(p.valid_at, e.invalid_at) END,
       c.cut, CASE WHEN c.cut THEN e.superseded_by END
FROM public.gb_edges e
LEFT JOIN public.gb_edges superseder ON superseder.id = e.superseded_by
CROSS JOIN LATERAL (
    SELECT a.id AS artifact_id, coalesce(a.reference_time, a.created_at) AS said_at
    FROM public.gb_edge_artifacts x JOIN public.gb_artifacts a ON a.id = x.artifact_id
    WHERE x.edge_id = e.id
    UNION ALL
    SELECT e.artifact_id, coalesce((SELECT coalesce(a.reference_time, a.created_at) FROM public.gb_artifacts a
                                    WHERE a.id = e.artifact_id), e.created_at)
    WHERE NOT EXISTS (SELECT 1 FROM public.gb_edge_artifacts x WHERE x.edge_id = e.id)
) AS l
CROSS JOIN LATERAL (
    SELECT CASE WHEN e.valid_at IS NULL AND e.invalid_at IS NULL THEN l.said_at ELSE e.valid_at END AS valid_at,
           CASE WHEN e.invalid_at IS NULL THEN NULL
                WHEN e.valid_at IS NOT NULL AND e.invalid_at <= e.valid_at THEN NULL
                WHEN e.expired_at IS NOT NULL AND e.invalid_at = superseder.valid_at THEN NULL
                ELSE e.invalid_at END AS stated_end
) AS p
-- Superseded: cut where the superseder began, or (a supersession before migration 0005, which
-- kept no superseder) superseded as stored.
CROSS JOIN LATERAL (
    SELECT e.expired_at IS NOT NULL AND (e.superseded_by IS NULL OR p.stated_end IS DISTINCT FROM e.invalid_at) AS cut
) AS c;

-- The judgements the old code left: each supersession it recorded (since migration 0005) says that
-- the superseder contradicts the fact it superseded, as said when the superseder was.
INSERT INTO public.gb_edge_conflicts (dataset_id, edge_id, other_edge_id, contradicts, said_at)
SELECT e.dataset_id, e.superseded_by, e.id, true,
       coalesce((SELECT max(s.said_at) FROM public.gb_edge_statements s WHERE s.edge_id = e.superseded_by),
                superseder.created_at)
FROM public.gb_edges e
JOIN public.gb_edges superseder ON superseder.id = e.superseded_by AND superseder.dataset_id = e.dataset_id
WHERE e.superseded_by <> e.id;
