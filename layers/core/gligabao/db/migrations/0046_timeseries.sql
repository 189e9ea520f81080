-- Timeseries: series of [time, value] points a dataset holds beside its graph, each anchored to
-- what it is about (an entity, a fact, or an artifact over a time window), and the two artifact
-- kinds that remember derives from outside a caller's text (an observation of a series, what a
-- web search found).
--
-- A series belongs to one dataset and is known there by its key and field ("AAPL", "close"), as
-- the gligabao server knows it: a series sent again with a stored key adds its points (a time
-- already held takes the new value). Its
-- statistics are computed from its points when read, never stored: they cannot drift from them.
-- Every table carries the dataset's id, so that the policy of migration 0003 (the rows of the
-- user's datasets) applies as it does to artifacts and entities, and deleting the dataset (or
-- erasing the user) deletes them with it.
CREATE TABLE public.gb_series (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id  bigint NOT NULL REFERENCES public.gb_datasets (id) ON DELETE CASCADE,
    key         text NOT NULL CHECK (key <> '' AND octet_length(key) <= 256),
    -- What of the key's subject the values measure ("close", "volume"): one key may hold several.
    field       text NOT NULL DEFAULT 'value' CHECK (field <> '' AND octet_length(field) <= 64),
    name        text NOT NULL DEFAULT '' CHECK (length(name) <= 256),
    unit        text NOT NULL DEFAULT '' CHECK (length(unit) <= 64),
    frequency   text NOT NULL DEFAULT '' CHECK (length(frequency) <= 64),
    -- Who brought it: the caller ('supplied': remember's `timeseries.series`, POST
    -- /v1/gb/timeseries) or a timeseries provider ('fetched', `provider` naming it).
    source      text NOT NULL DEFAULT 'supplied' CHECK (source IN ('supplied', 'fetched')),
    provider    text NOT NULL DEFAULT '' CHECK (length(provider) <= 64),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (dataset_id, provider, key, field),
    UNIQUE (id, dataset_id)  -- the target of the points' and anchors' keys, which carry the dataset
);

CREATE TABLE public.gb_series_points (
    series_id   bigint NOT NULL,
    dataset_id  bigint NOT NULL,
    at          timestamptz NOT NULL,
    value       double precision NOT NULL CHECK (value <> 'NaN' AND value > '-Infinity' AND value < 'Infinity'),
    PRIMARY KEY (series_id, at),
    FOREIGN KEY (series_id, dataset_id) REFERENCES public.gb_series (id, dataset_id) ON DELETE CASCADE
);

-- What a series is about: exactly one of an artifact (with the window of time it covers, when
-- given), an entity or a fact. The anchor's keys carry the dataset too: a series can only ever be
-- anchored to a row of its own dataset, whatever the statement that writes it. Forgetting what a
-- series is anchored to removes the anchor (the cascade); a series left with no anchor is deleted
-- by the trigger below, so that forgetting the text a series came with forgets the series.
CREATE TABLE public.gb_series_anchors (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    series_id     bigint NOT NULL,
    dataset_id    bigint NOT NULL,
    artifact_id   bigint REFERENCES public.gb_artifacts (id) ON DELETE CASCADE,
    entity_id     bigint REFERENCES public.gb_entities (id) ON DELETE CASCADE,
    edge_id       bigint REFERENCES public.gb_edges (id) ON DELETE CASCADE,
    role          text NOT NULL DEFAULT '' CHECK (length(role) <= 64),
    window_start  timestamptz,
    window_end    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (series_id, dataset_id) REFERENCES public.gb_series (id, dataset_id) ON DELETE CASCADE,
    CHECK (num_nonnulls(artifact_id, entity_id, edge_id) = 1),
    CHECK ((window_start IS NULL) = (window_end IS NULL)),
    CHECK (window_start IS NULL OR window_start <= window_end)
);
-- One anchor per series and row: anchoring again updates its role and window.
CREATE UNIQUE INDEX gb_series_anchors_artifact ON public.gb_series_anchors (series_id, artifact_id) WHERE artifact_id IS NOT NULL;
CREATE UNIQUE INDEX gb_series_anchors_entity ON public.gb_series_anchors (series_id, entity_id) WHERE entity_id IS NOT NULL;
CREATE UNIQUE INDEX gb_series_anchors_edge ON public.gb_series_anchors (series_id, edge_id) WHERE edge_id IS NOT NULL;
-- What a forget or a query looks the anchors up by.
CREATE INDEX gb_series_anchors_of_entity ON public.gb_series_anchors (entity_id) WHERE entity_id IS NOT NULL;
CREATE INDEX gb_series_anchors_of_edge ON public.gb_series_anchors (edge_id) WHERE edge_id IS NOT NULL;
CREATE INDEX gb_series_anchors_of_artifact ON public.gb_series_anchors (artifact_id) WHERE artifact_id IS NOT NULL;

CREATE FUNCTION public.gb_series_without_anchors() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp
AS $$
BEGIN
    DELETE FROM public.gb_series AS s
    WHERE s.id IN (SELECT DISTINCT gone.series_id FROM gone)
      AND NOT EXISTS (SELECT 1 FROM public.gb_series_anchors AS a WHERE a.series_id = s.id);
    RETURN NULL;
END
$$;
CREATE TRIGGER gb_series_anchors_last_gone
    AFTER DELETE ON public.gb_series_anchors
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION public.gb_series_without_anchors();

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['gb_series', 'gb_series_points', 'gb_series_anchors'] LOOP
        EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY %I ON public.%I USING (dataset_id = ANY (ARRAY('
            '    SELECT id FROM public.gb_datasets'
            '    WHERE user_id = NULLIF(current_setting(''gligabao.user_id'', true), ''''))))',
            t || '_of_the_user', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON public.%I TO gligabao_app', t);
    END LOOP;
END $$;
GRANT USAGE, SELECT ON SEQUENCE public.gb_series_id_seq TO gligabao_app;
GRANT USAGE, SELECT ON SEQUENCE public.gb_series_anchors_id_seq TO gligabao_app;

-- The artifacts remember derives: `series_observation`, a text written from a series'
-- statistics (its series in `series_id`, kept when the series goes: the text stays the user's
-- until forgotten), and `web_search`, what a web search found about a text's entities (its
-- sources in `sources`, a JSON array of {url, title}). `derived_from` is the artifact of the
-- remember that made it; forgetting that one leaves the derived artifact (its own facts' source)
-- to be forgotten on its own.
ALTER TABLE public.gb_artifacts DROP CONSTRAINT gb_artifacts_kind_check;
ALTER TABLE public.gb_artifacts ADD CONSTRAINT gb_artifacts_kind_check
    CHECK (kind IN ('text', 'chunk', 'image', 'facts', 'correction', 'series_observation', 'web_search'));
ALTER TABLE public.gb_artifacts
    ADD COLUMN series_id bigint REFERENCES public.gb_series (id) ON DELETE SET NULL,
    ADD COLUMN derived_from bigint REFERENCES public.gb_artifacts (id) ON DELETE SET NULL,
    ADD COLUMN sources jsonb CHECK (sources IS NULL OR pg_catalog.jsonb_typeof(sources) = 'array');
CREATE INDEX gb_artifacts_series ON public.gb_artifacts (series_id) WHERE series_id IS NOT NULL;
CREATE INDEX gb_artifacts_derived_from ON public.gb_artifacts (derived_from) WHERE derived_from IS NOT NULL;

-- A model call's server-side web searches (Anthropic's web search tool), billed per search.
ALTER TABLE public.gb_inferences ADD COLUMN web_searches integer CHECK (web_searches >= 0);
