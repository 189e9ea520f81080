-- Entity resolution (SPEC section 5, step 5) matches a new entity to a stored one by its vector
-- only when their names could name one entity: one name is a short form of the other. Vectors
-- of `name (type): description` cannot tell apart two entities with the same type and a
-- generic description ("violin"/"cello", both "a musical instrument"; "Ines Hartmann"/"Aurelio
-- Hartmann", both "a journalist"): a match between them would rewrite the facts of one onto
-- the other, whereas an alias the guard refuses only leaves a second entity.

-- The words of a normalized name: ASCII punctuation separates words like a space does.
CREATE FUNCTION gb_name_words(normalized_name text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT array_remove(
        string_to_array(translate(normalized_name, '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', repeat(' ', 32)), ' '),
        ''
    )
$$;

-- Whether `short_form` could stand for `name` (both as gb_name_words): each of its words begins a
-- word of the name ("acme" / "acme robotics", "a chen" / "alice chen", "intl" / "intl business"),
-- or it is one word made of the initials of the name's words ("ibm").
CREATE FUNCTION gb_is_short_form(short_form text[], name text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT coalesce(bool_and(EXISTS (SELECT 1 FROM unnest(name) AS word WHERE starts_with(word, part))), true)
        OR (cardinality(short_form) = 1 AND cardinality(name) > 1
            AND short_form[1] = array_to_string(ARRAY(
                SELECT left(word, 1) FROM unnest(name) WITH ORDINALITY AS w(word, position) ORDER BY position
            ), ''))
    FROM unnest(short_form) AS part
$$;

-- Whether two normalized names could name one entity: either is a short form of the other.
-- "alice chen" / "alice park" cannot (each has a word the other lacks), nor "violin" / "cello".
CREATE FUNCTION gb_could_be_one_entity(name_a text, name_b text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT gb_is_short_form(gb_name_words(name_a), gb_name_words(name_b))
        OR gb_is_short_form(gb_name_words(name_b), gb_name_words(name_a))
$$;
