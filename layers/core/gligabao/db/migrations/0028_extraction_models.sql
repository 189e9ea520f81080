-- The model that extracted each entity and edge: the extract stage's model of the remember that
-- created the row (the image stage's for an image). Null for the rows stored before this
-- migration, and for the facts a caller brings (no model extracted them). Adding a nullable
-- column without a default rewrites nothing: the tables stay as they are.
ALTER TABLE gb_entities ADD COLUMN model_id text;
ALTER TABLE gb_edges ADD COLUMN model_id text;
