-- The name and gram lookups read their GIN index only: no pending list to scan first.
--
-- A GIN index with fastupdate (PostgreSQL's default) queues new entries in a pending list until a
-- VACUUM, an autoanalyze or gin_pending_list_limit (4 MB) moves them into the index, and every
-- search reads the whole list. A remember looks up the names it is about to write right after
-- the names written before it, and a query runs right after an import: both paid that read.
-- * A remember of 10 facts into a new dataset beside 170 small ones: gb_entities_could_be read
--   about 205 pages of pending entries per name, 4.5 ms each, 49 ms of the match statement
--   (EXPLAIN ANALYZE in place; 0.5 ms before the statements of migration 0034 called it there).
-- * The realistic world of 10,000 facts right after its load (bench/realistic_world.py): 55 and 45
--   pending pages on the name grams and keys; the keyword statement's name lookup took 3.7-4.2 ms,
--   0.9 ms once they were cleaned.
-- Without fastupdate an insert writes its entries into the index at once: the lookups read what
-- they need and nothing else, whatever ran before them.
ALTER INDEX gb_entities_name_grams SET (fastupdate = off);
ALTER INDEX gb_entities_name_keys SET (fastupdate = off);
ALTER INDEX gb_entity_descriptions_grams SET (fastupdate = off);

-- Entries already pending are moved into the indexes now (turning fastupdate off does not).
SELECT gin_clean_pending_list('gb_entities_name_grams'::regclass),
       gin_clean_pending_list('gb_entities_name_keys'::regclass),
       gin_clean_pending_list('gb_entity_descriptions_grams'::regclass);
