-- Which embedder made the vectors this database holds ("openai:text-embedding-3-small",
-- "offline:offline-hash"): vectors of two embedders live in unrelated spaces, and a similarity
-- between them is noise. `gligabao serve` and `gligabao migrate` record it and refuse to run a
-- database that holds vectors against another embedder (db/embedding_space.py), instead of
-- letting retrieval compare them. One row, no user data: only the tables' owner reads it.
CREATE TABLE gb_embedding_space (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    embedder    text NOT NULL CHECK (length(embedder) BETWEEN 1 AND 300),
    recorded_at timestamptz NOT NULL DEFAULT now()
);

-- Held like every table: the API's role (gligabao_app) has no policy here, so it sees no row.
ALTER TABLE gb_embedding_space ENABLE ROW LEVEL SECURITY;
