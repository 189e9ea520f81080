-- Ontologies: the entity and relation types a user allows in a dataset's graph.
--
-- An ontology belongs to a user (its name is unique per user) and steers the datasets it is
-- attached to: gb_datasets.ontology_id, at most one per dataset, the same ontology for as many of
-- the user's datasets as wanted. The attachment lives on the dataset, so deleting a dataset
-- detaches it with the row; an ontology still attached cannot be deleted (the API answers 409 and
-- names the datasets; the foreign key stops any other path). The key carries the user: a dataset
-- can only ever point at an ontology of its own user, whatever the statement that writes it.
--
-- `document` is what the caller sent (the OWL RDF/XML, or the JSON form as JSON text); `parsed`
-- is the form extraction reads (entity types, relation types with domain and range, aliases,
-- parents), made once when the ontology is stored.
CREATE TABLE public.gb_ontologies (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          text NOT NULL CHECK (user_id <> ''),
    name             text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,64}$'),
    description      text NOT NULL DEFAULT '',
    format           text NOT NULL CHECK (format IN ('owl', 'json')),
    document         text NOT NULL,
    sha256           text NOT NULL,
    parsed           jsonb NOT NULL,
    out_of_ontology  text NOT NULL CHECK (out_of_ontology IN ('map', 'drop')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, name),
    UNIQUE (id, user_id)  -- the target of the datasets' key, which carries the user
);

ALTER TABLE public.gb_datasets ADD COLUMN ontology_id bigint;
ALTER TABLE public.gb_datasets
    ADD CONSTRAINT gb_datasets_ontology FOREIGN KEY (ontology_id, user_id)
        REFERENCES public.gb_ontologies (id, user_id) ON DELETE RESTRICT;
CREATE INDEX gb_datasets_ontology_id ON public.gb_datasets (ontology_id) WHERE ontology_id IS NOT NULL;

-- The user's rows only, as gb_datasets (migration 0003). The default privileges of 0003 grant the
-- table and its identity's sequence to gligabao_app; granted here too, so the migration does not
-- depend on which role ran 0003.
ALTER TABLE public.gb_ontologies ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_ontologies_of_the_user ON public.gb_ontologies
    USING (user_id = NULLIF(current_setting('gligabao.user_id', true), ''));
GRANT SELECT, INSERT, UPDATE, DELETE ON public.gb_ontologies TO gligabao_app;
GRANT USAGE, SELECT ON SEQUENCE public.gb_ontologies_id_seq TO gligabao_app;
