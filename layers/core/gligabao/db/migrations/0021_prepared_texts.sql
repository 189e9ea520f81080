-- Extractions made ahead for asynchronous remember (memory/prepare_ahead.py).
--
-- A dataset's jobs run one at a time, in order, because each resolves its facts against what the
-- earlier ones stored. Extracting a text and embedding what it states depends on nothing stored, so
-- while a job runs, the worker extracts and embeds the next queued short texts of its dataset and
-- keeps the result here; their jobs then only resolve and store. A job takes (deletes) its row when
-- it starts, whether it uses it or not, so a row never outlives the next attempt at its artifact,
-- and forgetting the artifact or its dataset deletes it.
CREATE TABLE gb_prepared_texts (
    artifact_id bigint PRIMARY KEY REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    dataset_id  bigint NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    options     jsonb NOT NULL,   -- the reasoning and models it was extracted with
    extraction  jsonb NOT NULL,   -- the extract stage's reply
    embedded    text[] NOT NULL,  -- the strings embedded, in the order of `vectors`
    vectors     real[],           -- one row per string (NULL when there was none)
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gb_prepared_texts_dataset ON gb_prepared_texts (dataset_id, created_at);

-- The queued texts of a dataset, in the order its jobs were queued (reference time): only pending
-- artifacts, so the index stays as small as the queue.
CREATE INDEX gb_artifacts_pending ON gb_artifacts (dataset_id, reference_time, id) WHERE status = 'pending';

-- The user's artifact, in the row's dataset (gb_artifacts' own policy keeps to the user's rows):
-- a row can never pair one user's extraction with another user's artifact or dataset.
ALTER TABLE gb_prepared_texts ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_prepared_texts_of_the_user ON gb_prepared_texts
    USING (EXISTS (SELECT 1 FROM gb_artifacts a
                   WHERE a.id = gb_prepared_texts.artifact_id AND a.dataset_id = gb_prepared_texts.dataset_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON gb_prepared_texts TO gligabao_app;
