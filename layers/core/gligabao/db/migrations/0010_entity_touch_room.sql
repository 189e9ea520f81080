-- A remember touches every known entity it mentions in one statement (migration 0009). With 10%
-- of each page free, only a few rows of a page found room for their new version there: the rest
-- were non-HOT updates, each inserting the entity's unchanged vector in the HNSW index again
-- (31 of 50 touches in bench/remember.py's contradictions, ~40 ms). Half of each page free
-- leaves room to touch every row of a page once in one statement. Entity rows are narrow (the
-- vector is stored out of line), so the heap grows little. Pages written before this migration
-- keep their old room until rewritten.
ALTER TABLE gb_entities SET (fillfactor = 50);
