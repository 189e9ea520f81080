-- What a remembered text is to the caller: knowledge (the default) or an episode.
--
-- The gligabao server's remember takes `kind`, "knowledge" or "episode" (an event anchored in time,
-- as Graphiti's episodes), and reads it back. Here `kind` already says what an artifact holds
-- (text, chunk, image, facts), so this is a column of its own. A chunk has its text's. A constant
-- default adds the column without rewriting the table.
ALTER TABLE gb_artifacts
    ADD COLUMN memory_kind text NOT NULL DEFAULT 'knowledge'
        CONSTRAINT gb_artifacts_memory_kind CHECK (memory_kind IN ('knowledge', 'episode'));
