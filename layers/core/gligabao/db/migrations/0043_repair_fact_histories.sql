-- The overlap rule (memory/history.py) applied to what the code before 0042 stored against it:
--
-- - texts that arrived in another order than they were said: a fact said later was superseded by a
--   contradicting fact said earlier (its period cut where the earlier-said one began, the fact the
--   user holds now made the old one);
-- - periods it inverted: a contradicted fact that began after its superseder got the superseder's
--   start as its end, and a restatement's end before the fact's own start closed it there;
-- - a superseded fact that had an end of its own kept it even where its superseder held.
--
-- What the old code knew of contradictions is the supersessions it recorded (migration 0005's
-- superseded_by, judgements since 0042): each statement of those edges ends again where the
-- earliest contradicting statement said after it begins, if their periods overlap; an edge ends
-- where its statements end, superseded when a contradicting fact's start is that end, and holds
-- nowhere (invalid_at = valid_at, superseded) when nothing of it remains. Any other inverted period
-- becomes empty. An edge of unknown start is left as it is, and so is every edge no judgement
-- names and whose period is not inverted.
WITH contradicting AS (
    SELECT edge_id AS edge, other_edge_id AS other FROM public.gb_edge_conflicts WHERE contradicts
    UNION
    SELECT other_edge_id, edge_id FROM public.gb_edge_conflicts WHERE contradicts
),
earliest_cut AS (
    SELECT DISTINCT ON (s.id) s.id, j.valid_at AS at, j.edge_id AS by
    FROM public.gb_edge_statements s
    JOIN contradicting c ON c.edge = s.edge_id
    JOIN public.gb_edge_statements j ON j.edge_id = c.other
    WHERE s.kind = 'said' AND j.kind = 'said' AND s.valid_at IS NOT NULL AND j.valid_at IS NOT NULL
      AND (j.said_at, j.id) > (s.said_at, s.id)
      AND j.valid_at < coalesce(s.invalid_at, 'infinity') AND s.valid_at < coalesce(j.invalid_at, 'infinity')
    ORDER BY s.id, j.valid_at, j.id
),
judged AS (
    SELECT s.id, s.valid_at, coalesce(s.invalid_at, 'infinity') AS own_end, x.at, x.by
    FROM public.gb_edge_statements s
    LEFT JOIN earliest_cut x ON x.id = s.id
    WHERE s.kind = 'said' AND s.valid_at IS NOT NULL
      AND s.edge_id IN (SELECT edge FROM contradicting)
)
UPDATE public.gb_edge_statements s
SET ends_at = nullif(greatest(j.valid_at, least(j.own_end, coalesce(j.at, 'infinity'))), 'infinity'),
    cut = j.at IS NOT NULL AND j.at < j.own_end,
    cut_by = CASE WHEN j.at IS NOT NULL AND j.at < j.own_end THEN j.by END
FROM judged j
WHERE s.id = j.id;

-- The edges those statements belong to, from their statements; then every other inverted period.
WITH ends AS (
    SELECT s.edge_id,
           max(coalesce(s.ends_at, 'infinity')) AS ends_at,
           bool_and(s.cut) FILTER (WHERE coalesce(s.ends_at, 'infinity') = m.ends_at) AS cut,
           (array_agg(s.cut_by ORDER BY s.said_at DESC, s.id DESC)
                FILTER (WHERE coalesce(s.ends_at, 'infinity') = m.ends_at AND s.cut))[1] AS cut_by
    FROM public.gb_edge_statements s
    JOIN (SELECT edge_id, max(coalesce(ends_at, 'infinity')) AS ends_at
          FROM public.gb_edge_statements WHERE kind = 'said' AND valid_at IS NOT NULL
          GROUP BY edge_id) AS m ON m.edge_id = s.edge_id
    WHERE s.kind = 'said' AND s.valid_at IS NOT NULL
      AND s.edge_id IN (SELECT edge_id FROM public.gb_edge_conflicts WHERE contradicts
                        UNION SELECT other_edge_id FROM public.gb_edge_conflicts WHERE contradicts)
    GROUP BY s.edge_id
)
UPDATE public.gb_edges e
SET invalid_at = CASE WHEN x.ends_at <= e.valid_at THEN e.valid_at ELSE nullif(x.ends_at, 'infinity') END,
    expired_at = CASE WHEN x.ends_at <= e.valid_at OR x.cut THEN coalesce(e.expired_at, now()) END,
    superseded_by = CASE WHEN x.ends_at <= e.valid_at OR x.cut THEN coalesce(x.cut_by, e.superseded_by) END
FROM ends x
WHERE e.id = x.edge_id AND e.valid_at IS NOT NULL;

UPDATE public.gb_edges
SET invalid_at = valid_at, expired_at = coalesce(expired_at, now())
WHERE valid_at IS NOT NULL AND invalid_at < valid_at;

UPDATE public.gb_edge_statements s
SET ends_at = s.valid_at
FROM public.gb_edges e
WHERE e.id = s.edge_id AND s.kind = 'said' AND s.valid_at IS NOT NULL AND e.invalid_at = e.valid_at
  AND (s.ends_at IS NULL OR s.ends_at > s.valid_at);
