-- An edge's vector is kept in its row instead of out of line (TOAST). At 1536 dimensions a
-- vector is 6,152 bytes, above the 2 kB from which PostgreSQL moves a value out of line by
-- default: every cosine a query computes on an edge's row (the HNSW candidates' distances, the
-- first and second hop's ranking, the exact scan of a dataset that the index's nearest rows of
-- other datasets crowd out) first reassembled the vector from its TOAST chunks, which cost more
-- than the cosine itself (bench/query.py, README "Performance").
--
-- STORAGE MAIN keeps the vector in the row unless the row cannot fit a page otherwise (a long
-- description is compressed or moved out of line first); toast_tuple_target 8160 (a page) lets
-- a row grow that far before anything is moved. An edge row then fills most of a page by itself:
-- the heap holds what the TOAST table held. Superseding a fact was never a HOT update (the live
-- edges' partial indexes read expired_at); a remember of contradicting facts measured faster, not
-- slower, with the vectors in their rows (bench/remember.py, README "Performance").
--
-- Only rows written from now on are stored so: `VACUUM FULL gb_edges` (it locks the table and
-- rebuilds its indexes) rewrites the older ones (README "Deploy").
ALTER TABLE gb_edges SET (toast_tuple_target = 8160);
ALTER TABLE gb_edges ALTER COLUMN embedding SET STORAGE MAIN;
