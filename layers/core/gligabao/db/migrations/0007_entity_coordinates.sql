-- Geo: the radius search of query reads the entities of a dataset inside a bounding box of
-- latitudes and longitudes (db/geo.py) through this index, only the entities with coordinates,
-- so its cost follows the entities near the place, not the size of the dataset.

CREATE INDEX gb_entities_coordinates ON gb_entities (dataset_id, latitude, longitude)
    WHERE latitude IS NOT NULL;
