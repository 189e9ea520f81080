-- The graph: datasets per user, artifacts, entities, bi-temporal edges, their
-- provenance and session links, images, model calls and eval trajectories.
-- {dimensions} is the embedding size (GB_EMBEDDING_DIMENSIONS), fixed at first migration.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE gb_datasets (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     text NOT NULL CHECK (user_id <> ''),
    name        text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,64}$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, name)
);

CREATE TABLE gb_artifacts (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id         bigint NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    kind               text NOT NULL CHECK (kind IN ('text', 'chunk', 'image')),
    text               text NOT NULL DEFAULT '',
    session_id         text,
    parent_id          bigint REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    chunk_index        integer CHECK (chunk_index >= 0),
    summary            text,
    reference_time     timestamptz,
    content_sha256     text,
    status             text NOT NULL DEFAULT 'done' CHECK (status IN ('pending', 'running', 'done', 'failed')),
    error              text,
    embedding          vector({dimensions}),
    summary_embedding  vector({dimensions}),
    created_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'chunk') = (parent_id IS NOT NULL)),
    CHECK ((kind = 'chunk') = (chunk_index IS NOT NULL))
);
CREATE INDEX gb_artifacts_dataset ON gb_artifacts (dataset_id, created_at DESC);
CREATE INDEX gb_artifacts_parent ON gb_artifacts (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX gb_artifacts_session ON gb_artifacts (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX gb_artifacts_embedding ON gb_artifacts USING hnsw (embedding vector_cosine_ops);
CREATE INDEX gb_artifacts_summary_embedding ON gb_artifacts USING hnsw (summary_embedding vector_cosine_ops);

CREATE TABLE gb_entities (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id       bigint NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    name             text NOT NULL CHECK (name <> ''),
    normalized_name  text NOT NULL CHECK (normalized_name <> ''),
    type             text NOT NULL DEFAULT 'unknown',
    description      text NOT NULL DEFAULT '',
    latitude         double precision CHECK (latitude BETWEEN -90 AND 90),
    longitude        double precision CHECK (longitude BETWEEN -180 AND 180),
    embedding        vector({dimensions}),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (dataset_id, normalized_name)
);
CREATE INDEX gb_entities_recent ON gb_entities (dataset_id, updated_at DESC);
CREATE INDEX gb_entities_embedding ON gb_entities USING hnsw (embedding vector_cosine_ops);

CREATE TABLE gb_edges (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id   bigint NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    source_id    bigint NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    target_id    bigint NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    relation     text NOT NULL CHECK (relation ~ '^[a-z0-9]+(_[a-z0-9]+)*$'),
    description  text NOT NULL DEFAULT '',
    artifact_id  bigint REFERENCES gb_artifacts (id) ON DELETE SET NULL,
    valid_at     timestamptz,
    invalid_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expired_at   timestamptz,
    embedding    vector({dimensions})
);
-- Live edges around an entity, newest first: the one-hop expansion of query.
CREATE INDEX gb_edges_live_source ON gb_edges (source_id, created_at DESC) WHERE expired_at IS NULL;
CREATE INDEX gb_edges_live_target ON gb_edges (target_id, created_at DESC) WHERE expired_at IS NULL;
CREATE INDEX gb_edges_dataset ON gb_edges (dataset_id, created_at DESC);
CREATE INDEX gb_edges_artifact ON gb_edges (artifact_id) WHERE artifact_id IS NOT NULL;
CREATE INDEX gb_edges_embedding ON gb_edges USING hnsw (embedding vector_cosine_ops);

CREATE TABLE gb_entity_artifacts (
    entity_id    bigint NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    artifact_id  bigint NOT NULL REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, artifact_id)
);
CREATE INDEX gb_entity_artifacts_artifact ON gb_entity_artifacts (artifact_id);

CREATE TABLE gb_edge_artifacts (
    edge_id      bigint NOT NULL REFERENCES gb_edges (id) ON DELETE CASCADE,
    artifact_id  bigint NOT NULL REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    PRIMARY KEY (edge_id, artifact_id)
);
CREATE INDEX gb_edge_artifacts_artifact ON gb_edge_artifacts (artifact_id);

-- Sessions are labels, not rows: session_id is a plain string.
CREATE TABLE gb_entity_sessions (
    entity_id   bigint NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    session_id  text NOT NULL,
    PRIMARY KEY (entity_id, session_id)
);
CREATE INDEX gb_entity_sessions_session ON gb_entity_sessions (session_id);

CREATE TABLE gb_edge_sessions (
    edge_id     bigint NOT NULL REFERENCES gb_edges (id) ON DELETE CASCADE,
    session_id  text NOT NULL,
    PRIMARY KEY (edge_id, session_id)
);
CREATE INDEX gb_edge_sessions_session ON gb_edge_sessions (session_id);

CREATE TABLE gb_image_artifacts (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id   bigint NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    artifact_id  bigint NOT NULL REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    sha256       text NOT NULL,
    media_type   text NOT NULL CHECK (media_type IN ('image/png', 'image/jpeg', 'image/gif', 'image/webp')),
    bytes        integer NOT NULL CHECK (bytes > 0),
    extraction   jsonb NOT NULL,
    session_id   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (dataset_id, sha256)
);

CREATE TABLE gb_inferences (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          text NOT NULL,
    -- Cost history outlives a deleted dataset; an inference row holds no user text.
    dataset_id       bigint REFERENCES gb_datasets (id) ON DELETE SET NULL,
    type             text NOT NULL CHECK (type IN ('remember', 'query', 'eval')),
    stage            text NOT NULL,
    model            text NOT NULL,
    reasoning        text,
    input_tokens     integer,
    output_tokens    integer,
    thinking_tokens  integer,
    cost_usd         numeric(14, 8),
    duration_ms      integer NOT NULL,
    session_id       text,
    request_id       text,
    ok               boolean NOT NULL,
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gb_inferences_user ON gb_inferences (user_id, created_at DESC);
CREATE INDEX gb_inferences_dataset ON gb_inferences (dataset_id, created_at DESC);

CREATE TABLE gb_trajectories (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id  bigint REFERENCES gb_datasets (id) ON DELETE CASCADE,
    session_id  text,
    kind        text NOT NULL CHECK (kind IN ('remember', 'query')),
    trajectory  jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gb_trajectories_dataset ON gb_trajectories (dataset_id, created_at DESC);
