-- A prepared text's vectors (migration 0021) are a vector[], sent and read in binary, instead of a
-- two-dimensional real[] sent and read as text. A text of 50 facts has about 60 vectors of 1536
-- numbers: its row took 264-271 ms to write and 18-19 ms to read as real[] text, 12 and 3.7 ms as
-- vector[] binary (bench/prepared_rows.py, docs/performance.md, bulk import in windows). A bulk
-- import of fact-dense texts keeps tens of them per window (memory/windows.py).
--
-- The rows kept are converted, one vector per row of the array; a NULL (no vector) stays NULL.
CREATE FUNCTION pg_temp.gb_rows_as_vectors(matrix real[]) RETURNS vector[]
LANGUAGE sql IMMUTABLE
AS $$
    SELECT array_agg(ARRAY(SELECT unnest(matrix[i:i][:]))::vector ORDER BY i)
    FROM generate_subscripts(matrix, 1) AS i
$$;

ALTER TABLE gb_prepared_texts
    ALTER COLUMN vectors TYPE vector[] USING pg_temp.gb_rows_as_vectors(vectors);

DROP FUNCTION pg_temp.gb_rows_as_vectors(real[]);
